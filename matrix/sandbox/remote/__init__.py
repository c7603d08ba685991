"""Generic tests with the verdict outside the program's process: a *test process* runs the test,
a *program process* serves the program, and the two talk over a socket.

A test that cannot be split into values and a judgement the parent evaluates (several
statements, loops, ``try``/``except``, a ``check(candidate)`` function...) still must not run
inside the program's process: there the program could rewrite the test's expected values, its
assertions or the channel its verdict travels on. So the test runs in a process of its own (the
test process, mode ``test``), whose free names resolve to the program's definitions through
remote references; every call, attribute, item, iteration, truth value and length of a program
object is a request to the program process (mode ``serve``), and every answer comes back as plain
data (:mod:`.encoding`) or as a reference to another program object. The test process decides
the verdict and writes it on its own channel; the program process has no channel to the worker.

What crosses is plain data, decoded under a work budget, or references. Comparisons between a
program object and a value of the test use no program code (a program object equals nothing of the
test's, as in the parent's evaluator; two program objects compare with the program's own ``==``,
and a program object in a set or a dict key hashes with its own ``hash``); the containers of a
call's arguments (lists, dicts, sets, bytearrays, deques, nested ones too) go with their shape, so
the program sees the test's aliasing and cycles, and those it changes in place are changed in place
in the test after the call: their new contents come back with marks (``{"M": n}``) for the call's
containers, which the test side turns into its own objects (so a name the test kept for an inner
list sees the change, and one the program replaced keeps its old contents, as in Python); functions
and objects the test hands to the program become references it can call, iterate or read (public
attributes only) but not rewrite, except plain instances; a container the program reads from one of
them during a call (an attribute, what a function of the test's returns, an iterator's next item)
counts as one of the call's containers, so the program's changes to it are made in the test too. A
program's enum member with a ``str``, ``int``, ``float`` or ``bytes`` mixin (or an object of a
subclass of one keeping its ``==``, hash and conversions) is, in the test, an instance of a
subclass of that type made for it, holding its value, one per program object
(:meth:`_Peer._member`): C code takes it as the str or int it is, and ``is`` holds between two
references to it and only them. A program's class is, in the test, a class standing for it
(:class:`_ProgramClass`), and a reference to a program object is an instance of the one for its
class (``type(x) is Point``); a dataclass's carries the dataclass's fields (``dataclasses.asdict``,
``fields``, ``replace`` take its instances). A container that lives on after the request that
carried it, on the other side (a container of the test's a program keeps, ``self.xs = xs``; one
a program object holds and the test reads, ``b.grid``), is *kept*: numbered alike on both sides
(up to 64, 1,024 items), its changes on either side are sent to the other before the other runs
again (a ``kept`` request), and the test side holds one object for it (``b.items is b.items``).
What a function of the test's changes in the program's containers it is given is changed in the
program's. A program object answers ``with`` (whose ``__exit__`` never swallows the test's failed
assertion), the in-place operators, ``round``, ``divmod``, ``reversed``, ``math.floor``,
``copy``; a program's exception class keeps its own ``str`` and ``repr`` in the test.

Wire: length-prefixed JSON arrays. Request ``["q", op, ...]`` (a call: ``["q", "call", function,
args, kwargs, shape]``, :class:`_Shape`), reply ``["r", value, writeback]`` (``writeback``: a
list of ``["N", n, new contents]``, or ``[argument, new value]`` for a numpy array), with a fourth
element when the value is one of the call's containers handed back (adopted, not copied), or
``["x", [type name, builtin base, message, class reference or null], writeback]`` when the call
raised after changing its arguments (a fourth element: the program's reference number of the
exception, which the test's then follows as a returned one's: ``["o", "exc", number, description,
traceback]`` before a message where it changed, ``["q", "excset", [[number, state], ...]]`` for the
test's changes; red-team pass 36). ``writeback`` items ``["K", n, k]`` (container ``n`` of the
call, kept as ``k``) and ``["K", "v", k]`` (the value, kept as ``k``) name kept containers;
``["q", "kept", [[k, new contents], ...]]`` carries their changes. A reference is
``{"R": [side, id, type name, flags]}``, ``side`` "C" (program) or "T" (test); a fifth element
carries a numpy array's data, a sixth a member's value (:meth:`_Peer._member`).

What one interpreter shares in plain Python is shared (red-team pass 18): before each of its
messages the program process sends ``["o", "out"|"err", text]`` (what the program printed since,
written to the test's stream where the test captures it), ``["o", "random", state]`` (the
``random`` generator's state where the program moved it) and ``["o", "global", name, value, kept]``
(a global the test reads that the program bound anew); the test process asks ``random`` and
``recursionlimit`` before a request where the test moved the generator or the limit. The globals the
test reads that are containers are kept ones. Names the test binds stay the test's alone (their
values never reach the program's process), at its top level or through ``global`` in a function of
its own. The shared ``random`` generator is shared as in one interpreter: a program can read the
state the test's draws leave and move it, as ``random.getstate()`` / ``setstate`` could in plain
Python, so a test should not keep a value it drew from ``random`` secret from the program it judges
(the one trade of fidelity against isolation made here; review of red-team pass 18). A recursion
limit the test sets reaches the program capped at ``peer.RECURSION_CAP``. Files either process
makes are open to the other. The conversation breaking (the program's process ending, a malformed
message, a value past its budget) makes the verdict an error whatever the test caught
(:attr:`_Peer.broken`).

Red-team pass 19 shares more of what one interpreter has once: ``warnings`` (a program's warning,
once loaded, goes through the test's filters: ``pytest.warns``, ``simplefilter('error')``, a
``["q", "warn", ...]`` request), ``logging`` (where the test's text names ``logging``,
``assertLogs`` or ``assertNoLogs``, each record the program logs goes to the test's logger of
that name: a ``["q", "log", ...]`` request), exception classes of the standard library (the
test's own ``json.JSONDecodeError``, not a stand-in), ``print`` and ``open`` where the test
replaced them in ``builtins`` (``mock.patch('builtins.open', mock_open(...))``: the program's names
call the test's objects; a ``["q", "builtins", ...]`` request where the test's text names
``builtins``), standard input (from its
loading on, the program's ``input()`` and ``sys.stdin`` read the test's: ``sys.stdin =
io.StringIO(...)``, ``mock.patch('builtins.input', ...)``; a ``["q", "stdin", what, size, binary]``
request the test side answers only with its ``builtins.input`` or a read of its ``sys.stdin``), and,
where the test's text names ``environ``, ``putenv``, ``unsetenv``, ``chdir``, ``argv``,
``int_max_str_digits`` or ``context``, the environment, working directory, command line, int
digit limit and ``decimal`` context the test set (a ``["q", "process", ...]`` request
before the next request where they changed; the program's own changes stay its own).
"""

from __future__ import annotations

from .program_side import serve
from .test_side import free_names, run_test

__all__ = ["serve", "run_test", "free_names"]
