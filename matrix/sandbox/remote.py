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
``fields``, ``replace`` take its instances).

Wire: length-prefixed JSON arrays. Request ``["q", op, ...]`` (a call: ``["q", "call", function,
args, kwargs, shape]``, :class:`_Shape`), reply ``["r", value, writeback]`` (``writeback``: a
list of ``["N", n, new contents]``, or ``[argument, new value]`` for a numpy array), with a fourth
element when the value is one of the call's containers handed back (adopted, not copied), or
``["x", [type name, builtin base, message, class reference or null], writeback]`` when the call
raised after changing its arguments. A reference is ``{"R": [side, id, type name, flags]}``,
``side`` "C" (program) or "T" (test); a fifth element carries a numpy array's data, a sixth a
member's value (:meth:`_Peer._member`).
"""

from __future__ import annotations

import builtins
import collections
import json as _json
import socket
import struct
import sys

from .encoding import decode, make_encoder
from .records import Frame

__all__ = ["serve", "run_test"]

RPC_FD = 5
_LEN = struct.Struct("<I")
_EXC_BASES = {n: getattr(builtins, n) for n in dir(builtins)
              if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)}
_MAX_OBJECTS = 100_000
_BINOPS = frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift",
                     "rshift", "matmul", "lt", "le", "gt", "ge"})


class RemoteError(Exception):
    """The other process broke the protocol or went away."""


class _Raised(Exception):
    """A program's call raised ``exc`` after changing its arguments (``changes``, encoded)."""

    def __init__(self, exc: BaseException, changes: list):
        super().__init__()
        self.exc = exc
        self.changes = changes


class _Peer:
    """One end of the conversation: an export table for its own objects, proxies for the other
    side's, and a request loop that serves the other side's requests while it waits."""

    def __init__(self, sock: socket.socket, side: str, max_msg: int, budget: float):
        self.sock = sock
        self.side = side
        self.other = "T" if side == "C" else "C"
        self.max_msg = max_msg
        self.budget = budget
        self.exports: dict[int, object] = {}
        self.export_ids: dict[int, int] = {}  # id(obj) -> export id (the object stays referenced)
        self.proxies: dict[int, object] = {}
        self.exc_classes: dict[int, type] = {}
        self.call_nodes: list[list] = []  # the test side: the containers of each pending call's arguments
        self.call_index: list[dict] = []  # the test side: id -> number of those, where looked up
        self.pending: list[tuple] = []  # the program side: (nodes, marks, before) of each call it serves
        self.array_left = _MAX_ARRAY_BYTES  # bytes the arrays of the message being decoded may still take
        self.decoding = 0  # messages being decoded (a proxy's hash in one asks the other side)
        # the program's enum members, numpy bools and subclasses of builtin types go as references
        # that compare with the test's values by their plain value (``plain``); the test's own
        # travel as their plain value, as before
        self.member_classes: dict[tuple, type] = {}  # the test side: classes made for the program's members
        self.member_types: set[type] = set()
        self.program_classes = 0
        self.dataclasses_made = 0
        self.encode = make_encoder(subclass_hook=self._plain_ref if side == "C" else self._flat)
        self.encode_flat = make_encoder(subclass_hook=_flat)
        self.buf = bytearray()

    # -- transport (references captured at import: a program that rebinds builtins or the json
    # module in its own process does not break its side of the conversation)
    def send(self, msg, _dumps=_json.dumps, _len=len, _pack=_LEN.pack) -> None:
        data = _dumps(msg, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        if _len(data) > self.max_msg:
            raise RemoteError("message larger than the output cap")
        self.sock.sendall(_pack(_len(data)) + data)

    def recv(self, _len=len, _unpack=_LEN.unpack_from, _bytes=bytes, _type=type, _list=list):
        while True:
            if _len(self.buf) >= 4:
                (n,) = _unpack(self.buf, 0)
                if n > self.max_msg:
                    raise RemoteError("message larger than the output cap")
                if _len(self.buf) >= 4 + n:
                    data = _bytes(self.buf[4:4 + n])
                    del self.buf[:4 + n]
                    if not self.decoding:  # (for all the arrays of one message, and of those its
                        self.array_left = _MAX_ARRAY_BYTES  # decoding asks for: a key's hash)
                    self.decoding += 1
                    try:
                        msg = decode(data, self.budget, refs=self.resolve_ref,
                                     marks=self.resolve_mark if self.side == "T" else None)
                    finally:
                        self.decoding -= 1
                    if _type(msg) is not _list or not msg or msg[0] not in ("q", "r", "x"):
                        raise RemoteError("malformed message")
                    return msg
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise RemoteError("the other process ended")
            self.buf += chunk

    # -- values
    def _plain_ref(self, obj, flat, base) -> dict:
        """A program object with a plain value (an enum member, a numpy bool, a subclass of a
        builtin type not overriding ``==``): a reference (its own methods, identity, type) that
        equals what its current plain value equals (:meth:`_Proxy.__eq__`)."""
        ref = self.export(obj)
        ref["R"][3] += ["plain"] + ([f"base:{base.__name__}"] if base in _PLAIN_BASES.values() else [])
        if base is None:  # a numpy bool: a numpy bool of the test's, where it can make one
            data = _array_data(obj, self.encode_flat)
            if data is not None:
                ref["R"].append(data)
        elif base in _MEMBER_BASES:  # a str or an int of the test's that stands for it (:meth:`_member`)
            names = _forwarded_names(type(obj), base)
            if names is not None:
                ref["R"] += [None, [flat, names]]
        return ref

    def _flat(self, obj, flat, base):
        """The test's enum members and subclasses of builtin types travel as their plain value; the
        program's members (:meth:`_member`) as references to the program's objects."""
        if type(obj) in self.member_types:
            return self.to_wire(obj)
        return flat

    def _member(self, proxy, tname, base, data):
        """A program's object whose plain value is a str, int, float or bytes (an enum member with a
        builtin mixin, a subclass of such a type keeping its ``==`` and hash), as the test side
        holds it: an instance of a subclass of that type made for it, of that value (so C code
        needing a real str or int takes it: ``", ".join``, ``json``, ``re``, ``range``), its
        ``str``, ``repr``, ``format``, operators and methods the program's class defines asked of
        the program's object, as its other attributes are; one per program object (identity).
        None where ``data`` is not such a value (the reference stands)."""
        if type(data) is not list or len(data) != 2 or type(data[0]) is not base or type(data[1]) is not list \
                or len(data[1]) > _MAX_FORWARDED:
            return None
        names = data[1]
        for n in names:
            if type(n) is not str or not (n in _FORWARD_DUNDERS or (not n.startswith("_") and n.isidentifier()
                                                                    and len(n) <= 64 and hasattr(base, n))):
                return None
        key = (tname, base, tuple(names))
        cls = self.member_classes.get(key)
        if cls is None:
            if len(self.member_classes) >= 256:
                return None
            ns: dict = {"__module__": "solution", "__getattr__": _member_getattr,
                        "__setattr__": _member_setattr, "__delattr__": _member_delattr}
            for n in names:
                ns[n] = _member_forwarder(n) if n.startswith("__") else property(_member_reader(n))
            safe = tname if tname.isidentifier() else "ProgramValue"
            cls = type(safe, (base,), ns)
            self.member_classes[key] = cls
            self.member_types.add(cls)
        member = cls(data[0])
        object.__getattribute__(member, "__dict__")["_coevo_proxy"] = proxy
        return member

    def export(self, obj) -> dict:
        key = id(obj)
        eid = self.export_ids.get(key)
        if eid is None:
            if len(self.exports) >= _MAX_OBJECTS:
                raise RemoteError("too many objects")
            eid = len(self.exports) + 1
            self.exports[eid] = obj
            self.export_ids[key] = eid
        flags = []
        name = type(obj).__name__
        if isinstance(obj, type):
            flags.append("class")
            if issubclass(obj, BaseException):
                base = next((c.__name__ for c in obj.__mro__ if c in _EXC_BASES.values()), "Exception")
                flags.append("exc:" + base)
                # the class's own name (its type's is "type": errors read "type: x")
                name = type.__dict__["__name__"].__get__(obj)
            elif self.side == "C":
                flags.append("name:" + str(type.__dict__["__name__"].__get__(obj))[:100])
                flags += self._dataclass_flags(obj)
        elif self.side == "C" and type.__dict__["__module__"].__get__(type(obj)) != "builtins" \
                and not isinstance(obj, BaseException):
            # its class's reference: the test holds it as an instance of the class it has for it
            flags.append(f"cls:{self.export(type(obj))['R'][1]}")
            flags += self._dataclass_flags(obj)
        if callable(obj):
            flags.append("callable")
        return {"R": [self.side, eid, str(name)[:100], flags]}

    def _dataclass_flags(self, obj) -> list:
        """The program's side: for a dataclass or an instance of one, its fields' names
        (``fields:x,y``), so that the test's ``dataclasses.asdict``, ``fields``, ``replace`` take
        it (:meth:`_program_class`)."""
        if "dataclasses" not in sys.modules:
            return []
        try:
            dc = sys.modules["dataclasses"]
            if not dc.is_dataclass(obj):
                return []
            names = [f.name for f in dc.fields(obj)]
            if len(names) > _MAX_FIELDS or any(type(n) is not str or not _field_name(n) for n in names):
                return []
            return ["fields:" + ",".join(names)]
        except Exception:  # noqa: BLE001 - an odd class: a plain reference
            return []

    def _program_class(self, rid: int, name: str, fields):
        """The test's side: the class standing for the program's class ``rid`` (a
        :class:`_ProgramClass`, whose instances are the references to the program's objects of
        that class, so ``type(x) is Point`` holds), carrying the fields of a dataclass of the
        names ``fields`` gives (made by ``dataclasses.make_dataclass``; names that are not
        fields' give none); None past 1024 classes (a plain reference stands)."""
        if self.program_classes >= _MAX_CLASSES:
            return None
        ns: dict = {"__slots__": (), "__module__": "solution", "_coevo_peer": self, "_coevo_rid": rid}
        names = fields.split(",") if fields else []
        if fields is not None and len(fields) < 1 << 14 and len(names) <= _MAX_FIELDS \
                and all(_field_name(n) for n in names) and len(set(names)) == len(names) \
                and self.dataclasses_made < _MAX_DATACLASSES:  # (each costs compiling its methods)
            import dataclasses

            self.dataclasses_made += 1

            try:
                made = dataclasses.make_dataclass(name if _field_name(name) else "ProgramDataclass", names)
                ns["__dataclass_fields__"] = made.__dict__["__dataclass_fields__"]
                ns["__dataclass_params__"] = made.__dict__["__dataclass_params__"]
            except Exception:  # noqa: BLE001 - keywords...: no dataclass of these names
                pass
        self.program_classes += 1
        return _ProgramClass(name if name.isidentifier() else "ProgramClass", (_Proxy,), ns)

    def _class_of(self, cid: int, tname: str, fields):
        """The class an object of the program's class ``cid`` is an instance of in the test."""
        c = self.proxies.get(cid)
        if c is None and len(self.proxies) < _MAX_OBJECTS:
            c = self._program_class(cid, tname, fields)
            if c is not None:
                self.proxies[cid] = c
        return c if type(c) is _ProgramClass else _Proxy

    def to_wire(self, value, depth=0, marks=None):
        """Plain data as such, this side's objects as references, the other side's as theirs;
        lists, tuples and dicts that hold references are sent element by element. ``marks``
        (``id -> n``): containers of the test's a call was given, sent as ``{"M": n}``."""
        if isinstance(value, _Proxy) and object.__getattribute__(value, "_coevo_p") is self:
            return {"R": [self.other, object.__getattribute__(value, "_coevo_r"), "", []]}
        if type(value) is _Raw:
            return value.enc
        if type(value) in self.member_types:
            return self.to_wire(_proxy_of(value))
        if type(value) is _ProgramClass and type.__getattribute__(value, "_coevo_peer") is self:
            return {"R": [self.other, type.__getattribute__(value, "_coevo_rid"), "", []]}
        if marks is not None and id(value) in marks:
            return {"M": marks[id(value)]}
        enc = self.encode(value, marked=marks)
        if not (type(enc) is dict and "N" in enc):
            return enc
        t = type(value)
        if depth < 20 and t in (list, tuple, dict):
            if t is list:
                return [self.to_wire(x, depth + 1, marks) for x in value]
            if t is tuple:
                return {"t": [self.to_wire(x, depth + 1, marks) for x in value]}
            return {"d": [[self.to_wire(k, depth + 1, marks), self.to_wire(v, depth + 1, marks)]
                          for k, v in value.items()]}
        ref = self.export(value)
        data = _array_data(value, self.encode_flat)
        if data is not None:
            ref["R"].append(data)
        return ref

    def resolve_ref(self, x):
        """Decoder hook for ``{"R": ...}``: this side's object, or a proxy of the other's."""
        member = None
        if type(x) is list and len(x) == 6 and self.side == "T":  # a member's value (:meth:`_member`)
            member = x[5]
            x = x[:4]
        if type(x) is list and len(x) == 5:  # a numpy array's data: an array of our own, if we use numpy
            array = _array_from(x[4], self)
            if array is not None:
                return array
            x = x[:4]
        if type(x) is not list or len(x) != 4 or x[0] not in ("C", "T") or type(x[1]) is not int:
            raise ValueError("malformed reference")
        side, rid, tname, flags = x
        if side == self.side:
            if rid not in self.exports:
                raise ValueError("unknown reference")
            return self.exports[rid]
        p = self.proxies.get(rid)
        if p is None:
            if len(self.proxies) >= _MAX_OBJECTS:
                raise ValueError("too many references")
            flags = [f for f in flags if type(f) is str] if type(flags) is list else []
            exc = next((f[4:] for f in flags if f.startswith("exc:")), None)
            fields = next((f[7:] for f in flags if f.startswith("fields:")), None)
            if exc is not None and self.side == "T":
                p = self._exception_class(rid, str(tname), exc)
            elif self.side == "T" and "class" in flags and \
                    (p := self._program_class(rid, next((f[5:] for f in flags if f.startswith("name:")), "")[:100],
                                              fields)) is not None:
                pass
            else:
                ptype = _Proxy
                cls_id = next((f[4:] for f in flags if f.startswith("cls:")), None)
                if self.side == "T" and "class" not in flags and cls_id is not None and cls_id.isdigit() \
                        and len(cls_id) < 12:
                    ptype = self._class_of(int(cls_id), str(tname)[:100], fields)
                p = object.__new__(ptype)
                _Proxy.__init__(p, self, rid, str(tname)[:100], "callable" in flags)
                if "plain" in flags:
                    base = next((_PLAIN_BASES.get(f[5:]) for f in flags if f.startswith("base:")), None)
                    object.__setattr__(p, "_coevo_pl", True)
                    object.__setattr__(p, "_coevo_b", base)
                    if member is not None and base in _MEMBER_BASES:
                        p = self._member(p, str(tname)[:100], base, member) or p
            self.proxies[rid] = p
        return p

    def resolve_mark(self, n):
        """Decoder hook for ``{"M": n}`` (the test side): container ``n`` of the arguments of the
        call now pending (the innermost), which the program was given (so may hand back)."""
        nodes = self.call_nodes[-1] if self.call_nodes else None
        if nodes is None or type(n) is not int or not 0 <= n < len(nodes):
            raise ValueError("unknown mark")
        return nodes[n]

    def _exception_class(self, rid, name, base_name):
        """A real exception class of this process standing for a program's exception class (so
        that ``except TheirError`` works in the test)."""
        cls = self.exc_classes.get(rid)
        if cls is None:
            base = _EXC_BASES.get(base_name, Exception)
            if base in (SystemExit, KeyboardInterrupt, GeneratorExit, BaseException):
                base = Exception
            safe = name if name.isidentifier() else "ProgramError"
            cls = type(safe, (base,), {"__module__": "solution"})
            self.exc_classes[rid] = cls
        return cls

    # -- requests
    def call(self, fn, args, kwargs):
        """The test side's call of a program function: the arguments go with their *shape* (the
        containers in them, each once, and where one is met again: :class:`_Shape`), so that the
        program sees the test's aliasing and cycles, and the containers it changes in place come
        back as changes of the test's own objects (nested ones too)."""
        shape = _Shape(max(16, min(_MAX_ENTRIES, self.max_msg // 256)), self.encode)
        sent = [shape.walk(a, None, [i], 0) for i, a in enumerate(args)]
        ksent = {k: shape.walk(v, None, [k], 0) for k, v in kwargs.items()}
        return self.request("call", fn, sent, ksent, shape.entries, nodes=shape.nodes)

    def request(self, op, *args, nodes=None):
        self.send(["q", op, *[self.to_wire(a) for a in args]])
        if nodes is not None:
            self.call_nodes.append(nodes)
            self.call_index.append({})  # (id -> number, filled as the program reads containers: _as_node)
        try:
            while True:
                msg = self.recv()
                if msg[0] == "q":
                    self.serve_request(msg)
                    continue
                if msg[0] == "r":
                    if len(msg) == 3 and type(msg[2]) is list:
                        self._writeback(args, msg[2], nodes or [])
                    if len(msg) == 4 and type(msg[3]) is int and self.side == "C":
                        return self._adopt(msg[1], msg[3])
                    return msg[1] if len(msg) > 1 else None
                if op == "call" and len(msg) == 3 and type(msg[2]) is list:  # its changes before it raised
                    self._writeback(args, msg[2], nodes or [])
                raise self._exception(msg[1] if len(msg) > 1 else None)
        finally:
            if nodes is not None:
                self.call_nodes.pop()
                self.call_index.pop()

    def _writeback(self, args, changes, nodes):
        """Apply the other side's changes to the containers of a call's arguments, in place:
        ``["N", n, contents]`` for container ``n`` of the call's shape (its new contents, in which
        the call's containers are marks decoded to the test's own objects), ``[where, new]`` for a
        numpy array argument. Each container at most once, and only from contents decoded from this
        reply (never another container of the test's: the work stays that of the reply's size)."""
        if not args or not changes:
            return
        call_args = args[1] if len(args) > 1 and type(args[1]) is list else []
        call_kwargs = args[2] if len(args) > 2 and type(args[2]) is dict else {}
        own = {id(x) for x in nodes}
        done = set()
        for item in changes:
            if type(item) is list and len(item) == 3 and item[0] == "N":
                n, new = item[1], item[2]
                if type(n) is int and 0 <= n < len(nodes) and n not in done and id(new) not in own:
                    done.add(n)
                    _assign_in_place(nodes[n], new)
                continue
            if type(item) is not list or len(item) != 2:
                continue
            where, new = item
            target = call_args[where] if type(where) is int and 0 <= where < len(call_args) else \
                call_kwargs.get(where) if type(where) is str else None
            if id(target) in own or id(new) in own:
                continue  # the call's containers come back by their marks
            _assign_in_place(target, new)

    def _exception(self, desc):
        if type(desc) is not list or len(desc) not in (4, 6):
            return RemoteError("malformed exception")
        name, base_name, message, cls = desc[:4]
        message = str(message)[:2000]
        args = tuple(desc[4]) if len(desc) == 6 and type(desc[4]) is tuple else (message,)
        attrs = desc[5] if len(desc) == 6 and type(desc[5]) is dict else {}
        if isinstance(cls, type) and issubclass(cls, BaseException):
            exc = _built(cls, args, message)
            for k, v in attrs.items():  # the program's class here is a plain stand-in of ours
                if type(k) is str and k.isidentifier() and not k.startswith("_"):
                    try:
                        setattr(exc, k, v)
                    except Exception:
                        pass
            return exc
        base = _EXC_BASES.get(str(base_name), Exception)
        if base in (KeyboardInterrupt, GeneratorExit, BaseException):
            base = Exception
        if base is SystemExit:
            return SystemExit(message)
        return _built(base, args, message)

    def describe_exception(self, exc):
        t = type(exc)
        base = next((c.__name__ for c in t.__mro__ if c in _EXC_BASES.values()), "Exception")
        try:
            args = BaseException.__dict__["args"].__get__(exc)
            msg = args[0] if len(args) == 1 and type(args[0]) is str else ("" if not args else str(exc))
        except BaseException:
            msg = "<unprintable>"
        name = type.__dict__["__name__"].__get__(t)
        cls_ref = self.export(t) if t.__module__ not in ("builtins",) else None
        try:  # its arguments, where they are plain data (``e.args[0]``, ``ValueError('neg', x)``)
            plain_args = self.encode(tuple(BaseException.__dict__["args"].__get__(exc)))
        except BaseException:
            plain_args = None
        if type(plain_args) is not dict or "t" not in plain_args or len(str(plain_args)) > 1 << 16:
            return [name, base, msg, cls_ref]
        try:  # and its public attributes that are plain data (``e.code``)
            own = dict(BaseException.__dict__["__dict__"].__get__(exc))
            attrs = self.encode({k: v for k, v in own.items() if type(k) is str and not k.startswith("_")})
        except BaseException:
            attrs = None
        if type(attrs) is not dict or "d" not in attrs or len(str(attrs)) > 1 << 16:
            attrs = {"d": []}
        return [name, base, msg, cls_ref, plain_args, attrs]

    def _adopt(self, value, n: int):
        """The program side: a container the test read from one of its objects for the program
        (``box.items``) is container ``n`` of the call being served (:func:`_test_side_handle`):
        what the program changes in it is changed in the test; one that is already one of the
        call's is that object (``box.items is arg``)."""
        if not self.pending or not 0 <= n < _MAX_ENTRIES:
            return value
        nodes, marks, before = self.pending[-1]
        if n < len(nodes):
            return nodes[n] if nodes[n] is not None else value
        if (type(value) in _NODE_KINDS or _is_array(type(value))) and id(value) not in marks:
            pad = n - len(nodes)
            nodes.extend([None] * pad)
            before.extend([None] * pad)
            marks[id(value)] = n
            nodes.append(value)
            before.append(self._contents(value, marks))
        return value

    def _contents(self, node, marks):  # the program side's (:class:`_Server`)
        raise NotImplementedError

    def serve_request(self, msg) -> None:
        try:
            value, writeback = self.handle(msg[1], msg[2:])  # (the changes to arguments, encoded)
            if type(writeback) is _NodeNo:  # a container of the test's now one of the pending call's
                self.send(["r", self.to_wire(value), None, writeback.n])
                return
            self.send(["r", self.to_wire(value), writeback])
        except RemoteError:
            raise
        except BaseException as exc:  # noqa: BLE001 - the other side's exception travels back
            if isinstance(exc, (SystemExit, KeyboardInterrupt)) and self.side == "T":
                raise
            if type(exc) is _Raised:  # with the changes the call made to its arguments
                self.send(["x", self.describe_exception(exc.exc), exc.changes])
            else:
                self.send(["x", self.describe_exception(exc)])

    def handle(self, op, args):
        raise NotImplementedError


_MAX_FIELDS = 256


def _field_name(n: str) -> bool:
    import keyword

    return 0 < len(n) <= 64 and n.isascii() and n.isidentifier() and not keyword.iskeyword(n) \
        and not n.startswith(("__", "_coevo"))  # (a reference's own state: _Proxy's slots)


_MEMBER_BASES = (str, int, float, bytes)
_MAX_FORWARDED = 64
# what a member of the test side's (:meth:`_Peer._member`) asks of the program's object where the
# program's class (or the enum's) defines it: not ``==``, the hash or the conversions to the value
_FORWARD_DUNDERS = frozenset(
    {"__str__", "__repr__", "__format__", "__bool__", "__len__", "__iter__", "__contains__", "__getitem__",
     "__invert__", "__neg__", "__pos__", "__abs__", "__lt__", "__le__", "__gt__", "__ge__", "__call__",
     "__copy__", "__deepcopy__", "__round__", "__trunc__", "__floor__", "__ceil__"}
    | {f"__{n}__" for n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
                             "lshift", "rshift", "matmul", "divmod")}
    | {f"__r{n}__" for n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
                              "lshift", "rshift", "matmul", "divmod")})
# a class changing one of these outside its builtin base stays a reference (C code reads the value)
_OWN_VALUE = frozenset({"__eq__", "__ne__", "__hash__", "__index__", "__int__", "__float__", "__complex__",
                        "__bytes__"})


def _forwarded_names(t, base):
    """The program's side: the names of :data:`_FORWARD_DUNDERS`, and the public names of the
    base, that an object of class ``t`` finds elsewhere than in ``base`` (its class's, the
    enum's); None where ``t`` changes what makes its value (``==``, hash, ``__index__``...)."""
    own = type.__dict__["__dict__"].__get__
    seen: set = set()
    out = []
    for c in type.__dict__["__mro__"].__get__(t):
        for name in own(c):
            if type(name) is not str or name in seen:
                continue
            seen.add(name)
            if c is base or c is object:
                continue
            if name in _OWN_VALUE:
                return None
            if name in _FORWARD_DUNDERS or (not name.startswith("_") and hasattr(base, name)):
                out.append(name)
    return out[:_MAX_FORWARDED] if len(out) <= _MAX_FORWARDED else None


def _flat(obj, flat, base):
    """Plain values only: enum members and subclasses of builtin types as their plain value."""
    return flat


def _proxy_of(member):
    return object.__getattribute__(member, "__dict__")["_coevo_proxy"]


def _member_getattr(self, name):
    if name == "_coevo_proxy":
        raise AttributeError(name)
    return getattr(_proxy_of(self), name)


def _member_setattr(self, name, value):
    setattr(_proxy_of(self), name, value)


def _member_delattr(self, name):
    delattr(_proxy_of(self), name)


def _member_forwarder(name):
    def forward(self, *args):
        out = _proxy_of(self)._coevo_q("getattr", name)(*args)
        if type(out) is _Proxy and object.__getattribute__(out, "_coevo_t") == "NotImplementedType":
            return NotImplemented  # the program's operator declined: Python tries the other operand's
        return out

    forward.__name__ = name
    return forward


def _member_reader(name):
    def read(self):
        return getattr(_proxy_of(self), name)

    return read


# (no bool: no class can subclass it, so a reference claiming it would be a lie)
_PLAIN_BASES = {t.__name__: t for t in (int, float, complex, str, bytes, bytearray, list, tuple, dict, set,
                                         frozenset)}


class _Raw:
    """An already-encoded reply (a program object's plain value)."""

    __slots__ = ("enc",)

    def __init__(self, enc):
        self.enc = enc


_ARRAY_KINDS = frozenset("biufcU")
_MAX_ARRAY = 1_000_000
_MAX_ARRAY_BYTES = 1 << 26


def _array_data(value, encode):
    """``["ndarray", dtype, shape, items]`` of a numpy array of numbers, bools or strings, or of
    a numpy bool (shape ``[]``), read through the value's own methods where it is; else None."""
    t = type(value)
    if type.__dict__["__module__"].__get__(t) != "numpy" or type.__dict__["__name__"].__get__(t) not in \
            ("ndarray", "bool", "bool_"):
        return None
    try:
        dtype = value.dtype
        if dtype.kind not in _ARRAY_KINDS or value.size > _MAX_ARRAY or value.ndim > 32:
            return None
        items = value.ravel().tolist() if value.ndim else [value.item()]
        data = ["ndarray", str(dtype.str), [int(n) for n in value.shape], encode(items)]
    except Exception:  # noqa: BLE001 - anything odd: a reference only
        return None
    return data


def _array_from(data, peer=None):
    """The numpy array (or, of shape ``[]``, scalar) ``data`` describes, numpy imported here
    if it was not (the other process used it); None when numpy is not there or ``data`` is not a
    well-formed array."""
    if type(data) is not list or len(data) != 4 or data[0] != "ndarray":
        return None
    np = sys.modules.get("numpy")
    if np is None:
        try:
            import numpy as np
        except Exception:  # noqa: BLE001 - no numpy here: the reference stands
            return None
    _, dt, shape, items = data
    if type(dt) is not str or len(dt) > 16 or type(shape) is not list or len(shape) > 32 \
            or any(type(n) is not int or n < 0 for n in shape) or type(items) is not list:
        return None
    n = 1
    for d in shape:
        n *= d
    if n != len(items) or n > _MAX_ARRAY:
        return None
    scalar = (int, float, bool, str, complex)
    if any(type(x) not in scalar for x in items):  # numpy builds from the items before the
        return None  # reshape: nested lists would make an array the bound below never saw
    try:
        dtype = np.dtype(dt)
        # (an item size of 0, '<U0', is numpy's "as wide as the longest string": no bound at all)
        need = dtype.itemsize * max(n, 1)
        if dtype.kind not in _ARRAY_KINDS or dtype.itemsize == 0 or need > _MAX_ARRAY_BYTES:
            return None
        if peer is not None:  # the arrays of one message together (red-team pass 16: 40 of 16 MiB)
            if need > peer.array_left:
                return None
            peer.array_left -= need
        array = np.array(items, dtype=dtype).reshape(shape)
        return array[()] if not shape else array
    except Exception:  # noqa: BLE001 - not an array after all: the reference stands
        return None


def _built(cls, args, message):
    """``cls(*args)`` for an exception crossing from the other process; ``cls(message)`` when
    its ``__init__`` does not take those arguments."""
    try:
        exc = cls(*args)
    except Exception:
        try:
            exc = cls(message)
        except Exception:
            return Exception(message)
    try:
        BaseException.__dict__["args"].__set__(exc, args)
    except Exception:
        pass
    return exc


def _assign_in_place(target, new):
    t = type(target)
    try:
        if t is list and type(new) is list:
            target[:] = new
        elif t in _MAPS and type(new) in _MAPS:
            target.clear()
            target.update(new)
        elif t is set and type(new) in (set, frozenset):
            target.clear()
            target.update(new)
        elif t is bytearray and type(new) is bytearray:
            target[:] = new
        elif t is collections.deque and type(new) in (list, collections.deque):
            target.clear()
            target.extend(new)
        elif t.__module__ == "numpy" and t.__name__ == "ndarray" and type(new) is t and new.shape == target.shape:
            target[...] = new  # a numpy array the program changed in place
    except Exception:
        pass


# the containers of a call's arguments that the call may change in place, by kind
_NODE_KINDS = {list: "list", dict: "dict", set: "set", bytearray: "bytearray", collections.deque: "deque",
               collections.Counter: "Counter", collections.OrderedDict: "OrderedDict",
               collections.defaultdict: "defaultdict"}
_KIND_TYPES = {k: t for t, k in _NODE_KINDS.items()}
_MAPS = frozenset({dict, collections.Counter, collections.OrderedDict, collections.defaultdict})
_WALKED = frozenset(_NODE_KINDS) | {tuple}


def _is_array(t) -> bool:
    """Whether ``t`` is numpy's ndarray (read through ``type``'s own descriptors)."""
    return type.__dict__["__module__"].__get__(t) == "numpy" and type.__dict__["__name__"].__get__(t) == "ndarray"


def _followed(t) -> bool:
    """Whether a value of type ``t`` inside a call's argument is walked by :class:`_Shape`: the
    containers, tuples and their subclasses (a namedtuple), numpy arrays (red-team pass 16: a
    list in a namedtuple argument and an array in a list argument went as copies whose changes
    were dropped)."""
    return t in _WALKED or issubclass(t, tuple) or _is_array(t)
_ENCODED_WHOLE = frozenset({set, collections.Counter, collections.OrderedDict, collections.defaultdict,
                            collections.deque})
_MAX_ENTRIES = 10_000  # containers (and repeated ones) of one call's arguments followed
# levels followed: those :meth:`_Peer.to_wire` sends item by item where a value holds something
# that is not plain data (deeper, a container would be a reference, not the copy described)
_MAX_WALK_DEPTH = 19


class _Shape:
    """The containers in a call's arguments (the test side), for :meth:`_Peer.call`: ``nodes``,
    each container once, in the order met; ``entries``, for each, ``[kind, parent, steps]``
    (``parent`` the number of the container holding it, or null for an argument, ``steps`` the
    position in it, a dict's by order of its items, then positions through tuples; an argument's
    first step is its position or keyword), and for a container met again ``["=", n, parent,
    steps]``. :meth:`walk` returns what to send for a value: itself, or a copy where a container
    met again is null (so that a cycle can be sent; the program's side puts it back, by the
    entries). Bounded: past ``limit`` entries or 19 levels, containers travel as before (copies)."""

    def __init__(self, limit: int, encode):
        self.limit = limit
        self.encode = encode
        self.nodes: list = []
        self.index: dict[int, int] = {}
        self.entries: list = []

    def encoded_whole(self, v) -> bool:
        """Whether a set, Counter, OrderedDict, defaultdict or deque would travel as a reference
        (it holds something that is not plain data): then it is not followed."""
        enc = self.encode(v)
        return type(enc) is dict and "N" in enc

    def walk(self, v, parent, steps, depth):
        t = type(v)
        if t is tuple or (issubclass(t, tuple) and t not in _NODE_KINDS):
            if depth >= _MAX_WALK_DEPTH or len(self.entries) >= self.limit or \
                    (t is not tuple and self.encoded_whole(v)):  # (a reference: not followed)
                return v
            out = None
            for i, x in enumerate(v):
                if _followed(type(x)):
                    y = self.walk(x, parent, steps + [i], depth + 1)
                    if y is not x:
                        if out is None:
                            out = list(v)
                        out[i] = y
            return v if out is None else tuple.__new__(t, out)
        kind = _NODE_KINDS.get(t)
        if kind is None and _is_array(t):  # an array that travels as data (a copy), not a reference
            try:
                if v.dtype.kind in _ARRAY_KINDS and v.size <= _MAX_ARRAY and v.ndim <= 32:
                    kind = "ndarray"
            except Exception:  # noqa: BLE001 - an odd array: not followed
                kind = None
        if kind is None or len(self.entries) >= self.limit:
            return v
        n = self.index.get(id(v))
        if n is not None:  # met again: the program's side makes it the same object
            self.entries.append(["=", n, parent, steps])
            return None
        if depth >= _MAX_WALK_DEPTH or (t in _ENCODED_WHOLE and self.encoded_whole(v)):
            return v
        n = len(self.nodes)
        self.index[id(v)] = n
        self.nodes.append(v)
        self.entries.append([kind, parent, steps])
        if t is list or t is collections.deque:
            out = None
            for i, x in enumerate(v):
                if _followed(type(x)):
                    y = self.walk(x, n, [i], depth + 1)
                    if y is not x:
                        if out is None:
                            out = list(v)
                        out[i] = y
            if out is None:
                return v
            return out if t is list else collections.deque(out, v.maxlen)
        if t in _MAPS:
            out = None
            for i, (k, x) in enumerate(v.items()):
                if _followed(type(x)):
                    y = self.walk(x, n, [i], depth + 1)
                    if y is not x:
                        if out is None:
                            out = v.copy()
                        out[k] = y
            return v if out is None else out
        return v  # a set, a bytearray, an array: nothing in them to follow


def _child(holder, step, keys):
    """Item ``step`` of a container of the program's side (a dict's by the order of its items)."""
    if type(step) is not int or step < 0:
        raise ValueError("malformed step")
    if type(holder) in _MAPS:
        ks = keys.get(id(holder))
        if ks is None:
            ks = keys[id(holder)] = list(holder)
        return holder[ks[step]], ks[step]
    if type(holder) in (list, collections.deque, tuple):
        return holder[step], step
    raise ValueError("not a container")


def _replaced(t, steps, value):
    """Tuple ``t`` with the item at ``steps`` (through nested tuples) replaced by ``value``."""
    if not steps:
        return value
    i = steps[0]
    if not isinstance(t, tuple) or type(i) is not int or not 0 <= i < len(t):
        raise ValueError("malformed step")
    return tuple.__new__(type(t), t[:i] + (_replaced(t[i], steps[1:], value),) + t[i + 1:])


def _arg_nodes(call_args, kwargs, entries):
    """The program's side of :class:`_Shape`: the containers of the call's arguments numbered as
    the test's (None where one is not found as the test described it), the containers met again
    made the same object (aliasing, cycles)."""
    nodes: list = []
    keys: dict = {}
    for e in entries[:_MAX_ENTRIES]:
        alias = type(e) is list and len(e) == 4 and e[0] == "="
        try:
            if type(e) is not list or len(e) != (4 if alias else 3):
                raise ValueError("malformed entry")
            parent, steps = e[-2], e[-1]
            if type(steps) is not list or not steps or len(steps) > 64:
                raise ValueError("malformed steps")
            if parent is None:
                key = steps[0]
                if type(key) is int and 0 <= key < len(call_args):
                    holder, at = call_args, key
                elif type(key) is str and key in kwargs:
                    holder, at = kwargs, key
                else:
                    raise ValueError("malformed step")
                first = holder[at]
            else:
                holder = nodes[parent] if type(parent) is int and 0 <= parent < len(nodes) else None
                if holder is None:
                    raise ValueError("unknown container")
                first, at = _child(holder, steps[0], keys)
            if alias:
                target = nodes[e[1]] if type(e[1]) is int and 0 <= e[1] < len(nodes) else None
                if target is not None:
                    holder[at] = _replaced(first, steps[1:], target)
                continue
            obj = first
            for step in steps[1:]:
                if not isinstance(obj, tuple) or type(step) is not int:
                    raise ValueError("malformed step")
                obj = obj[step]
            kind_ok = type(obj) is _KIND_TYPES.get(e[0]) or (e[0] == "ndarray" and _is_array(type(obj)))
            nodes.append(obj if type(e[0]) is str and kind_ok else None)
        except Exception:  # noqa: BLE001 - not as described: this container is not followed
            if not alias:
                nodes.append(None)
    return nodes


_MAX_CLASSES = 1024
_MAX_DATACLASSES = 128


def _class_q(cls, op, *args):
    return type.__getattribute__(cls, "_coevo_peer").request(op, cls, *args)


class _ProgramClass(type):
    """The test side's class for a program's class: calling it, its attributes, ``isinstance``,
    ``issubclass``, iterating, indexing, measuring it (an enum), its ``str`` and ``repr`` ask the
    program's class; its instances are the references to the program's objects of that class."""

    def __call__(cls, *args, **kwargs):
        return type.__getattribute__(cls, "_coevo_peer").call(cls, args, kwargs)

    def __getattr__(cls, name):
        if name.startswith("_coevo"):
            raise AttributeError(name)
        return _class_q(cls, "getattr", name)

    def __setattr__(cls, name, value):
        _class_q(cls, "setattr", name, value)

    def __delattr__(cls, name):
        _class_q(cls, "delattr", name)

    def __instancecheck__(cls, inst):
        peer = type.__getattribute__(cls, "_coevo_peer")
        if type(inst) in peer.member_types:
            inst = _proxy_of(inst)
        if isinstance(inst, _Proxy) and object.__getattribute__(inst, "_coevo_p") is peer:
            return _class_q(cls, "isinstance", inst) is True
        return False

    def __subclasscheck__(cls, sub):
        peer = type.__getattribute__(cls, "_coevo_peer")
        if (type(sub) is _ProgramClass and type.__getattribute__(sub, "_coevo_peer") is peer) or \
                (isinstance(sub, _Proxy) and object.__getattribute__(sub, "_coevo_p") is peer):
            return _class_q(cls, "issubclass", sub) is True
        return False

    def __bool__(cls):
        b = _class_q(cls, "bool")
        if b is not True and b is not False:
            raise TypeError("__bool__ should return bool")
        return b

    def __len__(cls):
        n = _class_q(cls, "len")
        if type(n) is not int or n < 0:
            raise TypeError("object returned an invalid length")
        return n

    def __iter__(cls):
        return _class_q(cls, "iter")

    def __getitem__(cls, key):
        return _class_q(cls, "getitem", key)

    def __contains__(cls, item):
        return _class_q(cls, "contains", item) is True

    def __str__(cls):
        s = _class_q(cls, "str")
        return s if type(s) is str else "<class>"

    def __repr__(cls):
        s = _class_q(cls, "repr")
        return s if type(s) is str else "<class>"


class _Proxy:
    """An object of the other process. Everything but identity is a request."""

    __slots__ = ("_coevo_p", "_coevo_r", "_coevo_t", "_coevo_c", "_coevo_pl", "_coevo_b", "__weakref__")

    def __init__(self, peer, rid, tname, is_callable):
        object.__setattr__(self, "_coevo_p", peer)
        object.__setattr__(self, "_coevo_r", rid)
        object.__setattr__(self, "_coevo_t", tname)
        object.__setattr__(self, "_coevo_c", is_callable)
        object.__setattr__(self, "_coevo_pl", False)  # equal to what its plain value equals
        object.__setattr__(self, "_coevo_b", None)  # the builtin type it is a subclass of

    @property  # type: ignore[misc]  # isinstance(x, int) of an IntEnum member, of a list subclass
    def __class__(self):  # the class standing for the program's (``obj.__class__(**changes)``)
        base = object.__getattribute__(self, "_coevo_b")
        return base if base is not None else type(self)

    def __instancecheck__(self, inst):
        """``isinstance(x, C)`` for a class of the program's: the program's own answer for its
        objects; a value of the test's (plain data) is no instance of a program's class."""
        if type(inst) in object.__getattribute__(self, "_coevo_p").member_types:
            inst = _proxy_of(inst)
        if issubclass(type(inst), _Proxy) \
                and object.__getattribute__(inst, "_coevo_p") is object.__getattribute__(self, "_coevo_p"):
            return self._coevo_q("isinstance", inst) is True
        return False

    def __subclasscheck__(self, cls):
        if issubclass(type(cls), _Proxy) \
                and object.__getattribute__(cls, "_coevo_p") is object.__getattribute__(self, "_coevo_p"):
            return self._coevo_q("issubclass", cls) is True
        return False

    def _coevo_q(self, op, *args):
        return object.__getattribute__(self, "_coevo_p").request(op, self, *args)

    def __call__(self, *args, **kwargs):
        peer = object.__getattribute__(self, "_coevo_p")
        if peer.side == "T":
            return peer.call(self, args, kwargs)
        return self._coevo_q("call", list(args), kwargs)

    def __getattr__(self, name):
        return self._coevo_q("getattr", name)

    def __setattr__(self, name, value):
        self._coevo_q("setattr", name, value)

    def __delattr__(self, name):
        self._coevo_q("delattr", name)

    def __getitem__(self, key):
        return self._coevo_q("getitem", key)

    def __setitem__(self, key, value):
        self._coevo_q("setitem", key, value)

    def __delitem__(self, key):
        self._coevo_q("delitem", key)

    def __len__(self):
        n = self._coevo_q("len")
        if type(n) is not int or n < 0:
            raise TypeError("object returned an invalid length")
        return n

    def __bool__(self):
        b = self._coevo_q("bool")
        if b is not True and b is not False:
            raise TypeError("__bool__ should return bool")
        return b

    def __iter__(self):
        return self._coevo_q("iter")

    def __next__(self):
        return self._coevo_q("next")

    def __contains__(self, item):
        b = self._coevo_q("contains", item)
        return b is True

    def __str__(self):
        s = self._coevo_q("str")
        return s if type(s) is str else "<object>"

    def __repr__(self):
        s = self._coevo_q("repr")
        return s if type(s) is str else "<object>"

    def __format__(self, spec):
        s = self._coevo_q("format", spec)
        return s if type(s) is str else "<object>"

    def __int__(self):
        v = self._coevo_q("int")
        if type(v) is not int:
            raise TypeError("__int__ returned non-int")
        return v

    def __index__(self):
        v = self._coevo_q("index")
        if type(v) is not int:
            raise TypeError("__index__ returned non-int")
        return v

    def __float__(self):
        v = self._coevo_q("float")
        if type(v) is not float:
            raise TypeError("__float__ returned non-float")
        return v

    def __hash__(self):
        if object.__getattribute__(self, "_coevo_p").side == "C":
            return object.__hash__(self)  # the program sees the test's objects by identity
        h = self._coevo_q("hash")  # a program object in a set or dict key of the test: its own hash
        if type(h) is not int:
            raise TypeError("__hash__ returned non-int")
        return h

    def __eq__(self, other):
        if (isinstance(other, _Proxy)
                and object.__getattribute__(other, "_coevo_p") is object.__getattribute__(self, "_coevo_p")):
            return self._coevo_q("binop", "eq", other)
        if object.__getattribute__(self, "_coevo_pl"):  # compared here, on its plain value now
            return self._coevo_q("plain") == other
        return NotImplemented  # a program object equals nothing of the test's

    def __ne__(self, other):
        if (isinstance(other, _Proxy)
                and object.__getattribute__(other, "_coevo_p") is object.__getattribute__(self, "_coevo_p")):
            return self._coevo_q("binop", "ne", other)
        if object.__getattribute__(self, "_coevo_pl"):
            return self._coevo_q("plain") != other
        return NotImplemented

    def __neg__(self):
        return self._coevo_q("unop", "neg")

    def __abs__(self):
        return self._coevo_q("unop", "abs")


def _binop(name):
    def op(self, other):
        return self._coevo_q("binop", name, other)

    def rop(self, other):
        return self._coevo_q("rbinop", name, other)

    return op, rop


for _n in _BINOPS:
    _f, _r = _binop(_n)
    if _n in ("lt", "le", "gt", "ge"):
        setattr(_Proxy, f"__{_n}__", _f)
    else:
        setattr(_Proxy, f"__{_n}__", _f)
        setattr(_Proxy, f"__r{_n}__", _r)


# ----------------------------------------------------------------------------- the program side

class _Server(_Peer):
    """The program process: answers the test process's requests on its objects."""

    def __init__(self, sock, ns, max_msg, budget):
        super().__init__(sock, "C", max_msg, budget)
        self.ns = ns

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

    def handle(self, op, args):
        import operator

        if op == "resolve":
            out = []
            for name in args[0]:
                if type(name) is not str:
                    out.append(None)
                elif name in self.ns and name != "__builtins__":
                    v = self.ns[name]
                    out.append(["value", v] if getattr(builtins, name, _MISSING) is not v else ["builtin"])
                elif hasattr(builtins, name):
                    out.append(["builtin"])
                else:
                    out.append(None)
            return out, None
        obj = args[0] if args else None
        if op == "call":
            call_args = args[1] if len(args) > 1 and type(args[1]) is list else []
            kwargs = args[2] if len(args) > 2 and type(args[2]) is dict else {}
            entries = args[3] if len(args) > 3 and type(args[3]) is list else []
            nodes = _arg_nodes(call_args, kwargs, entries)
            marks = {id(x): n for n, x in enumerate(nodes) if x is not None}
            before = [self._contents(x, marks) if x is not None else None for x in nodes]
            roots = [(i, a, self._root(a, marks)) for i, a in enumerate(call_args)] + \
                [(k, a, self._root(a, marks)) for k, a in kwargs.items()]
            self.pending.append((nodes, marks, before))  # (the containers it reads from the test's objects join)
            try:
                result = obj(*call_args, **kwargs)
            except RemoteError:
                raise
            except BaseException as exc:  # what it changed before it raised stays changed, as in Python
                changes = self._changes(nodes, before, roots, marks)
                if changes:
                    raise _Raised(exc, changes) from None
                raise
            finally:
                self.pending.pop()
            changes = self._changes(nodes, before, roots, marks)
            return _Raw(self.to_wire(result, marks=marks)), changes or None
        if op == "getattr":
            return getattr(obj, args[1]), None
        if op == "setattr":
            setattr(obj, args[1], args[2])
            return None, None
        if op == "delattr":
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
        if op == "issubclass":
            return issubclass(args[1], obj), None
        if op in ("binop", "rbinop"):
            name, other = args[1], args[2]
            fn = {"eq": operator.eq, "ne": operator.ne, "and": operator.and_, "or": operator.or_}.get(name) \
                or getattr(operator, name, None)
            if fn is None or name not in _BINOPS | {"eq", "ne"}:
                raise TypeError(f"unsupported operation {name!r}")
            return (fn(obj, other) if op == "binop" else fn(other, obj)), None
        if op == "unop":
            fn = {"neg": operator.neg, "abs": abs}.get(args[1])
            if fn is None:
                raise TypeError("unsupported operation")
            return fn(obj), None
        raise TypeError(f"unknown request {op!r}")


_MISSING = object()


def serve(cmd: dict, chan) -> None:
    """Mode ``serve``: load the program (and the task's setup), then answer the test process
    until it hangs up. The first message says whether loading worked."""
    from . import harness

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
    try:
        code_co, _, _ = harness.compile_source(cmd["code"], "<solution>", guard=False)
    except harness._COMPILE_ERRORS as exc:
        server.send(["r", ["syntax", harness.fmt_syntax(exc)], None])
        return
    try:
        exec(code_co, ns)
        if cmd["setup"] and cmd["setup"].strip():
            setup_co, _, _ = harness.compile_source(cmd["setup"], "<setup>", guard=False)
            try:
                exec(setup_co, ns)
            except BaseException as exc:  # noqa: BLE001
                server.send(["r", ["load_error", harness.exc_info(exc, "setup", None)], None])
                return
    except BaseException as exc:  # noqa: BLE001 - reported to the test process
        server.send(["r", ["load_error", harness.exc_info(exc, "code", lines)], None])
        return
    server.send(["r", ["loaded"], None])
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

def free_names(src: str) -> list[str]:
    """Names the test reads from its module scope (and so from the program) without defining."""
    import symtable

    top = symtable.symtable(src, "<test>", "exec")
    assigned = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    names: set[str] = set()
    stack = [top]
    while stack:
        t = stack.pop()
        for s in t.get_symbols():
            if (t is top and s.is_referenced()) or (t is not top and s.is_global() and s.is_referenced()):
                names.add(s.get_name())
        stack.extend(t.get_children())
    return sorted(n for n in names if n not in assigned)


def run_test(cmd: dict, chan) -> None:
    """Mode ``test``: run a generic test against the program process; the verdict is this
    process's (``Frame.VERDICT``: null when the test passed, else exception info)."""
    from . import harness

    G = harness._G
    t0 = G["clock"]()
    src = cmd["test"]
    sock = socket.socket(fileno=RPC_FD)
    peer = _Peer(sock, "T", int(cmd["max_out"]), 1.0)
    peer.handle = lambda op, args: _test_side_handle(peer, op, args)  # type: ignore[method-assign]  # this peer's handler
    harness._fresh_streams("", int(cmd["max_out"]), False)
    try:
        loaded = peer.recv()
        state = loaded[1] if loaded[0] == "r" and len(loaded) > 1 and type(loaded[1]) is list else None
        if not state or state[0] not in ("loaded", "load_error", "syntax"):
            raise RemoteError("the program process did not start")
        if state[0] == "syntax":
            chan.send(Frame.SYNTAX, str(state[1])[:harness.MAX_ERR].encode("utf-8", "replace"))
            return
        if state[0] == "load_error":
            info = state[1] if type(state[1]) is list and len(state[1]) == 4 else ["code", "Error", "", "other"]
            chan.send_json(Frame.VERDICT, [str(x)[:harness.MAX_ERR + 140] for x in info], G["clock"]() - t0)
            return
        chan.send(Frame.LOADED)  # the program is loaded: the test's own time starts
        t0 = G["clock"]()
        names = free_names(src)
        answers = peer.request("resolve", names)
        ns = {"__name__": "__main__", "__builtins__": G["builtins"]}
        if type(answers) is list and len(answers) == len(names):
            for name, a in zip(names, answers):
                if type(a) is list and a and a[0] == "value" and len(a) == 2:
                    ns[name] = a[1]
        G["sysmods"]["solution"] = _program_module(peer)  # `from solution import f`, as test files write
        code = compile(src, "<test>", "exec", dont_inherit=True)
    except (RemoteError, ValueError, OSError, SyntaxError) as exc:
        chan.send_json(Frame.VERDICT, ["test", "Error", f"the program process failed: {exc}"[:500], "other"],
                       G["clock"]() - t0)
        return
    try:
        exec(code, ns)
        verdict = None
    except RemoteError as exc:
        verdict = ["test", "Error", f"the program process failed: {exc}"[:500], "other"]
    except BaseException as exc:  # noqa: BLE001 - the test's outcome
        verdict = harness.exc_info(exc, "test", None)
    chan.send_json(Frame.VERDICT, verdict, G["clock"]() - t0)
    try:
        peer.send(["q", "bye"])
    except (RemoteError, OSError):
        pass


def _program_module(peer):
    """The program as the module ``solution`` of the test process (the name its module has where
    it runs): ``from solution import f`` and ``solution.f(x)`` read the program's names."""
    import types

    class ProgramModule(types.ModuleType):
        def __getattr__(self, name):
            if type(name) is str and not name.startswith("__"):
                answer = peer.request("resolve", [name])
                if type(answer) is list and len(answer) == 1 and type(answer[0]) is list \
                        and len(answer[0]) == 2 and answer[0][0] == "value":
                    return answer[0][1]
            raise AttributeError(f"module 'solution' has no attribute {name!r}")

    return ProgramModule("solution")


class _NodeNo:
    """The number of a container of the test's among the pending call's (:meth:`_Peer._adopt`)."""

    __slots__ = ("n",)

    def __init__(self, n: int):
        self.n = n


def _as_node(peer, value):
    """``(value, writeback)`` for a value of the test's the program reads (an attribute, an item,
    what a function of the test's returns, an iterator's next item) while a call of the test's is
    pending: a container that may be changed in place (a list, a
    dict..., an array that crosses as data) is one of that call's containers, so that what the
    program changes in it is changed in the test as in Python (red-team pass 16: ``box.items``
    went as a copy whose changes were dropped)."""
    if not peer.call_nodes:
        return value, None
    t = type(value)
    if t not in _NODE_KINDS:
        if not _is_array(t):
            return value, None
        try:
            if value.dtype.kind not in _ARRAY_KINDS or value.size > _MAX_ARRAY or value.ndim > 32:
                return value, None
        except Exception:  # noqa: BLE001 - an odd array: a copy, as before
            return value, None
    elif t in _ENCODED_WHOLE:
        enc = peer.encode(value)
        if type(enc) is dict and "N" in enc:  # it travels as a reference
            return value, None
    nodes, index = peer.call_nodes[-1], peer.call_index[-1]
    if not index:  # (a dict: a program reading a property 10,000 times costs no scan each time)
        index.update((id(x), n) for n, x in enumerate(nodes))
    n = index.get(id(value))
    if n is not None and nodes[n] is value:
        return value, _NodeNo(n)
    if len(nodes) >= _MAX_ENTRIES:
        return value, None
    nodes.append(value)
    index[id(value)] = len(nodes) - 1
    return value, _NodeNo(len(nodes) - 1)


def _test_side_handle(peer, op, args):
    """What the program process may do with the test's objects it was given: call them,
    iterate, read public attributes and items, measure; write attributes of plain instances."""
    obj = args[0] if args else None
    if op == "bye":
        raise RemoteError("bye")
    if op == "call":
        call_args = args[1] if len(args) > 1 and type(args[1]) is list else []
        kwargs = args[2] if len(args) > 2 and type(args[2]) is dict else {}
        return _as_node(peer, obj(*call_args, **kwargs))
    if op in ("getattr", "setattr", "delattr"):
        name = args[1]
        if type(name) is not str or name.startswith("_"):
            raise AttributeError(f"{name!r} is not available to the program")
        if op == "getattr":
            return _as_node(peer, getattr(obj, name))
        if isinstance(obj, type) or callable(obj) or type(obj).__module__ in ("builtins",):
            raise AttributeError("the test's objects of this kind cannot be changed by the program")
        (setattr(obj, name, args[2]) if op == "setattr" else delattr(obj, name))
        return None, None
    if op == "getitem":
        return _as_node(peer, obj[args[1]])
    if op == "len":
        return len(obj), None
    if op == "bool":
        return bool(obj), None
    if op == "iter":
        return iter(obj), None
    if op == "next":
        return _as_node(peer, next(obj))
    if op == "contains":
        return args[1] in obj, None
    if op in ("str", "repr"):
        return (str if op == "str" else repr)(obj), None
    raise TypeError(f"the program may not {op} the test's objects")
