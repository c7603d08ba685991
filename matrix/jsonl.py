"""JSON Lines reading with precise error locations, and atomic writing."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import stat
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from matrix.errors import InputError

STDOUT = "-"  # an output path meaning standard output


def _gzipped(path: Path) -> bool:
    """Whether ``path`` is gzip data: by its suffix, or by its first bytes under another name."""
    if path.suffix == ".gz":
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def open_text(path: Path):
    """A tasks, codes or tests file as text (gzip by its suffix or its first bytes), a byte order
    mark read past: UTF-8's (Windows editors), or UTF-16's (PowerShell 5's ``>`` writes UTF-16),
    the text then read as UTF-16."""
    opener: Callable = gzip.open if _gzipped(path) else open
    encoding = "utf-8-sig"
    try:
        with opener(path, "rb") as fh:
            if fh.read(2) in (b"\xff\xfe", b"\xfe\xff"):
                encoding = "utf-16"
    except (OSError, EOFError, zlib.error):
        pass  # (the error again where the file is read)
    return opener(path, "rt", encoding=encoding)


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; 1-based line numbers.

    An object written over several lines (pretty-printed: ``jq . file.jsonl``,
    ``json.dumps(obj, indent=2)``) is read too, its line number the one it starts on: a line that is only
    ``{`` takes the lines after it up to one closing the object at column 0.

    Raises :class:`InputError` naming the file and line for unreadable files, malformed JSON
    and lines that are not JSON objects.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", file=str(path))
    with read_errors(path), open_text(p) as fh:
        lines = enumerate(fh, start=1)
        for lineno, raw in lines:
            if not raw.strip():
                continue
            if raw.startswith("\ufeff"):  # files joined with cat, the second one saved with a byte order mark
                raw = raw[1:]
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                if raw.strip() not in ("{", "["):  # (a pretty-printer opens an object on a line of its own)
                    raise _malformed(path, lineno, exc) from None
                obj = _multiline(path, lineno, raw, lines)  # pretty-printed: the object's other lines
            except RecursionError:
                raise InputError("malformed JSON (nested too deeply)", file=str(path), line=lineno) from None
            if not isinstance(obj, dict):
                raise InputError(f"expected a JSON object, got {type(obj).__name__}",
                                 file=str(path), line=lineno)
            yield lineno, obj


def _malformed(path, line: int, exc: json.JSONDecodeError) -> InputError:
    return InputError(f"malformed JSON ({exc.msg} at column {exc.colno})", file=str(path), line=line)


def _multiline(path, start: int, first: str, lines: Iterator[tuple[int, str]]) -> Any:
    """The JSON value that begins with line ``first`` (number ``start``) and goes on over the next
    of ``lines``: parsed at each line that opens with a closing bracket at column 0 (where a
    pretty-printer ends a top-level value) and at the end of the file; an error inside it names
    its own line."""
    parts = [first]
    last = start

    def parse() -> tuple[bool, Any]:
        """(parsed, value) of the lines so far; an error before their end is the file's error."""
        text = "".join(parts)
        try:
            return True, json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.pos < len(text.rstrip()):
                raise _malformed(path, start + text.count("\n", 0, exc.pos), exc) from None
            return False, exc.msg

    for n, raw in lines:
        last = n
        parts.append(raw)
        if raw[:1] in ("}", "]"):
            done, value = parse()
            if done:
                return value
    done, value = parse()
    if done:
        return value
    raise InputError(f"malformed JSON (an object not closed by the end of the file, line {last}: "
                     f"{value})", file=str(path), line=start)


def not_utf8(path: str | os.PathLike, opener: Callable | None = None) -> InputError:
    """The error for a file that is not UTF-8 text, naming the line of its first bad byte (read
    again in binary with ``opener``, by default :func:`open_text`'s choice: gzip by the suffix)."""
    import codecs

    p = Path(path)
    if opener is None:
        opener = gzip.open if _gzipped(p) else open
    dec = codecs.getincrementaldecoder("utf-8")()
    line = 1
    try:
        with opener(p, "rb") as fh:
            while chunk := fh.read(1 << 20):
                # the decoder's error positions count the bytes it kept from the last chunk too
                # (a character split across two reads)
                data = dec.getstate()[0] + chunk
                try:
                    dec.decode(chunk)
                except UnicodeDecodeError as exc:
                    line += data.count(b"\n", 0, max(0, exc.start))
                    return InputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x}: {exc.reason}; "
                                      "save the file as UTF-8)", file=str(path), line=line)
                line += chunk.count(b"\n")
    except (OSError, EOFError, zlib.error) as exc:
        return InputError(f"cannot read ({exc})", file=str(path))
    return InputError("not UTF-8 text", file=str(path))


@contextlib.contextmanager
def read_errors(path):
    """Reading ``path`` (text, maybe gzip): what goes wrong as one :class:`InputError` naming it."""
    try:
        yield
    except UnicodeDecodeError:
        raise not_utf8(path) from None
    except OSError as exc:  # (gzip.BadGzipFile too)
        raise InputError(f"cannot read ({exc.strerror or exc})", file=str(path)) from None
    except (EOFError, zlib.error) as exc:
        raise InputError(f"cannot read (a truncated or corrupt gzip file: {exc})", file=str(path)) from None


def current_umask() -> int:
    """The process's umask (from /proc where it is shown, so no other thread sees it change)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode(path: str | os.PathLike | None = None) -> int:
    """The mode a plain ``open(path, "w")`` leaves: an existing file's own, else 0666 less the umask."""
    if path is not None:
        try:
            return os.stat(path).st_mode & 0o7777
        except OSError:
            pass
    return 0o666 & ~current_umask()


def _write_atomic(path: str | os.PathLike, write: Callable[[TextIO], object]) -> None:
    """Run ``write(fh)`` on a temporary file beside ``path``, fsync, then ``os.replace``. The file
    gets the mode ``open(path, "w")`` would give it (``mkstemp`` alone makes it 0600).

    A symlink is written through (its target replaced, the link kept). An existing path that is
    no regular file (``/dev/null``, ``/dev/stdout``, a FIFO such as bash's ``>(gzip > m.gz)``) is
    written in place: replacing it would put a plain file where the device or pipe was (as root,
    ``--out /dev/null`` replaced the machine's /dev/null)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        with open(path, "w", encoding="utf-8") as fh:
            write(fh)
        return
    p = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.fchmod(fh.fileno(), new_file_mode(p))
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def json_line(row: Any) -> str:
    """One JSON line, UTF-8 text as it is; a string holding a lone surrogate (a program's error
    message can: ``ValueError('\\ud800')``) has no UTF-8 form, so that line is written with
    ``\\u`` escapes instead (a file of one run's results is never lost to one such string)."""
    text = json.dumps(row, ensure_ascii=False)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(row)
    return text + "\n"


def write_jsonl_atomic(path: str | os.PathLike, rows: Iterable[dict[str, Any]]) -> None:
    """Write rows to ``path`` through a temporary file and ``os.replace``: never half-written.
    ``path`` ``"-"`` is standard output (the rows are all computed before the first is written)."""
    if str(path) == STDOUT:
        lines = [json_line(row) for row in rows]
        sys.stdout.writelines(lines)
        sys.stdout.flush()
        return
    _write_atomic(path, lambda fh: fh.writelines(json_line(row) for row in rows))


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and ``os.replace``."""
    _write_atomic(path, lambda fh: fh.write(text))


def append_jsonl(path: str | os.PathLike, row: dict[str, Any]) -> None:
    """Append one line and fsync (used for logs that must survive ``kill -9``)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json_line(row))
        fh.flush()
        os.fsync(fh.fileno())
