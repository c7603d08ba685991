"""The program process (mode ``serve``): loads the program and answers the test process's
requests on its objects."""

from __future__ import annotations

import builtins
import operator
import socket
import sys
import types
import typing

from .arrays import _array_data, _is_array
from .peer import (
    _MAX_KEPT,
    _MAX_KEPT_ITEMS,
    _MAX_LIVE_EXCEPTIONS,
    _MAX_RAISED_LIVE,
    FORWARDED_BUILTINS,
    MAX_SHARED,
    RPC_FD,
    RemoteError,
    _computing,
    _constant,
    _decimal_fields,
    _env_changes,
    _first_weekday,
    _own_computing,
    _Peer,
    _public_attrs,
    _Raised,
    _Raw,
    _same,
    exc_fingerprint,
    load_base,
    load_changes,
    process_state,
    random_state,
    random_wire,
    same_fingerprint,
    set_random_state,
    share_files,
    std_class_name,
    take_process,
)
from .shapes import _MAPS, _NODE_KINDS, _arg_nodes, _assign_in_place, _held_across
from .stand_ins import _BINOPS


class _Tee:
    """What the program prints on its standard streams during the test's requests, kept (up to the
    output cap, for the whole process) besides going to the real fds, and sent to the test process
    before each of the program process's messages (``["o", stream, text]``): a test that captures
    the output (``contextlib.redirect_stdout``, ``sys.stdout = io.StringIO()``) reads what the
    program printed, in order with its own prints and with those of its functions the program
    calls, as in ``exec(program); exec(test)`` (red-team pass 18: it read nothing)."""

    def __init__(self, cap: int):
        import codecs
        import io
        import os

        self.left = cap
        self.on = False  # (what loading prints is not forwarded: plain Python prints it before the
        # test could capture anything)
        self.pending: list[list] = []
        write = os.write
        tee = self

        class Raw(io.RawIOBase):
            def __init__(self, fd, name):
                super().__init__()
                self.fd, self.name_ = fd, name
                self.dec = codecs.getincrementaldecoder("utf-8")("replace")

            def writable(self):
                return True

            def fileno(self):
                return self.fd

            def write(self, b):
                n = write(self.fd, b)
                if tee.on and tee.left > 0 and n:
                    text = self.dec.decode(bytes(memoryview(b)[:min(n, tee.left)]))
                    tee.left -= n
                    if text:
                        tee.pending.append([self.name_, text])
                return n

        TextIO, Buffered = io.TextIOWrapper, io.BufferedWriter
        self.streams = (TextIO(Buffered(Raw(1, "out")), encoding="utf-8"),
                        TextIO(Buffered(Raw(2, "err")), encoding="utf-8", errors="backslashreplace",
                               line_buffering=True))

    def take(self, chunk: int) -> list:
        """The ``["o", stream, text]`` messages of what was printed since the last call (each
        within ``chunk`` characters)."""
        for stream in self.streams:
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - a stream the program closed: nothing to send
                pass
        out: list[list] = []
        for name, text in self.pending:
            for i in range(0, len(text), chunk):
                if out and out[-1][1] == name and len(out[-1][2]) + len(text[i:i + chunk]) <= chunk:
                    out[-1][2] += text[i:i + chunk]
                else:
                    out.append(["o", name, text[i:i + chunk]])
        self.pending.clear()
        return out


class _TestStdin:
    """The program's ``sys.stdin`` (and, as ``.buffer``, its bytes) while it serves a test: the
    test's standard input, read in the test process (``sys.stdin = io.StringIO('2\\n3\\n')``,
    ``mock.patch('sys.stdin', ...)``), as in ``exec(program); exec(test)``, one interpreter with
    one ``sys.stdin`` (red-team pass 19: every right program reading its input raised EOFError
    on its own, empty, stdin, while a wrong one returning a constant passed)."""

    encoding, errors, newlines, name, mode, closed = "utf-8", "strict", None, "<stdin>", "r", False

    def __init__(self, server, binary=False, own=None):
        self._server, self._binary, self._own = server, binary, own

    def __getattr__(self, name):  # the rest (``fileno``...) is the process's own stream's
        own = self.__dict__.get("_own")
        if own is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(own.buffer if self._binary else own, name)

    def _ask(self, what, size):
        if type(size) is not int:
            size = -1 if size is None else int(size.__index__())
        return self._server.request("stdin", what, size, self._binary)

    def read(self, size=-1):
        return self._ask("read", size)

    def readline(self, size=-1):
        return self._ask("readline", size)

    def readlines(self, hint=-1):
        return self._ask("readlines", hint)

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    @property
    def buffer(self):
        return _TestStdin(self._server, True, self._own)

    def isatty(self):
        return False

    def readable(self):
        return True

    def close(self):
        return None


def _read_the_tests_input(server) -> None:
    """From the program's loading on: its ``input()`` is the test's (the builtin, or the test's
    ``mock.patch('builtins.input', ...)``) and its ``sys.stdin`` the test's (:class:`_TestStdin`);
    what loading read was the process's own, as plain Python reads it before the test runs."""
    def test_input(*prompt):
        if len(prompt) > 1:
            raise TypeError(f"input expected at most 1 argument, got {len(prompt)}")
        for stream in server.tee.streams if server.tee is not None else ():
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - a stream the program closed
                pass
        return server.request("stdin", "input", str(prompt[0]) if prompt else None, False)

    builtins.input = test_input
    _HARNESS_BUILTINS["input"] = test_input
    sys.stdin = _TestStdin(server, own=sys.stdin)


def _warn_through_test(server) -> None:
    """The program's ``warnings.warn`` (also as ``from warnings import warn``, bound at loading):
    once loaded, a warning it gives in the process's main thread goes to the test's ``warnings``
    (a ``["q", "warn", text, category, file, line]`` request), whose filters show, record
    (``pytest.warns``, ``catch_warnings(record=True)``) or raise it (``simplefilter('error')``:
    raised inside the program's call), as one interpreter's ``warnings`` module does (red-team
    pass 19: the test saw none, and every right program that warns failed such tests). What
    loading warns, and other threads, stay the process's own."""
    import _thread
    import warnings

    original, main = warnings.warn, _thread.get_ident()

    def warn(message, category=None, stacklevel=1, source=None, **kwargs):
        if server.tee is None or not server.tee.on or _thread.get_ident() != main:
            return original(message, category, stacklevel + 1, source, **kwargs)
        if isinstance(message, Warning):
            category, text = type(message), str(message)
        else:
            category, text = (UserWarning if category is None else category), str(message)
        if not (isinstance(category, type) and issubclass(category, Warning)):
            raise TypeError(f"category must be a Warning subclass, not '{type(category).__name__}'")
        try:
            frame = sys._getframe(max(1, int(stacklevel)))
            where, line = str(frame.f_code.co_filename), int(frame.f_lineno)
        except (ValueError, TypeError, OverflowError):
            where, line = "sys", 1
        server.request("warn", text, category, where, line)

    warnings.warn = warn
    _accept(warnings, "warn")


def _log_through_test(server) -> None:
    """Once the program is loaded, what it logs in the process's main thread goes to the test's
    ``logging``: every level is let through here (``Logger.isEnabledFor``), and each record, its
    message formatted and its exception as text, is a ``["q", "log", ...]`` request handed to the
    test's logger of that name, whose levels and handlers decide (``assertLogs``, a handler the
    test adds), as one interpreter's ``logging`` tree does (red-team pass 19: the test saw none,
    and every right program that logs failed such tests). The program's own handlers still get
    the records its own levels let through. Only where the test's text names ``logging``,
    ``assertLogs`` or ``assertNoLogs`` (a ``logging`` request turns it on): a program logging
    in a loop costs a message a record there, nothing elsewhere."""
    import _thread

    main = _thread.get_ident()

    def install(logging) -> None:
        enabled, call = logging.Logger.isEnabledFor, logging.Logger.callHandlers
        formatter = logging.Formatter()

        def on() -> bool:
            return server.log_on and server.tee is not None and server.tee.on and _thread.get_ident() == main

        def is_enabled_for(self, level):
            return True if on() else enabled(self, level)

        def call_handlers(self, record):
            if not on():
                return call(self, record)
            try:
                text = record.getMessage()
                exc = formatter.formatException(record.exc_info) if record.exc_info else record.exc_text
            except Exception:  # noqa: BLE001 - as logging itself would: the record is reported broken
                return call(self, record)
            server.request("log", str(record.name)[:200], int(record.levelno), str(record.levelname)[:50], text,
                           exc if type(exc) is str else None, str(record.funcName)[:200], int(record.lineno or 0))
            if enabled(self, record.levelno):
                c, own = self, False
                while c is not None and not own:
                    own = bool(c.handlers)
                    c = c.parent if c.propagate else None
                if own:  # (its own handlers: without any, logging's last resort would print it again)
                    call(self, record)

        logging.Logger.isEnabledFor = is_enabled_for
        logging.Logger.callHandlers = call_handlers
        _accept(logging.Logger, "isEnabledFor")
        _accept(logging.Logger, "callHandlers")

    if "logging" in sys.modules:
        install(sys.modules["logging"])
        return
    import builtins as _b

    real_import = _b.__import__

    def watching_import(name, *args, **kwargs):  # (install once logging is first imported)
        module = real_import(name, *args, **kwargs)
        if "logging" in sys.modules and _b.__import__ is watching_import:
            _b.__import__ = real_import
            install(sys.modules["logging"])
        return module

    _b.__import__ = watching_import
    _HARNESS_BUILTINS["__import__"] = watching_import


_HARNESS_BUILTINS: dict = {}  # builtins this process's harness replaced (the stdin stand-in's input)


class _Server(_Peer):
    """The program process: answers the test process's requests on its objects."""

    def __init__(self, sock, ns, max_msg, budget):
        super().__init__(sock, "C", max_msg, budget)
        self.ns = ns
        self.tee: _Tee | None = None
        # the program's globals the test reads (their objects as the test last had them): one
        # the program binds anew is sent again before the program's next message, as in plain
        # Python, where the test reads the one module's globals as they are now (red-team pass 18)
        self.watched: dict[str, object] = {}
        # (the decimal context and the calendar's first weekday as the test last had them, where the
        # program's text names decimal or calendar: one a call moves is sent before its next message)
        self.state_sent: tuple | None = None
        # (the recursion limit as the program sees it, as the test last had it: one a call or the
        # load sets is sent before the program's next message, as in one interpreter: red-team pass 33)
        self.limit_sent = sys.getrecursionlimit()
        self.follow_env = False  # (its text names the environment or the command line: followed too)
        # containers of the test's a call's arguments held that the program kept after the call
        # (``self.xs = xs``): [object, its contents as last synced], numbered as the test has them
        self.kept: list[list] = []
        self.kept_ids: dict[int, int] = {}
        self.log_on = False  # (the test asked for the program's log records: :func:`_log_through_test`)
        self.test_set: set[tuple[int, str]] = set()  # (module or class, attribute) the test set or deleted
        self.given: set = set()  # the standard modules of this process the test reads (_check_given)
        self.builtins_set: set[str] = set()  # builtins the test replaced here (op "builtins")
        self.setup_bound: dict = {}  # what the task's setup bound: the test reads it as bound (run_setup)
        self.setup_kept: list = []  # the setup's namespace and builtins as it left them (_check_given)
        # the globals the setup's own functions rebind (``global calls; calls += 1``) and the
        # setup's namespace they live in: the test reads them as they are now (review 22 M3)
        self.setup_live: frozenset = frozenset()
        self.setup_own: dict = {}
        # whether code of the program's may have run since the last check (:meth:`_check_given`):
        # every request but reading a standard module's attribute can run it
        self.ran = True
        # the tables and objects of the modules that compute from their arguments, as loaded
        # (:func:`computing_state`, taken before the program runs)
        self.state: dict = {}
        self.caches: list = []  # (:func:`computing_state`)
        self.coroutines: dict[int, tuple] = {}  # (coroutines the test awaits: :meth:`_await`)
        self.raised_live = 0  # (exceptions raised by calls that are followed: :meth:`_raised_ref`)

    def export(self, obj) -> dict:
        """:meth:`_Peer.export`, and a standard module as the zygote loaded it flagged
        ``module:<name>``: the test's own module of that name where the test imports it itself
        (``import math; assert f() is math``; red-team pass 33)."""
        ref = super().export(obj)
        if type(obj) is type(sys) and _unchanged_module(obj):
            ref["R"][3].append("module:" + str(obj.__name__)[:200])
        return ref

    def _module_read(self, module, name) -> None:
        """The test reads ``module.name`` of a standard module the program gave it: the module (and
        a standard submodule read so, ``os.path``) joins those checked (:meth:`_check_given`); a
        program that patched ``re.sub`` (after its name was resolved, or in the call the test
        made) would compute the test's expected value (review 21)."""
        from .. import harness

        dicts = harness._G["stdlib_dicts"]
        kept = dicts.get(getattr(module, "__name__", None))
        if kept is None or kept[0] is not module:
            return
        self.given.add(module)
        now = vars(module).get(name, _MISSING)
        if type(now) is type(sys) and dicts.get(getattr(now, "__name__", None), (None,))[0] is now:
            self.given.add(now)  # (`os.path`: its functions are read next)
        self._check_given()

    def _check_given(self) -> None:
        """The standard modules the test was handed from this process (with their classes and
        own submodules) behave as the zygote loaded them, but for what the test or the harness
        set: else the test's verdict is an error, caught or not. Checked where the test reads one
        of them and before each call it makes here: a program that patched ``re.sub``,
        ``Counter.most_common``, ``statistics._sum`` or ``json._default_decoder`` (at load or
        inside its call) would compute what the test computes with the module (red-team pass
        20). Behaviour only (:func:`.harness.replaced`): data the standard library fills itself on first
        use (``base64``'s tables, ``posixpath``'s pattern, asyncio's policy, ``time.tzname``, a
        class's counter) is no change of the program's (review 22: each made every right program
        an error)."""
        from .. import harness

        G = harness._G
        if not self.ran and not G["threads"]():  # (no program code ran since the last check: review 22 M4)
            return
        if self.given:  # (the builtins their functions call: `builtins.sorted = ...` in this process)
            now = vars(builtins)
            for k, x in G["genuine"].items():
                v = now.get(k, _MISSING)
                if v is not x and v is not _HARNESS_BUILTINS.get(k, x) and k != "math" and k not in self.builtins_set:
                    why = f"the program changed builtins.{k}"
                    _Peer.send(self, ["o", "changed", why])  # (an error, caught or not)
                    raise RemoteError(why)
        for module in self.given:
            computing = _computing(getattr(module, "__name__", None))
            changed = harness.module_change(module, _computing_rule if computing else harness.replaced, self.test_set)
            if changed is None and computing:
                changed = _state_change(module, self.state)
            if changed is not None:
                why = f"the program changed {changed}"
                _Peer.send(self, ["o", "changed", why])  # (the test's verdict: an error, caught or not)
                raise RemoteError(why)
        self.ran = False

    def send(self, msg, *args, **kwargs) -> None:
        """Each message, after what the program printed before it (:class:`_Tee`) and the state of
        the ``random`` module's generator where the program moved it (:meth:`_Peer.push_random`)."""
        if self.exc_live and not self.exc_syncing and type(msg) is list and msg and msg[0] in ("r", "x", "q"):
            self.push_exceptions()
        if self.tee is not None and self.tee.on:
            for out in self.tee.take(max(1, self.max_msg // 16)):
                super().send(out)
            state = random_state() if self.random_on else None
            if state is not None and state != self.random_state:
                self.random_state = state
                super().send(["o", "random", random_wire(state)])
            if self.state_sent is not None:
                self._push_state()
            limit = sys.getrecursionlimit()
            if limit != self.limit_sent:  # (``sys.setrecursionlimit(50)`` in a call: the test reads 50)
                self.limit_sent = limit
                super().send(["o", "limit", limit])
            for name, was in list(self.watched.items()):
                now = (self.setup_own if name in self.setup_live else self.ns).get(name, _MISSING)
                if now is not was:  # (``calls += 1``, ``log = []``; ``del K`` and a new global too:
                    # red-team pass 33, the test read a deleted ``K`` as it was, and a new one not at all)
                    self.watched[name] = now
                    if now is _MISSING:
                        super().send(["o", "global", name, None, "del"])
                        continue
                    k = self.keep_value(now, held=2)
                    super().send(["o", "global", name, self.to_wire(now), k])
        super().send(msg, *args, **kwargs)

    def push_exceptions(self) -> None:
        """The exceptions this process returned to the test (:meth:`_Peer.export`) that changed since
        last sent (``e.code += 1``, ``e.args = ...``, a note, an ``args`` property or ``__str__`` over
        state that moved, its traceback), each ``["o", "exc", number, description, traceback]``
        before the next reply or request: the test holds them as its own exceptions, which follow
        these objects (review 34, H1: a copy made once, and a test asserting the old state passed)."""
        self.exc_syncing = True
        try:
            for eid, was in list(self.exc_live.items()):
                obj = self.exports.get(eid)
                fp = exc_fingerprint(obj)
                if fp is not None and same_fingerprint(fp, was[3]):
                    continue  # (the same objects: the same description)
                desc = self.describe_exception(obj)
                tb = BaseException.__dict__["__traceback__"].__get__(obj) is not None
                attrs = _public_attrs(obj)
                rebound = [k for k, v in attrs.items() if k in was[2] and was[2][k] is not v]
                if desc != was[0] or tb != was[1] or rebound:
                    self.exc_live[eid] = [desc, tb, attrs, fp]
                    _Peer.send(self, ["o", "exc", eid, desc, tb, rebound])
                else:
                    was[3] = fp
        finally:
            self.exc_syncing = False

    def _raised_ref(self, exc) -> int | None:
        if not isinstance(exc, BaseException) or isinstance(exc, RemoteError):
            return None
        eid = self.export_ids.get(id(exc))
        if eid is not None and self.exports.get(eid) is exc:
            return eid if eid in self.exc_live else None
        if self.raised_live >= _MAX_RAISED_LIVE or len(self.exc_live) >= _MAX_LIVE_EXCEPTIONS:
            return None
        self.raised_live += 1
        eid = self.export(exc)["R"][1]
        return eid if type(eid) is int and eid in self.exc_live else None

    def _await(self, coro, how):
        """The test awaits a coroutine of this process's (:func:`.peer._program_coroutine`): run it as
        a task of an event loop of its own here for a slice of at most 10 ms (``"step"``), or cancel
        it (``"cancel"``): ``["done", its value]`` (its exception raised) or ``["pending"]``, the
        test's event loop running its own tasks and timers between slices (red-team pass 36: run to its
        end at once, a program sleeping past the test's ``asyncio.wait_for`` timeout passed it)."""
        import asyncio

        if type(coro) is not types.CoroutineType or how not in ("step", "cancel"):
            raise TypeError("a coroutine was expected")
        run = self.coroutines.get(id(coro))
        if run is None or run[0] is not coro:
            if how == "cancel":
                return ["cancelled"]
            if len(self.coroutines) >= 64:
                raise RuntimeError("too many coroutines awaited at once")
            loop = asyncio.new_event_loop()
            run = self.coroutines[id(coro)] = (coro, loop, loop.create_task(coro))
        _, loop, task = run
        if how == "cancel":
            task.cancel()
        loop.run_until_complete(asyncio.wait([task], timeout=None if how == "cancel" else 0.01))
        if not task.done():
            return ["pending"]
        del self.coroutines[id(coro)]
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
        return ["done", task.result()]

    def _take_exceptions(self, changes) -> None:
        """``excset``: the test's changes to exceptions of this process's it holds, made to them as
        the test's own statements would (``setattr``, ``delattr``; a container attribute changed in
        place, one object); sent back where the program's class made something else of them."""
        get = BaseException.__dict__
        for item in (changes if type(changes) is list else [])[:_MAX_KEPT]:
            if type(item) is not list or len(item) != 3 or type(item[0]) is not int or item[0] not in self.exc_live:
                continue
            rebound = item[2] if type(item[2]) is list else []
            exc: typing.Any = self.exports[item[0]]
            state = item[1]
            if type(state) is not list or len(state) != 3:
                continue
            args, attrs, notes = state
            if type(args) is tuple and args != get["args"].__get__(exc):
                exc.args = args
            d = get["__dict__"].__get__(exc)
            if type(attrs) is dict:
                for k in [k for k in d if type(k) is str and not k.startswith("_") and k not in attrs]:
                    delattr(exc, k)
                for k, v in attrs.items():
                    if type(k) is not str or k.startswith("_"):
                        continue
                    was = d.get(k, _MISSING)
                    if was is v:
                        continue
                    if type(was) in _NODE_KINDS and type(was) is type(v) and k not in rebound:
                        _assign_in_place(was, v)
                    elif was is _MISSING or was != v or type(was) is not type(v):
                        setattr(exc, k, v)
            if notes is None:
                d.pop("__notes__", None)
            elif type(notes) is list and notes != d.get("__notes__"):
                d["__notes__"] = notes
            self.exc_live[item[0]][2] = _public_attrs(exc)  # (the test's bindings: none of the program's)
            self.exc_live[item[0]][3] = None  # (described again before the next message)

    def _push_state(self) -> None:
        """The decimal context or first weekday a call of the program's moved (``getcontext().prec =
        3`` inside ``f``, not at load: :func:`load_changes`), and the environment or command line
        (where the program's text names them), sent as the load's are: in one interpreter the test
        reads them as the call left them (red-team pass 30: ``os.environ['X'] = '1'`` in ``f``,
        then the test's ``'X' not in os.environ`` passed)."""
        was = self.state_sent
        now = self._call_state()
        if was is None or now == was:
            return
        self.state_sent = now
        d = now[0] if now[0] is not None and now[0] != was[0] else None
        c = now[1] if now[1] is not None and now[1] != was[1] else None
        env = _env_changes(was[2], now[2]) if now[2] is not None and was[2] is not None and now[2] != was[2] else None
        argv = now[3] if now[3] is not None and now[3] != was[3] else None
        if d is not None or c is not None or env or argv is not None:
            _Peer.send(self, ["o", "state", [d, c, [[k, v] for k, v in env.items()] if env else None, argv]])

    def _call_state(self) -> tuple:
        """:meth:`_push_state`'s state of this process: ``(decimal context, first weekday,
        environment, command line)``, the last two None unless followed (``follow_env``)."""
        if not self.follow_env:
            return _decimal_fields(), _first_weekday(), None, None
        import os

        env = {k: v for k, v in os.environ.items() if type(k) is str and type(v) is str}
        argv = [a for a in sys.argv if type(a) is str] if type(sys.argv) is list else None
        return _decimal_fields(), _first_weekday(), env, argv

    def _keep(self, nodes, refs) -> list:
        """``["K", n, k]`` for each container ``n`` of a call's arguments that the program still
        holds after the call (more references to it than before: ``self.xs = xs``), now kept
        container ``k``: its later changes, the program's and the test's, are made on the other
        side too (red-team pass 17: a Bag keeping the caller's list changed a copy of it)."""
        out = []
        items = sum(len(e[0]) for e in self.kept)
        for n, x in enumerate(nodes[:len(refs)]):  # (not those it read from the test's objects)
            if x is None or type(x) not in _NODE_KINDS or id(x) in self.kept_ids or _refs(nodes, n) <= refs[n]:
                continue
            if len(self.kept) >= _MAX_KEPT or items + len(x) > _MAX_KEPT_ITEMS:
                break
            k = len(self.kept)
            self.kept.append([x, self._kept_contents(x)])
            self.kept_ids[id(x)] = k
            items += len(x)
            out.append(["K", n, k])
        return out

    def keep_value(self, value, held=1):
        """The kept number of a container the program holds (more references to it than the
        ``held`` ones of the request being served: an attribute, an item, its own state a method
        returns), registered now where it is new; None for a fresh one or past the bounds."""
        if type(value) not in _NODE_KINDS:
            return None
        k = self.kept_ids.get(id(value))
        if k is not None:
            return k if self.kept[k][1] is not None else None
        if _count_refs(value) <= held + 1 or len(self.kept) >= _MAX_KEPT or len(value) > _MAX_KEPT_ITEMS \
                or sum(len(e[0]) for e in self.kept) + len(value) > _MAX_KEPT_ITEMS:
            return None
        k = len(self.kept)
        self.kept.append([value, self._kept_contents(value)])
        self.kept_ids[id(value)] = k
        return k

    def _kept_contents(self, x):
        return self._contents(x, {id(x): -1})

    def sync_kept(self) -> None:
        changes = []
        for k, entry in enumerate(self.kept):
            if entry[1] is None:
                continue
            if len(entry[0]) > _MAX_KEPT_ITEMS:  # grown past the bound: no longer followed
                entry[1] = None
                continue
            now = self._kept_contents(entry[0])
            if now != entry[1]:
                entry[1] = now
                changes.append([k, now])
        if changes:
            self.request("kept", _Raw(changes))

    def _contents(self, node, marks):
        """A container of a call's arguments, its contents encoded, the containers of the call's
        in it as marks (its own mark aside)."""
        if _is_array(type(node)):
            return self.to_wire(node)  # (a reference with the array's data: an array of the test's)
        own = marks.pop(id(node))
        try:
            enc = self.encode(node, marked=marks)
        finally:
            marks[id(node)] = own
        if not (type(enc) is dict and "N" in enc):
            return enc
        t = type(node)
        if t is bytearray:
            return enc
        if t in _MAPS:
            return {"d": [[self.to_wire(k, 1, marks), self.to_wire(v, 1, marks)] for k, v in node.items()]}
        items = [self.to_wire(x, 1, marks) for x in node]
        return items if t is list else {"s" if t is set else "q": items}

    def _root(self, arg, marks):
        """An argument's contents where it is not one of the call's containers followed (a numpy
        array, a container past :class:`_Shape`'s bounds), encoded; None for other arguments."""
        if id(arg) in marks:
            return None
        if type(arg) in _NODE_KINDS:
            return self.encode(arg)
        return _array_data(arg, self.encode_flat)

    def _changes(self, nodes, before, roots, marks) -> list:
        """The changes a call made to the containers of its arguments (``["N", n, contents]``) and
        to numpy arrays or containers past the bounds (``[where, new value]``), encoded."""
        changes = []
        for n, (x, b) in enumerate(zip(nodes, before)):
            if x is not None:
                now = self._contents(x, marks)
                if now != b:
                    changes.append(["N", n, now])
        for where, a, b in roots:  # a numpy array changed in place, or a container past the bounds
            if b is not None and self._root(a, marks) != b:
                changes.append([where, self.to_wire(a)])
        return changes

    def _one_reply(self, result, changes, nodes, marks):
        """A call's reply value, encoded, and its ``changes`` with the new contents of the
        arguments it changed encoded again where a container is held by more than one of them
        (red-team pass 28: ``r = [0]; xs.append(r); return r`` gave the test two lists, and the
        grouping ``return d.setdefault(k, [])`` a list apart from ``d[k]``): one object on the
        test's side, ``{"S": ...}`` where the message first holds it, ``{"A": ...}`` after (the
        value comes first in the message, then the changes in order)."""
        changed = [c[1] for c in changes if type(c) is list and len(c) == 3 and c[0] == "N"]
        across = _held_across([result] + [nodes[n] for n in changed], marks) if changed else None
        self.view_nodes = nodes  # (a view of one of them returned: that view, :meth:`_Peer._view_mark`)
        try:
            if not across:
                return _Raw(self.to_wire(result, marks=marks)), changes
            self.share_across(across)
            try:
                value = _Raw(self.to_wire(result, marks=marks))
                return value, [["N", c[1], self._contents(nodes[c[1]], marks)]
                               if type(c) is list and len(c) == 3 and c[0] == "N" else c for c in changes]
            finally:
                self.share_across(None)
        finally:
            self.view_nodes = None

    def _shared_global(self, name, new: bool = False) -> bool:
        """Whether ``name`` is a global of the program's (not the task setup's) that a binding of
        the test's at its top level rebinds, as in one namespace (red-team pass 29, R4: the test's
        ``K = 5`` left the program's ``K`` as it was); with ``new``, one it may bind that it does
        not have yet (``solution.K = 5``)."""
        return type(name) is str and name[:2] != "__" and (new or name in self.ns) and name not in self.setup_bound \
            and name not in self.setup_live

    def handle(self, op, args):
        import operator

        if op not in ("resolve", "stdlib_class") and not (op == "getattr" and args and type(args[0]) is type(sys)
                                                         and args[0] in self.given):
            self.ran = True
        if op == "resolve":
            out = []
            for name in args[0]:
                if type(name) is not str:
                    out.append(None)
                elif name in self.setup_bound:  # (not the program's rebinding: `global want` in its call)
                    out.append(["value", self.setup_bound[name]])  # (a copy, as the test starts: not
                    # the program's later change in place, `want.clear()`)
                elif name in self.setup_live and name in self.setup_own:
                    v = self.watched[name] = self.setup_own[name]
                    k = self.keep_value(v, held=2)
                    out.append(["value", v] if k is None else ["kept", v, k])
                elif name in self.ns and name != "__builtins__":
                    v = self.ns[name]
                    if getattr(builtins, name, _MISSING) is v:
                        out.append(["builtin"])
                        continue
                    if _unchanged_module(v):
                        out.append(["module", v, v.__name__])  # the standard module itself (``import time``): the
                        continue  # test reads the program's, as in one interpreter (its patches reach it)
                    self.watched[name] = v
                    k = self.keep_value(v, held=2)
                    out.append(["value", v] if k is None else ["kept", v, k])
                elif hasattr(builtins, name):
                    out.append(["builtin"])
                else:
                    if name[:2] != "__" and name not in self.setup_live and len(self.watched) < MAX_SHARED:
                        self.watched[name] = _MISSING  # (a global a call of the program's creates: the
                        # test reads it from then on, as in one module; red-team pass 33)
                    out.append(None)
            if len(args) > 1 and type(args[1]) is list:  # (the names the test binds at its top level:
                # which are globals of the program's, that the test's binding rebinds, op "setglobal")
                out.append([self._shared_global(n) for n in args[1][:MAX_SHARED]])
            return out, None
        obj = args[0] if args else None
        if op == "setglobal":  # the test bound (or deleted) a global of the program's: one namespace
            how = args[1] if len(args) > 1 else None
            if how not in ("set", "del", "new") or not self._shared_global(obj, how == "new"):
                return False, None
            if how == "del":
                self.ns.pop(obj, None)
                self.watched.pop(obj, None)
            else:
                self.ns[obj] = args[2] if len(args) > 2 else None
                if obj in self.watched:  # (the test's own binding: not sent back to it as the program's)
                    self.watched[obj] = self.ns[obj]
            return True, None
        if op == "call":
            from .. import harness

            call_args = args[1] if len(args) > 1 and type(args[1]) is list else []
            kwargs = args[2] if len(args) > 2 and type(args[2]) is dict else {}
            entries = args[3] if len(args) > 3 and type(args[3]) is list else []
            nodes = _arg_nodes(call_args, kwargs, entries)
            marks = {id(x): n for n, x in enumerate(nodes) if x is not None}
            before = [self._contents(x, marks) if x is not None else None for x in nodes]
            roots = [(i, a, self._root(a, marks)) for i, a in enumerate(call_args)] + \
                [(k, a, self._root(a, marks)) for k, a in kwargs.items()]
            self.pending.append((nodes, marks, before))  # (the containers it reads from the test's objects join)
            refs = [_refs(nodes, n) if x is not None else 0 for n, x in enumerate(nodes)]
            if self.given:
                self._check_given()
            if self.setup_kept and harness.setup_changed(self.setup_kept):
                why = "the program changed the task's setup"
                _Peer.send(self, ["o", "changed", why])  # (an error, caught or not)
                raise RemoteError(why)
            if self.caches and _own_computing(obj) is not None:  # (a standard function, computing here)
                _empty_caches(self.caches)
            frames = args[4] if len(args) > 4 and type(args[4]) is int and 0 <= args[4] <= 2000 else 0
            _room(-3 - frames)  # (a function the test calls, as in ``exec(program); exec(test)``, under
            # the test's own functions' frames)
            try:
                result = obj(*call_args, **kwargs)
            except RemoteError:
                raise
            except BaseException as exc:  # what it changed before it raised stays changed, as in Python
                changes = self._changes(nodes, before, roots, marks) + self._keep(nodes, refs)
                if changes:
                    raise _Raised(exc, self._one_reply(None, changes, nodes, marks)[1]) from None
                raise
            finally:
                self.pending.pop()
                self.ran = True  # (the program's code ran after the check above: the test's next read
                # of a standard module checks again; red-team pass 22, `string.digits` read, `f(5)`
                # changing `string.ascii_lowercase`, then read)
            changes = self._changes(nodes, before, roots, marks) + self._keep(nodes, refs)
            if id(result) not in marks:  # its own state a method returns (``return self.items``)
                k = self.keep_value(result)
                if k is not None:
                    changes.append(["K", "v", k])
            value, changes = self._one_reply(result, changes, nodes, marks)
            return value, changes or None
        if op == "recursionlimit":  # the test set the interpreter's recursion limit
            from .. import harness

            if type(obj) is not int or not 1 <= obj <= 1 << 24:
                raise ValueError("malformed recursion limit")
            sys.setrecursionlimit(max(obj, 64))  # (room for this request's own frames)
            harness._G["recursion"] = obj  # (the base each call's room is measured from)
            harness._G.pop("room_set", None)
            self.limit_sent = sys.getrecursionlimit()  # (the test's own: not sent back to it)
            return None, None
        if op == "stdset":  # the test set a standard module's attribute of its own (``mock.patch('time.time')``)
            from .. import harness

            name, how = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else None)
            kept = harness._G["stdlib_dicts"].get(obj) if type(obj) is str else None
            if kept is None or type(name) is not str or how not in ("set", "del", "own"):
                raise ValueError("malformed module change")
            module = kept[0]
            self.test_set.add((id(module), name))
            if how == "set":
                setattr(module, name, args[3] if len(args) > 3 else None)
            elif how == "own" and name in kept[1]:
                setattr(module, name, kept[1][name])
            elif name in vars(module):
                delattr(module, name)
            return None, None
        if op == "builtins":  # builtins the test replaced (``mock.patch('builtins.open', ...)``) or put back
            from .. import harness

            genuine = harness._G["genuine"]
            for name, v in (obj.items() if type(obj) is dict else ()):
                if type(name) is str and name in FORWARDED_BUILTINS:
                    self.builtins_set.add(name)
                    setattr(builtins, name, genuine[name] if v is None else v)
            return None, None
        if op == "logging":  # the test may read what the program logs (:func:`_log_through_test`)
            self.log_on = True
            return None, None
        if op == "process":  # the test changed the environment, directory or command line
            if self.process_base is None:
                self.process_base = process_state()
            take_process(self.process_base, obj)
            if self.state_sent is not None:  # (the test's own changes: none of the program's)
                self.state_sent = self._call_state()
            return None, None
        if op == "random":  # the test moved the generator they share (``random.seed(0)``)
            if not set_random_state(obj):
                raise ValueError("malformed generator state")
            self.random_state = random_state()
            self.random_on = True
            return None, None
        if op == "await":  # a slice of the test's await of a coroutine of the program's (:meth:`_await`)
            return self._await(obj, args[1] if len(args) > 1 else None), None
        if op == "excset":  # the test's changes to exceptions of the program's it holds
            self._take_exceptions(obj)
            return None, None
        if op == "kept":  # the test's changes to containers the program keeps
            for item in (obj if type(obj) is list else [])[:_MAX_KEPT]:
                if type(item) is list and len(item) == 2 and type(item[0]) is int \
                        and 0 <= item[0] < len(self.kept) and self.kept[item[0]][1] is not None:
                    entry = self.kept[item[0]]
                    _assign_in_place(entry[0], item[1])
                    entry[1] = self._kept_contents(entry[0])
            return None, None
        if op == "getattr":
            if type(obj) is type(sys):
                self._module_read(obj, args[1])
            return getattr(obj, args[1]), None
        if op == "setattr":
            if type(obj) is type(sys) or isinstance(obj, type):  # (the test's own patch, ``time.time = ...``)
                self.test_set.add((id(obj), args[1]))
            setattr(obj, args[1], args[2])
            return None, None
        if op == "delattr":
            if type(obj) is type(sys) or isinstance(obj, type):
                self.test_set.add((id(obj), args[1]))
            delattr(obj, args[1])
            return None, None
        if op == "getitem":
            return obj[args[1]], None
        if op == "setitem":
            obj[args[1]] = args[2]
            return None, None
        if op == "delitem":
            del obj[args[1]]
            return None, None
        if op == "len":
            return len(obj), None
        if op == "bool":
            return bool(obj), None
        if op == "iter":
            return iter(obj), None
        if op == "next":
            return next(obj), None
        if op == "contains":
            return args[1] in obj, None
        if op == "str":
            return str(obj), None
        if op == "repr":
            return repr(obj), None
        if op == "format":
            return format(obj, args[1]), None
        if op == "int":
            return int(obj), None
        if op == "index":
            return operator.index(obj), None
        if op == "float":
            return float(obj), None
        if op == "hash":
            return hash(obj), None
        if op == "plain":  # the plain value a reference flagged "plain" compares by, as it is now
            return _Raw(self.encode_flat(obj)), None
        if op == "isinstance":
            return isinstance(args[1], obj), None
        if op == "stdlib_class":  # (isinstance of a test's value: :func:`.stand_ins._own_class`)
            return std_class_name(obj), None
        if op == "issubclass":
            return issubclass(args[1], obj), None
        if op in ("binop", "rbinop"):
            name, other = args[1], args[2]
            fn = {"eq": operator.eq, "ne": operator.ne, "and": operator.and_, "or": operator.or_,
                  "divmod": divmod}.get(name) or getattr(operator, name, None)
            if fn is None or (name not in _BINOPS | {"eq", "ne", "divmod"}
                              and not (op == "binop" and name[1:] in _BINOPS and name[0] == "i")):
                raise TypeError(f"unsupported operation {name!r}")
            return (fn(obj, other) if op == "binop" else fn(other, obj)), None
        if op == "unop":
            import math

            fn = {"neg": operator.neg, "abs": abs, "pos": operator.pos, "invert": operator.invert,
                  "trunc": math.trunc, "floor": math.floor, "ceil": math.ceil}.get(args[1])
            if fn is None:
                raise TypeError("unsupported operation")
            return fn(obj), None
        if op == "round":
            return round(obj, *args[1:2]), None
        if op == "reversed":
            return reversed(obj), None
        if op in ("copy", "deepcopy"):
            import copy

            return (copy.copy(obj) if op == "copy" else copy.deepcopy(obj)), None
        if op in ("enter", "exit"):
            t = type(obj)
            if not (hasattr(t, "__enter__") and hasattr(t, "__exit__")):
                raise TypeError(f"'{type.__dict__['__name__'].__get__(t)}' object does not support the context "
                                "manager protocol")
            if op == "enter":
                return t.__enter__(obj), None
            ended = self._exception(args[1]) if len(args) > 1 and args[1] is not None else None
            if isinstance(ended, RemoteError):
                raise ended
            return t.__exit__(obj, type(ended) if ended is not None else None, ended, None), None
        raise TypeError(f"unknown request {op!r}")


_MISSING = object()


# ----------------------------------------------------------------------------- the computing modules' state

def _computing_rule(was, now, in_class: bool = False) -> bool:
    """:func:`.harness.replaced`, and a constant of a module that computes from its arguments
    replaced by another value (``math.pi = 3.0`` inside the program's call, read by the test
    next; ``json.JSONEncoder.item_separator = ','`` read by a ``json.dumps`` given a program's
    object): red-team pass 22. Such a module's constants are its computation, not state its own
    functions move (``time.tzname``), but for a class's integers: its counters
    (``difflib.HtmlDiff._default_prefix``, review 22)."""
    if now is was:  # (nearly every attribute: no call)
        return False
    from .. import harness

    return harness.replaced(was, now, in_class) or (_constant(was) and not _same(was, now)
                                                    and not (in_class and type(was) is int))


_VALUE_TYPES = (type, int, float, complex, str, bytes, tuple, frozenset)
_MAX_TABLE = 20_000  # (a module's table followed entry by entry up to this size)


def _snapshot(modules) -> tuple[dict, list]:
    """For each module of :data:`.peer.OWN_COMPUTING` among ``modules`` (``(module, its attributes)``):
    the tables (dicts) and objects (instances) it holds with what they hold (``id(module)`` ->
    ``[(name, object, type, contents)]``), and its caches: ``(module dict, name)`` of an attribute
    that is None (a table the module fills on first use: ``base64._b85chars``,
    ``urllib.parse._hextobyte``), ``(table, None)`` of an empty dict (``base64._b32rev``)."""
    modtype = type(sys)
    state: dict = {}
    caches: list = []
    for m, d in modules:
        held = []
        for k, v in d.items():
            t = type(v)
            if v is None:
                if k[:2] != "__":
                    caches.append((vars(m), k))
            elif t is dict:
                if k != "__builtins__":  # (the builtins: checked as such)
                    if not v:
                        caches.append((v, None))
                    elif len(v) <= _MAX_TABLE:
                        held.append((k, v, t, v.copy()))
            elif t.__dictoffset__ and t is not modtype and not isinstance(v, _VALUE_TYPES) and not callable(v) \
                    and k[:2] != "__":  # (not a class, nor a named value: `re.IGNORECASE`, an opcode)
                try:
                    own = object.__getattribute__(v, "__dict__")
                except Exception:  # noqa: BLE001 - (no attributes of its own: nothing to follow)
                    continue
                if type(own) is dict:
                    held.append((k, v, t, own.copy()))
        if held:
            state[id(m)] = held
    return state, caches


# taken where this module is imported: in the zygote, before any program (a fork's own start
# would pay for it in every cell); a computing module the zygote loads later is taken as the
# program process starts (:func:`computing_state`)
_BASE = _snapshot([(m, dict(vars(m))) for n, m in list(sys.modules.items())
                   if type(m) is type(sys) and _computing(n)])
_BASE_IDS = frozenset(id(m) for n, m in list(sys.modules.items()) if type(m) is type(sys) and _computing(n))


def computing_state() -> tuple[dict, list]:
    """:func:`_snapshot` of the modules of :data:`.peer.OWN_COMPUTING` as the zygote loaded them
    (before the program runs), and ``re``'s ``purge`` (its compiled patterns) among the caches."""
    from .. import harness

    dicts = harness._G["stdlib_dicts"]
    state, caches = dict(_BASE[0]), list(_BASE[1])
    later = [(m, d) for n, (m, d) in dicts.items() if id(m) not in _BASE_IDS and _computing(n)]
    if later:
        more = _snapshot(later)
        state.update(more[0])
        caches += more[1]
    purge = dicts.get("re", (None, {}))[1].get("purge")
    if callable(purge):
        caches.append((purge, None))
    return state, caches


def _empty_caches(caches: list) -> None:
    """Before a standard function of a module that computes from its arguments runs in this process
    for the test (given an object of the program's, or giving one back: ``re.compile('[a-z]+')``),
    the module's caches are emptied, as its own functions refill them: what the program planted
    there (a ``re._cache`` entry compiled from another pattern, ``base64._b85chars``) computes
    nothing for the test (red-team pass 22). Emptying a cache changes no result."""
    for obj, k in caches:
        if k is not None:
            if obj.get(k) is not None:
                obj[k] = None
        elif type(obj) is dict:
            obj.clear()
        else:
            obj()


def _state_change(module, state: dict) -> str | None:
    """``"module.name"`` where the program changed a table or an object ``module`` (a module of
    :data:`.peer.OWN_COMPUTING`) or one of its own standard submodules held when the program
    started (:func:`computing_state`): the module holds another object there, a table's entry
    that was behaviour or a constant is another (``copy._deepcopy_dispatch[list] = ...``), an
    object's class is another or it has behaviour or attributes it had not
    (``json._default_encoder.encode = ...``); the data the module's own functions move in its
    objects (``random``'s ``gauss_next``, ``calendar.setfirstweekday``) is no change. A call the
    test makes given an object of the program's computes in the program's process, with these
    (red-team pass 22)."""
    from .. import harness

    mods = _SUBMODULES.get(id(module))
    if mods is None:  # (the module and its own standard submodules, as the zygote loaded them)
        dicts = harness._G["stdlib_dicts"]
        name = getattr(module, "__name__", None)
        kept = dicts.get(name) if type(name) is str else None
        mods = _SUBMODULES[id(module)] = [(module, name)] + ([] if kept is None or kept[0] is not module else [
            (x, f"{name}.{k}") for k, x in kept[1].items()
            if type(x) is type(sys) and x is not module and f"{name}.{k}" in dicts])
    for m, name in mods:
        now = vars(m)
        for k, obj, t, snap in state.get(id(m), ()):
            if now.get(k, _MISSING) is not obj or type(obj) is not t:
                return f"{name}.{k}"
            own = obj if t is dict else object.__getattribute__(obj, "__dict__")
            if len(own) == len(snap) and all(map(_is, own.values(), snap.values())) \
                    and all(map(_is, own, snap)):  # (as it was, entry for entry: the usual case, at C speed)
                continue
            if t is dict:  # (its entries that were behaviour or constants: not a cache's)
                for key, x in snap.items():
                    y = obj.get(key, _MISSING)
                    if y is not x and (harness._behaviour(x) or (_constant(x) and not _same(x, y))):
                        return f"{name}.{k}[{key!r:.60}]"
                continue
            for a, y in own.items():
                x = snap.get(a, _MISSING)
                if x is _MISSING or (y is not x and harness.replaced(x, y)):
                    return f"{name}.{k}.{a}"
            if len(own) != len(snap):
                return f"{name}.{k}.{next(iter(set(snap) - set(own)), '?')}"
    return None


_is = operator.is_
_SUBMODULES: dict = {}  # id(module) -> [(module or submodule, name)] (:func:`_state_change`)


def _accept(obj, name: str) -> None:
    """The harness's own patch of a standard module or class is no change of the program's."""
    from .. import harness

    harness.stdlib_accept(obj, name)


def _unchanged_module(v) -> bool:
    """``v`` is a standard module as the zygote loaded it, every attribute it had then still the
    same object (a program that rebinds ``re.sub`` or ``datetime.date`` has its own module: the
    test reads the module itself, not those)."""
    from .. import harness

    if type(v) is not type(sys):
        return False
    kept = harness._G["stdlib_dicts"].get(getattr(v, "__name__", None))
    if kept is None or kept[0] is not v:
        return False
    return harness.stdlib_change(v) is None  # (its classes and own submodules too: pass 20)


def _room(offset: int) -> None:
    from .. import harness

    harness.room_as_in_python(offset, up=2)  # (the room below _room's caller)


def _refs(nodes, n, _count=sys.getrefcount) -> int:
    """The references to container ``n`` of a call (measured the same way before and after)."""
    return _count(nodes[n])


def _count_refs(value, _count=sys.getrefcount) -> int:
    """The references to ``value``, less the ones of this function's own frame."""
    return _count(value) - 2


def serve(cmd: dict, chan) -> None:
    """Mode ``serve``: load the program (and the task's setup), then answer the test process
    until it hangs up. The first message says whether loading worked."""
    from .. import harness

    G = harness._G
    sock = socket.socket(fileno=RPC_FD)
    max_msg = int(cmd["max_out"])
    ns = {"__name__": "solution", "__builtins__": G["builtins"]}
    mod = G["modtype"]("solution")
    mod.__dict__.update(ns)
    ns = mod.__dict__
    G["sysmods"]["solution"] = mod
    server = _Server(sock, ns, max_msg, 1.0)
    lines = cmd["code"].splitlines()
    harness._real_streams()
    share_files(cmd["code"] + (cmd.get("setup") or ""))
    server.tee = tee = _Tee(max_msg)
    _warn_through_test(server)
    _log_through_test(server)
    sys.stdout, sys.stderr = tee.streams
    sys.__stdout__, sys.__stderr__ = tee.streams  # type: ignore[misc]  # deliberate: the originals too
    G["std_streams"] = tee.streams
    try:
        code_co, _, _ = harness.compile_source(cmd["code"], "<solution>", guard=False)
    except harness._COMPILE_ERRORS as exc:
        server.send(["r", ["syntax", harness.fmt_syntax(exc)], None])
        return
    server.state, server.caches = computing_state()  # (before any code of the program's)
    base = load_base()  # (the state the test reads in its own process, before the program moves it)
    try:
        harness.load_as_in_python(code_co, ns)  # (the room a script's exec(program) has)
        if cmd["setup"] and cmd["setup"].strip():
            setup_co, _, _ = harness.compile_source(cmd["setup"], "<setup>", guard=False)
            try:
                server.setup_bound = harness.run_setup(setup_co, ns, server.setup_kept)
                server.setup_own, server.setup_live = server.setup_kept[0][0], server.setup_kept[3][0]
            except BaseException as exc:  # noqa: BLE001
                server.send(["r", ["load_error", harness.exc_info(exc, "setup", None)], None])
                return
    except BaseException as exc:  # noqa: BLE001 - reported to the test process
        server.send(["r", ["load_error", harness.exc_info(exc, "code", lines)], None])
        return
    tee.take(1 << 16)  # (what loading printed: not the test's to capture)
    server.random_state = random_state()  # (the generator as loading left it: followed from here)
    moved = load_changes(base)
    code = cmd["code"]
    server.follow_env = any(w in code for w in ("environ", "putenv", "unsetenv", "argv"))
    if server.follow_env or "decimal" in code or "calendar" in code:  # (its calls may move them too)
        server.state_sent = server._call_state()
    server.send(["r", ["loaded", moved] if moved is not None else ["loaded"], None])
    tee.on = True
    _read_the_tests_input(server)
    while True:
        try:
            msg = server.recv()
        except (RemoteError, ValueError, OSError):
            return
        if msg[0] != "q" or (len(msg) > 1 and msg[1] == "bye"):
            return
        try:
            server.serve_request(msg)
        except (RemoteError, OSError):
            return


# ----------------------------------------------------------------------------- the test side
