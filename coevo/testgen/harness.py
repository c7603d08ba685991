"""Code that runs INSIDE the sandbox (its source text is a task's ``setup``); never imported by
coevo itself except to read :data:`SOURCE`.

A cell's code is ``__coevo_job__ = {...}`` (which module variant, which probes, which options); the
setup below defines the helpers and the cell's call ``_cv_main()`` runs the job and returns plain
data (lists, dicts, strings, numbers) that the parent decodes with :mod:`matrix.plain`.

Jobs (``__coevo_job__["op"]``):

* ``probes``: load the module variant afresh for every probe (its source compiled under the real
  file name, registered in ``sys.modules`` under its real name, so relative imports, dataclasses
  and pickling behave), run the probe's steps, describe each outcome (value, exception, stdout,
  arguments changed in place, the final state of the objects the probe built); a per-probe
  wall-clock limit (``SIGALRM``) turns a hang into ``timeout`` and the batch goes on. With
  ``cov`` coverage.py measures each probe in a dynamic context of its own and the arcs come back
  per probe.
* ``inspect``: load the module once under coverage.py and return its statements and branch arcs
  (from coverage's JSON report), the members of its enums, its callables and public data, and the
  load error if the import fails.
* ``doctests``: run the module's doctests (stdlib ``doctest``) and return every example with what
  it printed.
* ``pytest``: write generated test files into the private ``/tmp``, run ``python -m pytest`` on them
  in fresh interpreter processes (one per requested run: its own ``PYTHONHASHSEED`` and test
  order), and return each test's outcome per run.
"""

from __future__ import annotations

from matrix.sandbox.namespace import HOST_ETC_FILES, SYSTEM_BINDS

SOURCE = r'''
import sys as _cv_sys

_CV_STATE = {"code": None, "mod": None, "alarm": False, "cov": None, "ctx": None, "overflow": False,
             "described": False}
_CV_MAX_ITEMS = 2000
_CV_PREFIX = 10  # items of an iterator longer than 200 that a test asserts (itertools.islice)
_CV_MAX_STR = 20000
_CV_MAX_OUT = 65536
# modules the sandbox does not have (ctypes) that the module under test imports itself: its own
# import statements get an inert stand-in (:func:`_cv_standin`; set by the runner's setup)
_CV_STANDINS = ()


class _CvTimeout(BaseException):
    pass


class _CvOutputCap(BaseException):
    pass


class _CvStdin(BaseException):
    """The code read stdin: under pytest that raises, so no test can be written from it."""


class _CvNoStdin:
    def _refuse(self, *args, **kwargs):
        raise _CvStdin()

    read = readline = readlines = __iter__ = __next__ = fileno = _refuse

    def isatty(self):
        return False

    def close(self):
        pass

    def __enter__(self):  # ``with sys.stdin as f: f.read()`` (titlecase's command line)
        return self

    def __exit__(self, *exc):
        return None

    def __getattr__(self, name):
        # what else the code takes of stdin (its buffer, encoding, name...) is what pytest's
        # capture or the user's terminal has: no test is written from it (not this class's
        # AttributeError, which pytest's stdin would not raise)
        if name.startswith("__"):
            raise AttributeError(name)
        raise _CvStdin()


# variables whose effect shows in the value (the terminal's size: the second verification run sets
# another, and a test that depends on it fails there and is dropped) or that only choose a language
# for messages: reading them does not stop a call's value from being asserted (argparse reads
# COLUMNS and LANG on every parser it builds). HOME, TMPDIR, USER... stay reads: what is *in* a
# home directory, or whether the user is root, differs on the user's machine in ways no run shows
# (PYTHONASYNCIODEBUG: asyncio.run's debug switch, slow-callback warnings and no value of its own)
_CV_VARIED_ENV = frozenset({"COLUMNS", "LINES", "TERM", "LANG", "LANGUAGE", "PYTHONASYNCIODEBUG"})


def _cv_benign_env(key) -> bool:
    return key in _CV_VARIED_ENV or (isinstance(key, str) and key.startswith("LC_"))


def _cv_track_environ():
    """Make ``os.environ`` note the variables read while ``_CV_STATE["env"]`` is a set (a call's
    step): ``get``, ``in``, ``os.getenv``, ``expanduser``, ``getpass.getuser`` all read through
    ``__getitem__``; iterating it reads them all."""
    import os
    if type(os.environ).__name__ == "_CvEnviron":
        return

    class _CvEnviron(type(os.environ)):
        def __getitem__(self, key):
            seen = _CV_STATE.get("env")
            if seen is not None and _cv_by_the_code():
                seen.add(key if isinstance(key, str) else repr(key))
            return super().__getitem__(key)

        def __iter__(self):
            seen = _CV_STATE.get("env")
            if seen is not None:
                seen.add("*")
            return super().__iter__()

    try:
        os.environ.__class__ = _CvEnviron
    except TypeError:
        pass


def _cv_track_random():
    """Note the calls that draw on randomness the code did not seed: a generator seeded from the
    operating system (``random``'s own functions, ``random.Random()``) whose state a step moves,
    a generator seeded so during the step, and ``os.urandom`` (``secrets``, ``uuid4``,
    ``SystemRandom``). What such a call gives differs from run to run (a 1% branch passes the
    runs that verify a test, and fails on the user's machine), so it is not asserted. The
    standard library's temporary file names are not the code's randomness."""
    import os
    import weakref
    if _CV_STATE.get("entropy") is not None:
        return
    random = _cv_sys.modules.get("random")
    if not hasattr(random, "_inst"):  # not loaded yet, or the code's own random.py: the standard library's
        import importlib.util
        spec = importlib.util.spec_from_file_location("random", os.path.join(os.path.dirname(os.__file__),
                                                                             "random.py"))
        random = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(random)
        if "random" not in _cv_sys.modules:
            _cv_sys.modules["random"] = random
    _CV_STATE["global_rng"] = random._inst
    pool = weakref.WeakSet()
    _CV_STATE["entropy"] = pool
    seed = random.Random.seed

    def _cv_seed(self, a=None, *args, **kwargs):
        seed(self, a, *args, **kwargs)
        try:
            if a is None and _cv_sys._getframe(2).f_globals.get("__name__") != "tempfile":
                pool.add(self)
                if _CV_STATE.get("drawn") is not None:
                    _CV_STATE["drawn"] = True
            else:
                pool.discard(self)
        except (TypeError, ValueError):  # a generator that cannot be referenced weakly
            pass

    random.Random.seed = _cv_seed
    random.seed = random._inst.seed
    urandom = os.urandom

    def _cv_urandom(n):
        if _CV_STATE.get("drawn") is not None:
            _CV_STATE["drawn"] = True
        return urandom(n)

    os.urandom = random._urandom = _cv_urandom


def _cv_random_states():
    """The state of every generator seeded from the operating system."""
    pool = _CV_STATE.get("entropy")
    if pool is None:
        return {}
    out = {}
    for g in list(pool):
        try:
            out[id(g)] = (g, g.getstate())
        except BaseException as exc:
            if isinstance(exc, (_CvTimeout, KeyboardInterrupt)):
                raise
    return out


def _cv_drew(before) -> bool:
    """Whether the step that started at ``before`` (:func:`_cv_random_states`) drew on
    randomness the code did not seed."""
    drawn, _CV_STATE["drawn"] = _CV_STATE.get("drawn"), None
    if drawn:
        return True
    pool = _CV_STATE.get("entropy") or ()
    for g, state in before.values():
        try:
            if g in pool and g.getstate() != state:
                return True
        except BaseException as exc:
            if isinstance(exc, (_CvTimeout, KeyboardInterrupt)):
                raise
    return False


def _cv_by_the_code() -> bool:
    """Whether the code's own files are among the callers (only while the module is imported
    for inspection, ``_CV_STATE["mine"]`` set: there the libraries it imports read settings too)."""
    mine = _CV_STATE.get("mine")
    if not mine:
        return True
    f = _cv_sys._getframe(2)
    for _ in range(8):
        if f is None:
            return False
        if f.f_code.co_filename.startswith(mine):
            return True
        f = f.f_back
    return False


def _cv_code_prefix(job) -> str:
    """The module's file, or its top package's directory (with a trailing separator)."""
    import os
    file, parts = job["file"], job["name"].split(".")
    if len(parts) == 1 and not file.endswith("__init__.py"):
        return file
    d = os.path.dirname(file)
    for _ in range(len(parts) - (1 if file.endswith("__init__.py") else 2)):
        d = os.path.dirname(d)
    return os.path.join(d, "")


_CV_TIMER = {"cpu": 0.0, "limit": 0.0, "hard": 0.0}
_CV_WAIT_FACTOR = 2.0  # a call that waited rather than computed gets this many times its limit


def _cv_on_alarm(signum, frame):
    import time
    t = _CV_TIMER
    # the limit counts the CPU time used: a call that waited for a CPU (a loaded machine: load 8
    # on 2 cores makes a 5 ms call take 20 ms or more) or slept is let go on, up to twice its limit
    # in wall-clock time; the timer fires again 50 ms later
    if time.process_time() - t["cpu"] < 0.5 * t["limit"] and time.monotonic() < t["hard"]:
        return
    raise _CvTimeout()


def _cv_arm(seconds):
    import signal
    import time
    seconds = max(0.001, float(seconds))
    _CV_TIMER.update(cpu=time.process_time(), limit=seconds,
                     hard=time.monotonic() + _CV_WAIT_FACTOR * seconds)
    signal.signal(signal.SIGALRM, _cv_on_alarm)
    # re-fires every 50 ms after the first expiry, so a handler that swallows it once still ends
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)


def _cv_disarm():
    import signal
    signal.setitimer(signal.ITIMER_REAL, 0)


class _CvSink:
    """A stdout that keeps what is printed, up to a cap."""

    def __init__(self):
        self.parts = []
        self.size = 0

    def write(self, s):
        if not isinstance(s, str):
            s = str(s)
        self.size += len(s)
        if self.size > _CV_MAX_OUT:
            raise _CvOutputCap()
        self.parts.append(s)
        return len(s)

    def flush(self):
        pass

    def isatty(self):
        return False

    def getvalue(self):
        return "".join(self.parts)

    encoding = "utf-8"

    # closing stdout (titlecase's ``with ofile: ofile.write(...)``, ofile being sys.stdout) closes
    # pytest's capture under a test: that test and every later one fail ('I/O operation on closed
    # file'), so no test is written from such a call; nor from what else it takes of the process's
    # stdout (its buffer, its descriptor), which is pytest's capture or the user's terminal
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        raise _CvStdin()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _CvStdin()


class _CvDiscard(_CvSink):
    """A stdout for importing the module: what it prints there is never asserted, so past the cap
    it is dropped (the import goes on, as under pytest) instead of stopping it."""

    def write(self, s):
        if not isinstance(s, str):
            s = str(s)
        if self.size + len(s) <= _CV_MAX_OUT:
            self.parts.append(s)
        self.size += len(s)
        return len(s)

    def close(self):  # (what an import does to stdout is no test's)
        pass

    def __getattr__(self, name):
        raise AttributeError(name)


def _cv_variant(v):
    """Make ``v`` (``{"key", "source", "patch"}``) the variant that :func:`_cv_load` loads."""
    _CV_STATE["variant"] = v
    _CV_STATE["code"] = None
    _CV_STATE["snapshot"] = None
    _CV_STATE["load_failed"] = None


def _cv_code():
    job = __coevo_job__
    v = _CV_STATE.get("variant") or job
    if _CV_STATE["code"] is None:
        _CV_STATE["code"] = compile(v["source"], job["file"], "exec", dont_inherit=True)
    return _CV_STATE["code"]


def _cv_load(fresh=False):
    """The current variant's module as just imported: executed once per variant and cell, then
    its globals restored before every probe (rebinding undone, top-level lists, dicts and sets
    copied afresh); ``fresh`` executes it again (parent package imported first)."""
    import importlib
    import importlib.util
    job = __coevo_job__
    v = _CV_STATE.get("variant") or job
    name = job["name"]
    snap = _CV_STATE.get("snapshot")
    if snap is not None and not fresh:
        mod, saved = snap
        d = mod.__dict__
        d.clear()
        d.update({k: (type(x)(x) if type(x) in (list, dict, set) else x) for k, x in saved.items()})
        _cv_sys.modules[name] = mod
        return mod
    if "." in name:
        if _CV_STANDINS:  # (the package may import the module itself)
            _cv_with_standins(lambda: importlib.import_module(name.rpartition(".")[0]))
        else:
            importlib.import_module(name.rpartition(".")[0])
    spec = importlib.util.spec_from_file_location(name, job["file"])
    mod = importlib.util.module_from_spec(spec)
    _cv_sys.modules[name] = mod
    if "." in name:
        setattr(_cv_sys.modules[name.rpartition(".")[0]], name.rpartition(".")[2], mod)
    # the interpreter's builtins, as an import gives a module (exec would hand it this harness's
    # globals' builtins: the sandbox runs a task's setup over a copy of them, where the harness's
    # own wrappers, open(0) and the environment's reads, are not)
    import builtins
    mod.__dict__["__builtins__"] = builtins
    if _CV_STANDINS:
        _cv_with_standins(lambda: exec(_cv_code(), mod.__dict__))
    else:
        exec(_cv_code(), mod.__dict__)
    if v.get("patch"):
        exec(compile(v["patch"], "<implementation>", "exec", dont_inherit=True), mod.__dict__)
    _CV_STATE["mod"] = mod
    saved = {k: (type(x)(x) if type(x) in (list, dict, set) else x) for k, x in mod.__dict__.items()}
    _CV_STATE["snapshot"] = (mod, saved)
    return mod


# The stand-ins, as source: run here (the cells' loading of the module, :func:`_cv_with_standins`)
# and written into the suite's conftest (:func:`_cv_standin_prelude`), one text for both
_CV_STANDIN_SRC = """
class _CvStandInError(ImportError):
    pass


def _cv_standin_import(real, own, standins):
    \"\"\"An ``__import__`` answering the imports of ``standins`` made in a namespace named ``own``
    (the module under test's own import statements; a library it imports, or one of its functions
    called later, still finds no such module) with an inert module: importing it works, using
    anything in it raises ImportError (as the module's absence would have where it is imported), so
    a guarded use takes the module's own fallback; what uses it gets no tests
    (:func:`coevo.testgen.target.standin_users`); every other import goes to ``real``.\"\"\"
    import types

    class _CvStandIn(types.ModuleType):
        def __getattr__(self, attr):
            if attr.startswith("__") and attr.endswith("__"):
                raise AttributeError(attr)
            raise _CvStandInError(f"the sandbox has no module {self.__name__!r} (raw memory)")

    def standin_import(name, globals=None, locals=None, fromlist=(), level=0):
        if not level and name.split(".")[0] in standins and (globals or {}).get("__name__") == own:
            return _CvStandIn(name if fromlist else name.split(".")[0])
        return real(name, globals, locals, fromlist, level)

    return standin_import
"""
exec(compile(_CV_STANDIN_SRC, "<cv-standins>", "exec"))


def _cv_with_standins(run):
    """``run()`` with the module's own imports of :data:`_CV_STANDINS` answered by stand-ins."""
    import builtins
    real_import = builtins.__import__
    builtins.__import__ = _cv_standin_import(real_import, __coevo_job__["name"], _CV_STANDINS)  # noqa: F821
    try:
        return run()
    finally:
        builtins.__import__ = real_import


def _cv_standin_prelude(job):
    """Code for the suite's conftest (or the in-process run) that answers the module under test's
    own imports of ``job["standins"]`` with the stand-ins of :func:`_cv_with_standins` for the
    whole run (the suite's processes lack those modules as the cells do, and the suite may import
    the module afresh); its tests leave out what uses them
    (:func:`coevo.testgen.target.standin_users`)."""
    if not job.get("standins"):
        return ""
    return ("\n" + _CV_STANDIN_SRC + "\n\ndef _cv_standins():\n    import builtins\n"
            "    builtins.__import__ = _cv_standin_import(builtins.__import__, " + repr(job["name"]) + ", "
            + repr(tuple(job["standins"])) + ")\n\n\n_cv_standins()\n")


def _cv_ctx(suffix=""):
    """Coverage's context for what runs next: the probe's calls (``""``), the harness's own reading
    of their values (``"+d"``: credited to the probe only when its test asserts what was read)
    or of an iterator past its first items (``"+t"``: credited only when the iterator ended, so
    that the test reads it all)."""
    cov = _CV_STATE.get("cov")
    if cov is not None and _CV_STATE.get("ctx") is not None:
        cov.switch_context(_CV_STATE["ctx"] + suffix)  # (a flush of coverage's data: not per value)
        if suffix:
            _CV_STATE["described"] = True


def _cv_described(v, mod):
    """``_cv_desc(v)`` under the "+d" context where describing it may run code (plain values
    run none)."""
    if _CV_STATE.get("cov") is None or _cv_is_plain(v, [_CV_MAX_ITEMS]):
        return _cv_desc(v, mod)
    _cv_ctx("+d")
    try:
        return _cv_desc(v, mod)
    finally:
        _cv_ctx()


def _cv_path(t):
    return [getattr(t, "__module__", "") or "", getattr(t, "__qualname__", getattr(t, "__name__", "?"))]


_CV_PLAIN_ATOMS = (type(None), bool, int, float, complex, str, bytes)


def _cv_is_plain(v, budget, depth=0):
    t = type(v)
    if t in _CV_PLAIN_ATOMS:
        if t is str and len(v) > _CV_MAX_STR:
            return False
        if t is int and v.bit_length() > 4000:
            return False
        budget[0] -= 1
        return budget[0] >= 0
    if depth > 8:
        return False
    if t in (list, tuple, set, frozenset):
        budget[0] -= 1
        return all(_cv_is_plain(x, budget, depth + 1) for x in v) and budget[0] >= 0
    if t is dict:
        budget[0] -= 1
        return all(_cv_is_plain(k, budget, depth + 1) and _cv_is_plain(x, budget, depth + 1)
                   for k, x in v.items()) and budget[0] >= 0
    return False


def _cv_env(mod):
    import collections
    import datetime
    import decimal
    import fractions
    import io
    env = {"datetime": datetime, "Decimal": decimal.Decimal, "Fraction": fractions.Fraction,
           "StringIO": io.StringIO, "BytesIO": io.BytesIO,
           "OrderedDict": collections.OrderedDict, "deque": collections.deque,
           "defaultdict": collections.defaultdict, "Counter": collections.Counter}
    if mod is not None:
        env.update(mod.__dict__)
    return env


def _cv_reconstructs(v, mod):
    """repr(v) when evaluating it gives back an equal value of the same type."""
    t = type(v)
    if t.__eq__ is object.__eq__:
        return None
    try:
        r = repr(v)
        if len(r) > 2000 or "\n" in r:
            return None
        env = _cv_env(mod)
        if t.__module__ == "datetime":  # its repr names the module (the code's 'datetime' may be the class)
            import datetime
            env["datetime"] = datetime
        back = eval(r, env)
        if type(back) is t and back == v:
            return r
    except BaseException as exc:
        if isinstance(exc, (_CvTimeout, KeyboardInterrupt)):
            raise
    return None


def _cv_desc(v, mod, depth=0):
    """Plain description of a value (see coevo.testgen.observe for the forms)."""
    import copy
    import enum
    import types
    if _cv_is_plain(v, [_CV_MAX_ITEMS]):
        # a snapshot: later steps may change the object (a method's internal list, an argument)
        return ["v", copy.deepcopy(v) if type(v) in (list, dict, set, tuple) else v]
    t = type(v)
    if isinstance(v, enum.Enum):
        return ["enum", _cv_path(t), v.name]
    if depth > 3:
        return ["opaque", _cv_path(t)]
    if isinstance(v, (types.GeneratorType, map, filter, zip, enumerate, reversed)) or (
            hasattr(t, "__next__") and hasattr(t, "__iter__") and t.__module__ in ("builtins", "itertools")):
        items = []
        for x in v:
            items.append(_cv_desc(x, mod, depth + 1))
            if len(items) == _CV_PREFIX:
                break
        else:
            return ["iter", items]
        # past the first items: up to 200 more read under a context of their own; an iterator
        # that goes on (or fails later) is asserted by its first items only
        rest = []
        _cv_ctx("+t")
        try:
            for x in v:
                rest.append(_cv_desc(x, mod, depth + 1))
                if len(rest) > 200:
                    _CV_STATE["overflow"] = True
                    return ["iter", items, "more"]
        except (_CvTimeout, _CvOutputCap, KeyboardInterrupt):
            raise
        except BaseException:
            _CV_STATE["overflow"] = True
            return ["iter", items, "more"]
        finally:
            _cv_ctx("+d")
        return ["iter", items + rest]
    if t in (list, tuple, set, frozenset) and len(v) <= 200:
        items = [_cv_desc(x, mod, depth + 1) for x in v]
        if t in (list, tuple) and items and all(d[0] == "v" for d in items):  # named tuples' items
            return ["v", t(d[1] for d in items)]
        return ["seq", t.__name__, items]
    if t is dict and len(v) <= 200:
        if all(_cv_is_plain(k, [50]) for k in v):
            return ["map", [[k, _cv_desc(x, mod, depth + 1)] for k, x in v.items()]]
        return ["opaque", _cv_path(t)]
    if t.__module__ in ("_io", "io") and t.__name__ in ("StringIO", "BytesIO"):
        # a stream in memory (an output argument: quopri's encode(input, output)): what was
        # written to it, ``stream.getvalue()``
        try:
            data = v.getvalue()
        except ValueError:  # closed
            return ["opaque", _cv_path(t)]
        if len(data) > 2000:
            return ["opaque", _cv_path(t)]
        return ["obj", _cv_path(t), {}, {"getvalue": data}]
    r = _cv_reconstructs(v, mod)
    if r is not None:
        return ["repr", r, _cv_path(t)]
    if isinstance(v, tuple) and isinstance(getattr(t, "_fields", None), tuple) and len(v) <= 200:
        # a named tuple whose class the module has under no name (webcolors' PercentRGB, from
        # its _types): equal to the plain tuple of its items, which is what a test can write
        items = tuple(v)
        if _cv_is_plain(items, [_CV_MAX_ITEMS]):
            return ["v", copy.deepcopy(items)]
        return ["seq", "tuple", [_cv_desc(x, mod, depth + 1) for x in items]]
    if isinstance(v, BaseException):
        return ["exc", _cv_path(t), str(v)[:500]]
    if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
                      types.ModuleType)):
        return ["opaque", _cv_path(t)]
    return _cv_object(v, mod, depth)


def _cv_object(v, mod, depth):
    """An instance: its public attributes and properties, len / items / str when its class
    (from the module under test) defines them."""
    t = type(v)
    attrs = {}
    names = []
    try:
        names = [k for k in vars(v) if not k.startswith("_")]
    except TypeError:
        names = [k for k in getattr(t, "__slots__", ()) if isinstance(k, str) and not k.startswith("_")]
    for klass in t.__mro__:
        if klass is object:
            continue
        for k, member in vars(klass).items():
            if isinstance(member, property) and not k.startswith("_") and k not in names:
                names.append(k)
    for k in names[:40]:
        try:
            x = getattr(v, k)
        except BaseException as exc:
            if isinstance(exc, (_CvTimeout, KeyboardInterrupt)):
                raise
            continue
        if callable(x) and not isinstance(x, (type,)):
            continue
        attrs[k] = _cv_desc(x, mod, depth + 1)
    extra = {}
    own = getattr(t, "__module__", None) == __coevo_job__["name"]
    # an object that is its own iterator (``__next__``: more-itertools' seekable, peekable) is
    # used up by reading its items: what the test does next would see it empty
    consumed = any("__next__" in vars(k) for k in t.__mro__ if k is not object)
    if own:
        for dunder, key in (("__len__", "len"), ("__iter__", "items"), ("__str__", "str"),
                            ("__repr__", "repr")):
            if key == "items" and consumed:
                continue
            if any(dunder in vars(k) for k in t.__mro__ if k is not object):
                try:
                    if key == "len":
                        extra[key] = len(v)
                    elif key == "items":
                        items = []
                        for x in v:
                            items.append(_cv_desc(x, mod, depth + 1))
                            if len(items) > 100:
                                items = None
                                break
                        if items is not None:
                            extra[key] = items
                    elif key == "str":
                        s = str(v)
                        if len(s) <= 2000:
                            extra[key] = s
                    else:
                        s = repr(v)
                        if len(s) <= 2000 and " at 0x" not in s:
                            extra[key] = s
                except BaseException as exc:
                    if isinstance(exc, (_CvTimeout, KeyboardInterrupt)):
                        raise
    return ["obj", _cv_path(t), attrs, extra]


def _cv_exc(exc, tb_file):
    line = 0
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == tb_file:
            line = tb.tb_lineno
        tb = tb.tb_next
    try:
        msg = str(exc)
    except BaseException:
        msg = ""
    return [[_cv_path(k) for k in type(exc).__mro__], msg[:2000], line]


def _cv_track(v):
    t = type(v)
    return t in (list, dict, set, bytearray) or (hasattr(v, "__dict__") and not isinstance(v, type)
                                                and not callable(v))


def _cv_write_file(name, src, env, local):
    """``pathlib.Path(name).write_text(text)`` (``write_bytes`` for bytes) in the working
    directory; removed when the probe ends (:func:`_cv_probe`)."""
    import os
    try:
        content = eval(src, env, local)
    except BaseException as exc:
        if isinstance(exc, (_CvTimeout, _CvOutputCap, KeyboardInterrupt)):
            raise
        return ["badarg", type(exc).__name__ + ": " + str(exc)[:200]]
    parts = name.split("/") if type(name) is str else []
    if not parts or len(parts) > 3 or any(not x or x.startswith(".") or os.sep in x for x in parts):
        return ["badarg", "a file name of the working directory (or of a directory in it)"]
    if type(content) not in (str, bytes):
        return ["badarg", "a file holds text or bytes"]
    if os.path.lexists(name):
        return ["badarg", "the file is there already"]
    try:
        if type(content) is str:
            data = content.encode("utf-8")
        else:
            data = content
    except UnicodeError:
        return ["badarg", "text that UTF-8 cannot encode"]
    if len(parts) > 1:  # a file in a directory the test makes (a directory parameter's tree)
        if not os.path.isdir(parts[0]):
            if os.path.lexists(parts[0]):
                return ["badarg", "the file is there already"]
            _CV_STATE.setdefault("files", []).append(os.path.abspath(parts[0]))
        os.makedirs(os.path.dirname(name), exist_ok=True)
    else:
        _CV_STATE.setdefault("files", []).append(os.path.abspath(name))
    with open(name, "wb") as fh:
        fh.write(data)
    return ["ok", ["opaque", ["builtins", "file"]], "", []]


def _cv_step(mod, env, local, step):
    """Run one step: ``[kind, callee, [arg sources], [[kw, source]], bind]``."""
    import contextlib
    kind, callee, args, kwargs, bind = step
    job = __coevo_job__
    if kind == "file":  # a file the calls that follow read, written where they run (a test's tmp_path)
        return _cv_write_file(callee, args[0], env, local)
    if kind == "argv":  # the command line of the calls that follow (a script's main())
        try:
            line = eval(args[0], env, local)
        except BaseException as exc:
            if isinstance(exc, (_CvTimeout, _CvOutputCap, KeyboardInterrupt)):
                raise
            return ["badarg", type(exc).__name__ + ": " + str(exc)[:200]]
        if type(line) is not list or not all(type(x) is str for x in line):
            return ["badarg", "a command line is a list of strings"]
        _cv_sys.argv = _cv_sys.argv[:1] + line
        return ["ok", ["opaque", ["builtins", "argv"]], "", []]
    try:
        argv = [eval(a, env, local) for a in args]
        kw = {k: eval(s, env, local) for k, s in kwargs}
        fn = eval(callee, env, local) if kind == "call" else None
    except BaseException as exc:
        if isinstance(exc, (_CvTimeout, _CvOutputCap, KeyboardInterrupt)):
            raise
        return ["badarg", type(exc).__name__ + ": " + str(exc)[:200]]
    tracked = [i for i, a in enumerate(argv) if _cv_track(a)]
    before = {i: _cv_described(argv[i], mod) for i in tracked}
    _CV_STATE["fdiff"] = None
    tree = _cv_tree()  # what the call does to the files of the working directory: before and after
    res = _cv_call(mod, env, local, step, kind, callee, argv, kw, fn, bind, tracked, before)
    if res[0] in ("ok", "raise"):
        _CV_STATE["fdiff"] = _cv_files_changed(tree, _cv_tree())
    return res


def _cv_call(mod, env, local, step, kind, callee, argv, kw, fn, bind, tracked, before):
    import contextlib
    job = __coevo_job__
    sink = _CvSink()
    read = None
    tmp = _cv_sys.modules.get("tempfile")
    if tmp is not None:  # its directory is read from TMPDIR again (an environment read), not cached
        tmp.tempdir = None
    _CV_STATE["env"] = set()
    states = _cv_random_states()
    _CV_STATE["drawn"] = False
    _CV_STATE["reading"] = False
    drew = False
    try:
        try:
            with contextlib.redirect_stdout(sink):
                if kind == "call":
                    value = fn(*argv, **kw)
                    if type(value).__name__ == "coroutine" and hasattr(value, "cr_frame"):
                        # a coroutine function's call: run as a test runs it, asyncio.run(f(x))
                        import asyncio
                        _CV_STATE["awaited"] = True
                        value = asyncio.run(value)
                else:
                    value = eval(callee, env, local)
                _CV_STATE["reading"] = True  # what raises from here on raised reading the value
                desc = ["bound", _cv_described(value, mod)] if bind else _cv_described(value, mod)
                _CV_STATE["reading"] = False
        finally:
            read, _CV_STATE["env"] = _CV_STATE["env"], None
            read = {k for k in read if not _cv_benign_env(k)} if read else read
            drew = _cv_drew(states)
    except (_CvTimeout, _CvOutputCap, KeyboardInterrupt):
        raise
    except _CvStdin:
        return ["stdin"]
    except MemoryError:
        return ["memory"]
    except RecursionError:
        return ["recursion"]
    except BaseException as exc:
        if read:  # what it raised may depend on the environment variables it read
            return ["env", sorted(read)[:20]]
        if _cv_from_pool(exc):  # or on the machine's processes and semaphores
            return ["env", ["multiprocessing"]]
        if drew:  # or on what it drew
            return ["random"]
        if _CV_STATE.get("reading"):
            # the call returned; reading what it returned raised (a generator's body runs as it
            # is read): a test reads it too, ``list(f(x))`` (a bound value read so is no test)
            if bind or not hasattr(type(value), "__next__"):  # (a list holding such a generator)
                return ["badarg", "reading the value raised " + type(exc).__name__]
            return ["raise", _cv_exc(exc, job["file"]), sink.getvalue(), "read"]
        return ["raise", _cv_exc(exc, job["file"]), sink.getvalue()]
    if read:
        return ["env", sorted(read)[:20]]
    if drew:
        return ["random"]
    if bind:
        local[bind] = value
    changed = []
    for i in tracked:
        after = _cv_described(argv[i], mod)
        if after != before[i]:
            changed.append([i, after])
    return ["ok", desc, sink.getvalue(), changed]


def _cv_import(import_limit):
    """The variant's first import in this cell, under its own allowance (``import_limit``
    seconds), apart from the per-call limit: ``None`` when it loaded, else the probe's outcome
    (kept for the variant's later probes when the import ran out of time)."""
    import contextlib
    import time
    if _CV_STATE.get("snapshot") is not None:
        return None
    if _CV_STATE.get("load_failed") is not None:
        return _CV_STATE["load_failed"]
    t0 = time.perf_counter()
    _cv_arm(import_limit)
    try:
        try:
            with contextlib.redirect_stdout(_CvDiscard()):
                _cv_load()
        finally:
            _cv_disarm()
    except _CvTimeout:
        _CV_STATE["load_failed"] = {"load": [[["builtins", "TimeoutError"]],
                                             f"importing the module took longer than {import_limit:g} s"],
                                    "load_timeout": import_limit, "t": time.perf_counter() - t0}
        return _CV_STATE["load_failed"]
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return {"load": _cv_exc(exc, __coevo_job__["file"])[:2], "t": time.perf_counter() - t0}
    return None


def _cv_probe(steps, limit, import_limit=None):
    job = __coevo_job__
    local = {}
    outs = []
    state = {}
    import time
    _cv_sys.stdin = _CvNoStdin()
    # the command line the written suite pins (coevo.testgen.writer.argv0), not the cell's
    _cv_sys.argv = [job["name"].rpartition(".")[2] + ".py"]
    failed = _cv_import(max(limit, import_limit or limit))
    if failed is not None:
        _cv_clear_cwd()  # (what the import left)
        return failed
    if _CV_STATE.get("entropy") is not None:  # whichever test ran before, the global generator's
        _CV_STATE["entropy"].add(_CV_STATE["global_rng"])  # state is unknown to a test until it seeds it
    t0 = time.perf_counter()
    warned = []
    warns = []
    awaited = []
    files = []
    hook = _cv_sys.unraisablehook
    _cv_arm(limit)
    try:
        try:
            sink = _CvDiscard()
            import contextlib
            with contextlib.redirect_stdout(sink):
                mod = _cv_load()
        except (_CvTimeout, _CvOutputCap, KeyboardInterrupt):
            raise
        except BaseException as exc:
            return {"load": _cv_exc(exc, job["file"])[:2], "t": time.perf_counter() - t0}
        env = mod.__dict__
        # the standard library's names the calls may write (datetime.date(...), Decimal(...)),
        # where the module has no name of its own for them (the written test imports them)
        import collections
        import datetime
        free = {k: v for k, v in dict(_cv_env(None), date=datetime.date).items() if k not in env}
        names = collections.ChainMap(local, free) if free else local
        import warnings
        # the warnings the calls emit, and the exceptions Python could not raise (a generator
        # closed unfinished): under a project's `filterwarnings = error` their tests fail
        _cv_sys.unraisablehook = lambda u: warned.append("unraisable")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for k, step in enumerate(steps):
                seen = len(caught)
                _CV_STATE["awaited"] = False
                outs.append(_cv_step(mod, env, names, step))
                fdiff, _CV_STATE["fdiff"] = _CV_STATE.get("fdiff"), None
                if fdiff:
                    files.append([k, fdiff])
                if _CV_STATE["awaited"]:
                    awaited.append(k)
                # the first warning a step that returned emitted (a test asserts it: pytest.warns);
                # not what the collector or a finalizer emits (ResourceWarning, an unawaited
                # coroutine), at a time of their own
                heard = [w for w in caught[seen:] if not issubclass(w.category, ResourceWarning)
                         and "never awaited" not in str(w.message)]
                if outs[-1][0] in ("ok", "raise") and heard:
                    kinds = {(w.category, str(w.message)) for w in heard}
                    if len(kinds) == 1:
                        warns.append([k, [_cv_path(c) for c in heard[0].category.__mro__],
                                      str(heard[0].message)[:2000]])
                    else:  # several (a deprecated function of a deprecated one: parse(format_version(...))):
                        # the category all are, no message (pytest.warns emits again what it does not match)
                        common = [c for c in heard[0].category.__mro__ if all(issubclass(w.category, c) for w in heard)]
                        warns.append([k, [_cv_path(c) for c in common], ""])
                if outs[-1][0] in ("memory", "recursion", "badarg", "stdin", "env", "random"):
                    break
                if step[4] and outs[-1][0] == "raise" and k + 1 < len(steps):
                    outs.append(["badarg", "the object was not built"])  # nothing to call the rest on
                    break
            for var in sorted(local):
                state[var] = _cv_described(local[var], mod)
            warned += [w.category.__name__ for w in caught]
    except _CvTimeout:
        outs.append(["timeout"])
    except _CvOutputCap:
        outs.append(["output"])
    finally:
        _cv_disarm()
        _cv_sys.unraisablehook = hook
        _cv_remove_files()
        _cv_clear_cwd()
    out = {"steps": outs, "state": state, "t": time.perf_counter() - t0}
    if _cv_holds_work(outs, state):  # ('/tmp/cv-work/x': the test's tmp_path is another)
        out["steps"] = [["env", ["<the working directory>"]]]
    if files:
        out["files"] = files
    if warned:
        out["warned"] = sorted(set(warned))[:10]
    if warns:
        out["warns"] = warns
    if awaited:
        out["awaited"] = awaited
    return out


_CV_TREE_MAX = 400  # entries of the working directory a snapshot reads (more: no file is observed)
_CV_TREE_DEPTH = 6
_CV_FILE_MAX = 2000  # bytes of a file whose contents are observed (larger: its size)
_CV_FILES_SHOWN = 50  # entries a step's change lists (the test asserts a few of them)


def _cv_tree():
    """The working directory's entries that the probe's steps made (not those the sandbox put
    there: ``_CV_STATE["cwd0"]``, the code's own tree among them, never read), as ``{relative
    path: (kind, size, mtime_ns, inode)}`` (symbolic links not followed); None when there are more
    than ``_CV_TREE_MAX`` of them, or no working directory to read."""
    import os
    base = _CV_STATE.get("cwd0")
    if base is None:
        return None
    root, sandbox = base
    out = {}
    stack = [("", 0)]
    try:
        while stack:
            rel, depth = stack.pop()
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                for e in it:
                    if not rel and e.name in sandbox:
                        continue
                    p = rel + "/" + e.name if rel else e.name
                    st = e.stat(follow_symlinks=False)
                    if e.is_symlink():
                        out[p] = ("link", 0, st.st_mtime_ns, st.st_ino)
                    elif e.is_dir(follow_symlinks=False):
                        out[p] = ("dir", 0, 0, st.st_ino)
                        if depth < _CV_TREE_DEPTH:
                            stack.append((p, depth + 1))
                    elif e.is_file(follow_symlinks=False):
                        out[p] = ("file", st.st_size, st.st_mtime_ns, st.st_ino)
                    else:
                        out[p] = ("other", 0, st.st_mtime_ns, st.st_ino)
                    if len(out) > _CV_TREE_MAX:
                        return None
    except OSError:
        return None
    return out


def _cv_file_desc(path, entry):
    """``["file", size, contents]`` (contents None past ``_CV_FILE_MAX`` bytes; size and contents
    None where they hold the sandbox's working directory, a path the test's tmp_path differs
    from), ``["dir"]``, ``["link"]`` or ``["other"]``."""
    import os
    kind, size = entry[0], entry[1]
    if kind != "file":
        return [kind]
    if size > _CV_FILE_MAX:
        return ["file", size, None]
    root = _CV_STATE["cwd0"][0]
    try:
        with open(os.path.join(root, path), "rb") as fh:
            data = fh.read(_CV_FILE_MAX + 1)
    except OSError:
        return ["file", None, None]
    if len(data) > _CV_FILE_MAX:
        return ["file", size, None]
    if len(root) > 1 and (os.fsencode(root.rstrip(os.sep) + os.sep) in data or data.endswith(os.fsencode(root))):
        return ["file", None, None]
    return ["file", len(data), data]


def _cv_files_changed(before, after):
    """What a step did to the working directory's files: ``[[path, desc], ...]`` for the entries
    it created or changed (:func:`_cv_file_desc`), ``["gone"]`` for those it removed (not the
    entries of a removed directory), and ``["kept"]`` for up to two unchanged files beside a
    removed one (a test asserts they are still there)."""
    if before is None or after is None:
        return None
    out = []
    removed = {p for p in before if p not in after}
    gone = [p for p in before if p in removed and p.rpartition("/")[0] not in removed]
    for p in gone:
        out.append([p, ["gone"]])
    for p, e in after.items():
        b = before.get(p)
        if b is None or b[0] != e[0] or (e[0] != "dir" and b != e):
            out.append([p, e])
    out.sort(key=lambda x: (x[0].count("/"), x[0]))
    out = out[:_CV_FILES_SHOWN]
    out = [[p, d if d == ["gone"] else _cv_file_desc(p, d)] for p, d in out]
    kept = []
    parents = {p.rpartition("/")[0] for p in gone}
    for p in sorted(before):
        if len(kept) == 2:
            break
        if p.rpartition("/")[0] in parents and before[p] == after.get(p) and before[p][0] == "file":
            kept.append([p, ["kept"]])
    return out + kept


def _cv_clear_cwd():
    """Remove what the probe's calls left in the working directory (each test starts in an empty
    one): every entry the sandbox did not put there (``_CV_STATE["cwd0"]``); symbolic links are
    removed, not followed; and the working directory is the cell's again (a call may change it)."""
    import os
    import stat
    base = _CV_STATE.get("cwd0")
    if base is None:
        return
    root, sandbox = base
    try:
        os.chdir(root)
    except OSError:
        return

    def unlock(fn, path, _exc):  # a directory the code made unwritable: writable again, then removed
        try:
            os.chmod(os.path.dirname(path) or ".", stat.S_IRWXU)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, stat.S_IRWXU)
            fn(path)
        except OSError:
            pass

    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        if name not in sandbox:
            _cv_remove_path(os.path.join(root, name), unlock)


def _cv_remove_files():
    """The files the probe's file steps wrote (each test writes them in a directory of its own)."""
    for path in _CV_STATE.pop("files", None) or ():
        _cv_remove_path(path)


def _cv_remove_path(path, onerror=None):
    """Remove a file, a symbolic link (not followed) or a directory tree; what cannot be removed
    is left (``onerror``, shutil.rmtree's, may try again first)."""
    import os
    import shutil
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, onerror=onerror or (lambda *_: None))
        else:
            os.unlink(path)
    except OSError:
        pass


# directories that are no one's own files: a path under them is the machine's, not the project's
_CV_SYSTEM_ROOTS = frozenset({"/", "/usr/local", "/opt", "/etc", "/var", "/home", "/tmp", "/root", "/srv", "/mnt",
                              "/media", "/dev", "/proc", "/sys", "/run"})
# what the sandbox shows as the machine has it: its read-only binds and the few /etc files it
# binds (matrix/sandbox/namespace.py's SYSTEM_BINDS and HOST_ETC_FILES, filled in below this
# source), and the /dev nodes that give what the machine's give
_CV_SHOWN = __CV_SHOWN__ + ("/dev/null", "/dev/zero", "/dev/full")


def _cv_visible_roots():
    """What the sandbox shows as the user's machine has it: the code's own tree, the Python
    installation, the dependencies (``sys.path``), the system's libraries."""
    import os
    roots = _CV_STATE.get("visible")
    if roots is None:
        job = __coevo_job__
        prefix = _cv_code_prefix(job)
        mine = [os.path.dirname(prefix.rstrip(os.sep)), os.path.dirname(job["file"]), _cv_sys.prefix,
                _cv_sys.base_prefix, _cv_sys.exec_prefix]
        roots = list(_CV_SHOWN)
        for p in mine + [x for x in _cv_sys.path if isinstance(x, str) and os.path.isabs(x)]:
            p = os.path.normpath(p)
            if p not in _CV_SYSTEM_ROOTS and p not in roots:
                roots.append(p)
        _CV_STATE["visible"] = roots
    return roots


def _cv_from_pool(exc):
    """Whether ``exc`` was raised inside multiprocessing or concurrent.futures' process pool
    (ProcessPoolExecutor's semaphores need /dev/shm, which the sandbox does not show; how many
    processes start is the machine's): what such a call raises on the user's machine is not what
    it raised here."""
    import os
    tb = getattr(exc, "__traceback__", None)
    while tb is not None:
        f = tb.tb_frame.f_code.co_filename
        if (os.sep + "multiprocessing" + os.sep in f or os.sep + "concurrent" + os.sep in f) and \
                any(f.startswith(os.path.join(p, "")) for p in (_cv_sys.base_prefix, _cv_sys.prefix)):
            return True
        tb = tb.tb_next
    return False


def _cv_note_path(path, stat=False):
    """A call's open, stat or listing of a path outside the project, the working directory and
    the Python installation (/etc/mime.types, /etc/services, /usr/share/...): the sandbox does not
    show such files, the user's machine has its own, so what the call gives is noted as an
    environment read (no test asserts it)."""
    seen = _CV_STATE.get("env")
    if seen is None or isinstance(path, int) or (_CV_STATE.get("mine") and not _cv_by_the_code()):
        return
    import os
    try:
        p = os.fsdecode(os.fspath(path))
        if not os.path.isabs(p):
            p = os.path.join(os.getcwd(), p)
        p = os.path.normpath(p)
        cwd = os.getcwd()
    except Exception:
        return
    for root in [cwd] + _cv_visible_roots():
        if p == root or p.startswith(root.rstrip(os.sep) + os.sep):
            return
        if stat and root.startswith(p.rstrip(os.sep) + os.sep):  # (os.path.realpath's walk to it)
            return
    seen.add("file " + p)


def _cv_note_write(path):
    """A call's write outside the working directory (a file opened for writing, made, removed,
    renamed, changed): noted as an environment read. The sandbox shows every other place
    read-only, so the call failed there, or went another way, where on the user's machine it
    writes to their files (compileall's ``compile_path()`` compiled the project's own modules:
    False here; True under pytest, and a new ``compileall.pyc`` in the project). The
    interpreter's own bytecode caches are not written in a cell (``sys.dont_write_bytecode``), so
    a ``.pyc`` written is the code's."""
    seen = _CV_STATE.get("env")
    if seen is None or path is None or isinstance(path, int):
        return
    import os
    try:
        p = os.path.normpath(os.path.join(os.getcwd(), os.fsdecode(os.fspath(path))))
    except Exception:
        return
    if p in ("/dev/null", "/dev/zero", "/dev/full"):
        return
    base = _CV_STATE.get("cwd0")
    if base is not None:
        root, sandbox = base
        rel = os.path.relpath(p, root)
        if rel == os.curdir or (not rel.startswith(os.pardir) and rel.split(os.sep)[0] not in sandbox):
            return  # the working directory's (the test's tmp_path)
    seen.add("write " + p)


_CV_WRITE_MODES = frozenset("wax+")


def _cv_track_stdin_fd():
    """``open(0)`` (stdin by its descriptor, a file name from a command line) reads stdin too:
    pytest's capture gives it /dev/null, a terminal under ``pytest -s`` waits for input."""
    import builtins
    import io
    real = builtins.open
    if getattr(real, "_cv_wrapped", False):
        return

    def open(file, *args, **kwargs):
        if isinstance(file, int) and file >= 0 and _CV_STATE.get("ctx") is not None:  # (True is 1)
            # a descriptor the call did not open itself (os.open, os.pipe, os.dup, tempfile's
            # mkstemp) is the process's: stdout, stderr, the harness's channel, under pytest its
            # capture files, or none (what it is under pytest differs): netrc(file=1) closed
            # stdout, and under pytest every later test failed
            own = _CV_STATE.get("fds")
            if file == 0 or own is None or file not in own:
                raise _CvStdin()
        _cv_note_path(file)
        mode = args[0] if args else kwargs.get("mode", "r")
        if isinstance(mode, str) and _CV_WRITE_MODES.intersection(mode):
            _cv_note_write(file)
        return real(file, *args, **kwargs)

    open._cv_wrapped = True
    builtins.open = io.open = open

    import os
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def noted(real_fn):
        def opens(*args, **kwargs):
            if args:  # os.open(path, ...)
                _cv_note_path(args[0])
                if real_fn is real_open:
                    flags = args[1] if len(args) > 1 else kwargs.get("flags", 0)
                    if isinstance(flags, int) and flags & writes:
                        _cv_note_write(args[0])
            got = real_fn(*args, **kwargs)
            own = _CV_STATE.get("fds")
            if own is not None:
                own.update(got if type(got) is tuple else (got,))
            return got
        return opens

    real_open = os.open
    for name in ("open", "dup", "pipe"):
        setattr(os, name, noted(getattr(os, name)))
    try:  # (importlib's _write_atomic, py_compile's, calls posix.open)
        import posix
        posix.open = os.open
    except (ImportError, AttributeError, TypeError):
        pass

    def changes(real_fn, at):
        def change(*args, **kwargs):
            for k in at:
                if k < len(args):
                    _cv_note_write(args[k])
            return real_fn(*args, **kwargs)
        return change

    for name, at in (("mkdir", (0,)), ("remove", (0,)), ("unlink", (0,)), ("rmdir", (0,)), ("rename", (0, 1)),
                     ("replace", (0, 1)), ("link", (1,)), ("symlink", (1,)), ("truncate", (0,)), ("chmod", (0,)),
                     ("utime", (0,)), ("mkfifo", (0,))):
        if hasattr(os, name):
            setattr(os, name, changes(getattr(os, name), at))

    def by_descriptor(real_fn):
        # os.stat(5) (filecmp's cmp(5, 5): os.stat(f1), then open(f1, 'rb')): a descriptor the
        # call did not open is the process's, as for open(5) above (os.path's getsize, isfile...
        # call os.stat)
        def stat(path, *args, **kwargs):
            if isinstance(path, int) and _CV_STATE.get("ctx") is not None:
                own = _CV_STATE.get("fds")
                if own is None or path not in own:
                    raise _CvStdin()
            _cv_note_path(path, stat=True)
            return real_fn(path, *args, **kwargs)
        return stat

    for name in ("stat", "lstat", "fstat"):
        setattr(os, name, by_descriptor(getattr(os, name)))

    def listed(real_fn):
        def lists(*args, **kwargs):
            path = args[0] if args and args[0] is not None else kwargs.get("path") or "."
            if isinstance(path, int) and _CV_STATE.get("ctx") is not None:  # (as os.stat(5) above)
                own = _CV_STATE.get("fds")
                if own is None or path not in own:
                    raise _CvStdin()
            _cv_note_path(path)
            return real_fn(*args, **kwargs)
        return lists

    for name in ("listdir", "scandir"):
        setattr(os, name, listed(getattr(os, name)))

    def checked(real_fn):
        def access(path, *args, **kwargs):
            _cv_note_path(path)
            return real_fn(path, *args, **kwargs)
        return access

    os.access = checked(os.access)


def _cv_work_below():
    """The calls run in a fresh directory below the cell's own. With namespaces the cell's working
    directory is the sandbox's private /tmp itself, so a call writing the absolute path ``/tmp/x``
    looked like one writing ``x`` where it runs: the test asserted ``pathlib.Path('x')``, which
    under pytest (in its tmp_path; the file in the machine's /tmp) fails. Below it, such a write
    is one outside the working directory (:func:`_cv_note_write`), as a write into
    ``tempfile.gettempdir()`` already was; a write by the absolute path of a file where the call
    runs (``os.path.abspath(name)``) is still the working directory's."""
    import os
    try:
        work = os.path.join(os.getcwd(), "cv-work")
        os.mkdir(work)
        os.chdir(work)
    except OSError:
        pass


def _cv_holds_work(outs, state):
    """Whether what a probe observed holds the path of the directory its calls ran in
    (:func:`_cv_work_below`; ``os.path.abspath('')`` in an error message): true of the cell only."""
    import os
    base = _CV_STATE.get("cwd0")
    if base is None or not base[0].endswith(os.sep + "cv-work"):
        return False
    return base[0] in repr(outs) or base[0] in repr(state)


def _cv_probes(job):
    """Every variant of the job on its probe ids: ``{"results": {key: {pid: outcome}}, "arcs":
    {key: {pid: arcs}}}`` (arcs only with ``cov``)."""
    table = _CV_PROBES
    results = {}
    arcs = {}
    _cv_track_environ()
    _cv_track_random()
    _cv_track_stdin_fd()
    _cv_sys.dont_write_bytecode = True  # (a .pyc written is the code's: _cv_note_write)
    import os
    _cv_work_below()
    try:  # the cell's working directory as the sandbox made it (each probe leaves it so)
        _CV_STATE["cwd0"] = (os.getcwd(), frozenset(os.listdir(".")))
    except OSError:
        _CV_STATE["cwd0"] = None
    for v in job["variants"]:
        _cv_variant(v)
        limit = v.get("limit", 1.0)
        out = results.setdefault(v["key"], {})
        cov = None
        if job.get("cov"):
            import coverage
            cov = coverage.Coverage(data_file=None, branch=True, include=[job["file"]], config_file=False)
            cov.start()
        _CV_STATE["cov"] = cov
        overflow = set()
        described = set()
        try:
            for pid in v["ids"]:
                _CV_STATE["ctx"] = str(pid)
                _CV_STATE["fds"] = set()  # the descriptors this probe opens itself
                _CV_STATE["overflow"] = _CV_STATE["described"] = False
                _cv_ctx()
                try:
                    res = _cv_probe(table[pid], limit, v.get("import_limit"))
                finally:
                    _CV_STATE["ctx"] = None
                if _CV_STATE["overflow"]:
                    overflow.add(pid)
                if _CV_STATE["described"]:
                    described.add(pid)
                out[pid] = res
                if v.get("stop") and ("load" in res or (res["steps"] and res["steps"][-1][0] in
                                                        ("timeout", "output"))):
                    break
        finally:
            _CV_STATE["cov"] = None
            if cov is not None:
                cov.stop()
        if cov is not None:
            data = cov.get_data()
            a = arcs.setdefault(v["key"], {})
            for pid in v["ids"]:
                if pid not in out:
                    continue
                data.set_query_contexts([f"^{pid}$"])  # patterns: "1" alone would match "10", "21"
                a[pid] = sorted(data.arcs(job["file"]) or [])
                if pid not in described:
                    continue
                # what only reading the values ran: the parent credits it where the test asserts them
                data.set_query_contexts([f"^{pid}\\+d$"] + ([] if pid in overflow else [f"^{pid}\\+t$"]))
                extra = sorted(set(map(tuple, data.arcs(job["file"]) or [])) - set(map(tuple, a[pid])))
                if extra and isinstance(out[pid], dict):
                    out[pid]["darcs"] = extra
    return {"results": results, "arcs": arcs}


def _cv_inspect(job):
    import json
    import os
    import tempfile
    out = {"load": None, "statements": [], "branches": [], "enums": {}, "callables": []}
    cov = None
    try:
        import coverage
        cov = coverage.Coverage(data_file=None, branch=True, include=[job["file"]], config_file=False)
        cov.start()
    except Exception as exc:
        out["coverage_error"] = type(exc).__name__ + ": " + str(exc)
    mod = None
    import time
    t0 = time.perf_counter()
    import builtins
    _cv_track_environ()
    mine = _cv_code_prefix(job)
    missing = []
    real_import = builtins.__import__

    def _cv_import_noted(name, globals=None, locals=None, fromlist=(), level=0):
        try:
            return real_import(name, globals, locals, fromlist, level)
        except ModuleNotFoundError:
            if level == 0 and str((globals or {}).get("__file__") or "").startswith(mine):
                missing.append(name)
            raise

    try:
        sink = _CvDiscard()
        import contextlib
        _cv_arm(job.get("limit", 5.0))
        # what the import reads from the environment, and the optional dependencies it does not
        # find: the suite asserts what the code does here, with those variables unset and without them
        _CV_STATE["env"], _CV_STATE["mine"] = set(), mine
        builtins.__import__ = _cv_import_noted
        try:
            with contextlib.redirect_stdout(sink):
                mod = _cv_load()
        finally:
            _cv_disarm()
            builtins.__import__ = real_import
            read, _CV_STATE["env"], _CV_STATE["mine"] = _CV_STATE["env"], None, None
            out["import_env"] = sorted(k for k in read if not _cv_benign_env(k))[:20]
            out["import_missing"] = sorted(set(missing))[:20]
        out["load_seconds"] = time.perf_counter() - t0
    except _CvTimeout:
        out["load"] = [[["builtins", "TimeoutError"]], "importing the module did not finish in time", 0]
    except BaseException as exc:
        out["load"] = _cv_exc(exc, job["file"])
    finally:
        if cov is not None:
            cov.stop()
    if cov is not None:
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            cov.json_report(outfile=path, show_contexts=False)
            with open(path) as fh:
                rep = json.load(fh)
            for fdata in rep.get("files", {}).values():
                out["statements"] = sorted(set(fdata.get("executed_lines", [])) |
                                           set(fdata.get("missing_lines", [])))
                out["branches"] = sorted([tuple(b) for b in fdata.get("executed_branches", [])] +
                                         [tuple(b) for b in fdata.get("missing_branches", [])])
        except Exception as exc:
            out["coverage_error"] = type(exc).__name__ + ": " + str(exc)
    if mod is not None:
        import enum
        for k, v in list(vars(mod).items()):
            if isinstance(v, type) and getattr(v, "__module__", None) == mod.__name__ and issubclass(v, enum.Enum):
                out["enums"][k] = [m.name for m in v]
            if callable(v) and not k.startswith("__"):
                out["callables"].append(k)
        out["data"] = [k for k, v in vars(mod).items() if not k.startswith("_") and not callable(v)
                       and type(v) in (list, tuple, dict, set, frozenset, str, int, float, bool, bytes)
                       and _cv_is_plain(v, [300]) and len(repr(v)) <= 10000]
    return out


def _cv_doctests(job):
    import doctest
    import contextlib
    out = []
    try:
        with contextlib.redirect_stdout(_CvDiscard()):
            mod = _cv_load()
    except BaseException as exc:
        return {"load": _cv_exc(exc, job["file"]), "examples": []}

    class Runner(doctest.DocTestRunner):
        def report_start(self, out_, test, example):
            pass

        def report_success(self, out_, test, example, got):
            out.append([test.name, (test.lineno or 0) + example.lineno + 1, example.source, example.want,
                        got, None, True])

        def report_failure(self, out_, test, example, got):
            out.append([test.name, (test.lineno or 0) + example.lineno + 1, example.source, example.want,
                        got, None, False])

        def report_unexpected_exception(self, out_, test, example, exc_info):
            exc = exc_info[1]
            if isinstance(exc, (NameError, ImportError)):  # the example needs what is not in scope
                return
            if isinstance(exc, SyntaxError) and str(exc.filename or "").startswith("<doctest "):
                return  # the example itself is not Python (a string without its `...` lines): no evidence
            out.append([test.name, (test.lineno or 0) + example.lineno + 1, example.source, example.want,
                        "", [_cv_path(type(exc)), str(exc)[:500]], False])

    finder = doctest.DocTestFinder(recurse=True, exclude_empty=True)
    globs = dict(mod.__dict__)
    globs.setdefault(mod.__name__.rpartition(".")[2], mod)  # examples often call module.f(...)
    try:
        tests = finder.find(mod, mod.__name__, globs=globs)
    except BaseException as exc:
        if isinstance(exc, (_CvTimeout, KeyboardInterrupt)):
            raise
        return {"load": None, "examples": [], "error": str(exc)[:300]}
    runner = Runner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False)
    for test in tests:
        if test.name.split(".")[-1].startswith("_") and test.name != mod.__name__:
            continue
        _cv_arm(job.get("limit", 2.0))
        try:
            with contextlib.redirect_stderr(_CvSink()):
                runner.run(test, out=lambda s: None, clear_globs=True)
        except _CvTimeout:
            out.append([test.name, test.lineno or 0, "", "", "", [["builtins", "TimeoutError"], "timeout"],
                        False])
        finally:
            _cv_disarm()
    return {"load": None, "examples": out}


def _cv_pytest(job):
    """Run the suite (:func:`_cv_pytest_in`); its work directory and project mirror are removed
    afterwards (where the sandbox gives no fresh /tmp per cell, they piled up)."""
    temps = []
    try:
        return _cv_pytest_in(job, temps)
    finally:
        for path in temps:
            _cv_remove_path(path)


def _cv_pytest_in(job, temps):
    import os
    import subprocess
    import tempfile
    work = tempfile.mkdtemp(prefix="cv-pytest-")
    temps.append(work)
    for name, text in job["files"].items():
        with open(os.path.join(work, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    with open(os.path.join(work, "conftest.py"), "w") as fh:
        fh.write(_CV_CONFTEST + _cv_standin_prelude(job))
    project = None if job.get("inprocess") else job.get("project")
    paths = list(job["paths"])
    targets = [os.path.join(work, f) for f in sorted(job["files"])]
    if project:
        # the user's project as `pytest` there sees it: its configuration file and conftests
        # (copies), the rest of the directories down to the suite's linked; coevo's conftest
        # becomes a plugin (-p), and the user's installed plugins load as they do for the user
        mirror = tempfile.mkdtemp(prefix="cv-project-")
        temps.append(mirror)
        here = os.path.join(mirror, project["dir"])
        os.makedirs(here, exist_ok=True)
        for rel, target in project["links"].items():
            try:
                os.makedirs(os.path.dirname(os.path.join(mirror, rel)), exist_ok=True)
                os.symlink(target, os.path.join(mirror, rel))
            except OSError:
                pass
        for rel, text in project["files"].items():
            with open(os.path.join(mirror, rel), "w", encoding="utf-8") as fh:
                fh.write(text)
        targets = []
        for name, text in sorted(job["files"].items()):
            dest = os.path.join(here, project["name"] if len(job["files"]) == 1 else name)
            if os.path.lexists(dest):
                os.unlink(dest)
            with open(dest, "w", encoding="utf-8") as fh:
                fh.write(text)
            targets.append(dest)
        plugdir = os.path.join(work, "cv-plugin")
        os.makedirs(plugdir, exist_ok=True)
        with open(os.path.join(plugdir, "_cv_plugin.py"), "w") as fh:
            fh.write(_CV_CONFTEST + _cv_standin_prelude(job))
        paths.append(plugdir)
    procs = []
    for k, (seed, reverse) in enumerate(job["runs"]):
        xml = os.path.join(work, f"r{k}.xml")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work, "PYTHONHASHSEED": str(seed),
               "PYTHONPATH": os.pathsep.join(paths), "CV_REVERSE": "1" if reverse else "0",
               "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": work, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
               "CV_STARTED": os.path.join(work, f"r{k}.started"), "CV_TEST_LIMIT": str(_CV_TEST_LIMIT)}
        cwd = work
        if project:
            cwd = mirror
            del env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"]
        if k % 2 == 1:
            # another machine and user, as far as the code can tell: a test asserting what
            # depends on them (user, host, HOME, TMPDIR, terminal size, CPU count, kernel, time
            # zone, the working directory's path) fails one of the runs and is dropped
            cwd = os.path.join(work, f"elsewhere-{k}")
            for d in ("home", "tmp", "cwd"):
                os.makedirs(os.path.join(cwd, d), exist_ok=True)
            env.update({"HOME": os.path.join(cwd, "home"), "TMPDIR": os.path.join(cwd, "tmp"),
                        "USER": "coevo-other-user", "LOGNAME": "coevo-other-user", "COLUMNS": "131",
                        "LINES": "47", "SHELL": "/bin/coevo-other-sh", "CV_OTHER": "1",
                        "CV_SHIFT_H": "12" if k == 1 else "1",  # (two clock shifts: see the conftest)
                        # and another time zone (UTC+5:30, a POSIX rule: no zone files needed)
                        "TZ": "CVT-5:30"})
            cwd = os.path.join(cwd, "cwd")
        cmd = [_cv_sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--junitxml", xml, "-o", "junit_family=xunit1", "--rootdir", work]
        if project:
            cmd[-1] = mirror
            cmd += ["--confcutdir", mirror, "-p", "_cv_plugin"]
        cmd += targets
        log = open(os.path.join(work, f"r{k}.log"), "w")
        if job.get("inprocess"):  # the sandbox refused a new process: this cell is the fresh process
            return _cv_pytest_here(job, work, xml, reverse)
        try:
            procs.append((subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT), xml, log))
        except OSError as exc:
            return {"spawn_error": type(exc).__name__ + ": " + str(exc)}
    runs = []
    tail = ""
    for k, (proc, xml, log) in enumerate(procs):
        culprit = os.path.join(work, f"r{k}.started")
        try:
            rc = proc.wait(timeout=job.get("timeout", 120))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            log.close()
            runs.append(dict({"__timeout__": "timeout"}, **_cv_culprit(culprit)))
            continue
        log.close()
        with open(os.path.join(work, f"r{k}.log")) as fh:
            tail = fh.read()[-3000:]
        try:
            outcome = _cv_junit(xml)
        except Exception as exc:
            outcome = dict({"__error__": type(exc).__name__ + ": " + str(exc)}, **_cv_culprit(culprit))
        outcome["__rc__"] = rc
        if project:
            outcome["__project__"] = tail
        runs.append(outcome)
    if len(repr(runs)) > 32 << 10:  # a big suite: only what did not pass, and how many ran
        runs = [_cv_compact(r) for r in runs]
    return {"runs": runs, "tail": tail}


_CV_CONFTEST = """import os

import pytest


def pytest_collection_modifyitems(items):
    if os.environ.get('CV_REVERSE') == '1':
        items.reverse()


def _cv_note(what, nodeid):  # which test was running when a run died (killed for its memory...)
    if os.environ.get('CV_STARTED'):
        with open(os.environ['CV_STARTED'], 'a') as fh:
            fh.write(what + ' ' + nodeid + '\\n')


def pytest_runtest_logstart(nodeid, location):
    _cv_note('start', nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _cv_note('end', nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    # a test that runs far longer than its calls did when observed (more-itertools: an iterator
    # read to its end that the harness had used up) fails alone, instead of stopping the run
    import signal
    limit = float(os.environ.get('CV_TEST_LIMIT') or 0)
    if not limit or not hasattr(signal, 'setitimer'):
        yield
        return

    def _late(signum, frame):
        raise TimeoutError('coevo: the test ran for more than %s s' % limit)

    old = signal.signal(signal.SIGALRM, _late)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


if os.environ.get('CV_OTHER') == '1':  # the run on 'another machine': host, CPUs, kernel
    import platform
    import socket

    _n = (os.cpu_count() or 1) + 3
    _u = os.uname()
    socket.gethostname = lambda: 'coevo-other-host'
    os.cpu_count = lambda: _n
    if hasattr(os, 'process_cpu_count'):
        os.process_cpu_count = lambda: _n
    if hasattr(os, 'sched_getaffinity'):
        os.sched_getaffinity = lambda pid: set(range(_n))
    os.uname = lambda: os.uname_result((_u.sysname, 'coevo-other-host', _u.release + '-other',
                                        _u.version + ' (other)', _u.machine))
    platform._uname_cache = None
    if hasattr(platform, '_platform_cache'):
        platform._platform_cache.clear()

    # and another file system: a directory's entries come in the order the file system keeps
    # them (the sandbox's tmpfs, the user's ext4 or APFS), here reversed: a test asserting that
    # order (os.listdir(d)[0], glob's unsorted result) fails this run and is dropped
    _ld, _sd = os.listdir, os.scandir

    def _cv_listdir(*args, **kwargs):
        return _ld(*args, **kwargs)[::-1]

    class _CvScandir:
        def __init__(self, it):
            self._it = it
            self._left = iter(list(it)[::-1])

        def __iter__(self):
            return self

        def __next__(self):
            return next(self._left)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._it.close()

        def close(self):
            self._it.close()

    os.listdir = _cv_listdir
    os.scandir = lambda *args, **kwargs: _CvScandir(_sd(*args, **kwargs))

    # and 400 days and 12 hours later: what depends on the clock (time.time(), date.today(),
    # the year, the weekday) fails this run and is dropped. The C datetime reads the system clock
    # itself: the code gets the standard library's pure-Python datetime (and zoneinfo, and
    # _strptime built on it), which reads time.time(); pytest's own imports keep theirs
    import sys as _sys
    import time as _time

    # (with the time zone, local hours 17.8 apart in one such run and 6.8 in the other: a behaviour
    # of the hour of day that one shift lands on the same value for, such as 'afternoon' at 00:10
    # and at 17:58, the other does not)
    _shift = 400 * 86400 + float(os.environ.get('CV_SHIFT_H', '12')) * 3600 + 1017.25
    _t, _tn = _time.time, _time.time_ns
    _lt, _gt, _ct, _sf, _asc = _time.localtime, _time.gmtime, _time.ctime, _time.strftime, _time.asctime
    _time.time = lambda: _t() + _shift
    _time.time_ns = lambda: _tn() + int(_shift * 1e9)
    _time.localtime = lambda secs=None: _lt(_time.time() if secs is None else secs)
    _time.gmtime = lambda secs=None: _gt(_time.time() if secs is None else secs)
    _time.ctime = lambda secs=None: _ct(_time.time() if secs is None else secs)
    _time.asctime = lambda t=None: _asc(_time.localtime() if t is None else t)
    _time.strftime = lambda fmt, t=None: _sf(fmt, _time.localtime() if t is None else t)
    for _m in ('datetime', '_pydatetime', '_strptime', 'zoneinfo', 'zoneinfo._zoneinfo', 'zoneinfo._common',
               'zoneinfo._tzpath'):
        _sys.modules.pop(_m, None)
    _sys.modules['_datetime'] = None
    _sys.modules['_zoneinfo'] = None
"""


_CV_TEST_LIMIT = 5.0  # seconds a verification run gives one test (its calls took at most 1 s observed)


def _cv_culprit(path):
    """``{"__culprit__": node id}``: the test a pytest process that died (or hung) was running,
    from the start / end lines the conftest wrote; {} when none was."""
    try:
        with open(path) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return {}
    started, ended = [], set()
    for ln in lines:
        what, _, nodeid = ln.partition(" ")
        if what == "start":
            started.append(nodeid)
        elif what == "end":
            ended.add(nodeid)
    left = [n for n in started if n not in ended]
    return {"__culprit__": left[-1]} if left else {}


_CV_LISTED = 100  # tests other than passed named per run (the rest show in the next round)


def _cv_compact(outcome):
    """A big suite's run as the cell returns it: the tests that did not pass (at most
    ``_CV_LISTED``) and ``__total__``; every test's name for four runs of a big suite (188 tests
    of more-itertools) was past the 64 KB a cell's value may hold, and nothing came back."""
    out = {}
    names = [k for k in outcome if not k.startswith("__")]
    for k in names:
        if outcome[k] != "passed" and len(out) < _CV_LISTED:
            out[k] = outcome[k]
    out.update({k: v for k, v in outcome.items() if k.startswith("__")})
    out["__total__"] = len(names)
    return out


def _cv_junit(xml):
    import xml.etree.ElementTree as ET
    outcome = {}
    root = ET.parse(xml).getroot()
    for case in root.iter("testcase"):
        cls = case.get("classname", "")
        name = (cls.rpartition(".")[2] + ".py::" if cls else "") + case.get("name", "")
        status = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                status = child.tag
            elif child.tag == "skipped":
                status = "skipped"
        outcome[name] = status
    return outcome


class _CvCapsys:
    """What the generated tests use of pytest's ``capsys``: ``readouterr().out``."""

    def __init__(self):
        self.sink = _CvSink()

    def readouterr(self):
        import collections
        out = self.sink.getvalue()
        self.sink.parts, self.sink.size = [], 0
        return collections.namedtuple("CaptureResult", "out err")(out, "")


class _CvMonkeypatch:
    """What the generated tests use of pytest's ``monkeypatch``: ``setattr('sys.argv', value)``
    (and ``setattr(obj, name, value)``), undone after the test."""

    def __init__(self):
        self._undo = []

    def setattr(self, target, name, *value):
        import importlib
        if not value and isinstance(target, str):
            mod, _, attr = target.rpartition(".")
            obj, value = importlib.import_module(mod), name
        else:
            obj, attr, value = target, name, value[0]
        self._undo.append((obj, attr, getattr(obj, attr)))
        setattr(obj, attr, value)

    def undo(self):
        for obj, attr, old in reversed(self._undo):
            setattr(obj, attr, old)
        self._undo = []


def _cv_pytest_here(job, work, xml, reverse):
    """One run of the test functions in this (fresh) cell process, when no new process may be
    started: each file executed as a module, its ``test_*`` functions called in order (or in
    reverse), ``capsys`` provided; no pytest machinery (its assertion rewriting builds code
    objects, which a sandbox may forbid)."""
    import contextlib
    import inspect
    _cv_sys.path[:0] = [work] + list(job["paths"])
    if job.get("standins"):
        exec(compile(_cv_standin_prelude(job), "<standins>", "exec"), {"__name__": "_cv_standins"})
    outcome = {}
    tests = []
    for fname in sorted(job["files"]):
        ns = {"__name__": fname[:-3], "__file__": fname}
        try:
            exec(compile(job["files"][fname], fname, "exec"), ns)
        except BaseException as exc:
            if isinstance(exc, (_CvTimeout, KeyboardInterrupt)):
                raise
            return {"runs": [{"__error__": f"{fname}: {type(exc).__name__}: {exc}", "__rc__": 2}], "tail": ""}
        tests += [(f"{fname}::{k}", f) for k, f in ns.items() if k.startswith("test") and inspect.isfunction(f)]
    if reverse:
        tests.reverse()
    for name, f in tests:
        cap = _CvCapsys()
        mp = _CvMonkeypatch()
        params = inspect.signature(f).parameters
        kwargs = {k: v for k, v in (("capsys", cap), ("monkeypatch", mp)) if k in params}
        try:
            with contextlib.redirect_stdout(cap.sink):
                f(**kwargs)
            outcome[name] = "passed"
        except AssertionError:
            outcome[name] = "failure"
        except BaseException as exc:
            if isinstance(exc, (_CvTimeout, KeyboardInterrupt)):
                raise
            outcome[name] = "error"
        finally:
            mp.undo()
    outcome["__rc__"] = 0 if all(v == "passed" for v in outcome.values()) else 1
    return {"runs": [outcome], "tail": ""}


def _cv_main():
    job = __coevo_job__
    op = job["op"]
    if op == "probes":
        return _cv_probes(job)
    if op == "inspect":
        return _cv_inspect(job)
    if op == "doctests":
        return _cv_doctests(job)
    if op == "pytest":
        return _cv_pytest(job)
    raise ValueError("unknown job")
'''

# one source for what the sandbox binds from the machine: the sandbox's own list
SOURCE = SOURCE.replace("__CV_SHOWN__", repr(SYSTEM_BINDS + HOST_ETC_FILES), 1)


def source() -> str:
    return SOURCE
