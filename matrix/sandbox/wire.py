"""Length-prefixed messages on pipes, and the result-channel frames of :mod:`.records`."""

from __future__ import annotations

import os
import struct

from .records import FRAME_HEADER, TOKEN_BYTES, Frame

__all__ = ["LENGTH", "message_bytes", "write_message", "write_available", "write_within", "read_message", "FrameReader",
           "grow_pipe", "frame_bytes"]

LENGTH = struct.Struct("<I")


def stdin_bytes(text: str) -> bytes:
    """A stdin text as the program reads it: UTF-8, undecodable bytes (read as surrogates) given
    back; a lone surrogate that no byte stands for (``\\ud800`` in a tasks file) becomes ``?``
    instead of failing the whole task's cells with a harness traceback."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def message_bytes(data: bytes) -> memoryview:
    """``data`` as one message on the wire: its length, then the bytes (what :func:`read_message`
    reads back)."""
    return memoryview(LENGTH.pack(len(data)) + data)


def write_message(fd: int, data: bytes) -> None:
    view = message_bytes(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def write_available(fd: int, view: memoryview) -> memoryview:
    """Write what ``fd`` (a pipe, made non-blocking here) takes now and return the rest of
    ``view``; after an error other than a full pipe (no reader left) nothing is returned."""
    os.set_blocking(fd, False)
    try:
        while view:
            view = view[os.write(fd, view):]
    except BlockingIOError:
        pass
    except OSError:
        return view[len(view):]
    return view


def write_within(fd: int, view: memoryview, seconds: float) -> bool:
    """Write the rest of ``view`` as the reader drains the pipe, for at most ``seconds``; False
    when the reader went away or did not read in time."""
    import select
    import time

    deadline = time.monotonic() + seconds
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    while view:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        events = poller.poll(int(left * 1000) + 1)
        if any(ev & (select.POLLERR | select.POLLHUP) for _, ev in events):
            return False
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            continue
        except OSError:
            return False
    return True


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks = []
    while n:
        b = os.read(fd, min(n, 1 << 20))
        if not b:
            return None
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def read_message(fd: int) -> bytes | None:
    """One message (blocking); None at end of file."""
    head = _read_exact(fd, 4)
    if head is None:
        return None
    return _read_exact(fd, LENGTH.unpack(head)[0])


def grow_pipe(fd: int, size: int = 1 << 20) -> None:
    """Best-effort ``F_SETPIPE_SZ`` so that a whole unit or batch of frames fits."""
    import fcntl

    try:
        fcntl.fcntl(fd, 1031, size)  # F_SETPIPE_SZ
    except OSError:
        pass


def frame_bytes(token: bytes, kind: int, seconds: float, body: bytes) -> bytes:
    return FRAME_HEADER.pack(FRAME_HEADER.size - 4 + len(body), token, kind, seconds) + body


class FrameReader:
    """Frames of one process's result channel (non-blocking reads). Anything that is not a
    well-formed frame carrying the process's token makes the channel *corrupt*: every later
    frame is ignored and the cell concerned is a protocol error."""

    def __init__(self, fd: int, token: bytes, limit: int):
        self.fd = fd
        self.token = token
        self.limit = limit
        self.buf = bytearray()
        self.eof = False
        self.corrupt = False

    def fill(self) -> None:
        """Read what the pipe holds (stops at ``limit`` bytes buffered)."""
        if self.eof:
            return
        try:
            while len(self.buf) <= self.limit + 64:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    self.eof = True
                    return
                self.buf += chunk
        except BlockingIOError:
            pass
        except OSError:
            self.eof = True

    def frames(self):
        """Complete frames: (kind, seconds, body)."""
        out: list = []
        if self.corrupt:
            return out
        buf = self.buf
        hs = FRAME_HEADER.size
        header, kinds, token_ = FRAME_HEADER.unpack_from, _KINDS, self.token
        limit = self.limit
        at = 0  # frames are read at an offset and cut off the buffer once, at the end
        size = len(buf)
        while size - at >= 4:
            n = int.from_bytes(buf[at:at + 4], "little")
            if n < hs - 4 or n > limit:
                self.corrupt = True
                break
            if size - at < 4 + n:
                if size - at > limit + 64:
                    self.corrupt = True
                break
            _, token, kind, secs = header(buf, at)
            frame = kinds.get(kind)
            if token != token_ or frame is None:
                self.corrupt = True
                break
            if not 0.0 <= secs <= 1e6:  # NaN, negative or absurd: no time claimed
                secs = 0.0
            out.append((frame, secs, bytes(buf[at + hs:at + 4 + n])))
            at += 4 + n
        if at:
            del buf[:at]
        return out


_KINDS = {int(k): k for k in Frame}  # kind byte -> Frame (``Frame(kind)`` is a slower lookup)
assert TOKEN_BYTES == 8
