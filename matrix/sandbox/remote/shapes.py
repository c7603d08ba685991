"""The containers of a call's arguments: numbered and walked on the test side (:class:`_Shape`),
found again on the program side (:func:`_arg_nodes`), put back in place after the call
(:func:`_assign_in_place`); a container the program reads from the test's objects during a call
joins them (:func:`_as_node`)."""

from __future__ import annotations

import collections

from .arrays import _ARRAY_KINDS, _MAX_ARRAY, _is_array


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

_ACROSS_KINDS = frozenset(_NODE_KINDS)  # (what the encoder sends as one object: ``{"S": ...}``)
_ACROSS_WALKED = _ACROSS_KINDS | {tuple, frozenset}
_FIRST_ACROSS = 1 << 28  # (numbers apart from each ``encode``'s own and from ``to_wire``'s)
_MAX_ACROSS_WALKED = 100_000


def _held_across(parts: list, marks: dict) -> dict | None:
    """id -> wire number of each container held by more than one of ``parts``: a call's result
    (``parts[0]``) and the arguments' containers it changed (their contents: each of those, in
    ``marks``, is sent as itself, as the call's other containers are). None past the bound of
    items walked (each part then sent as before, on its own)."""
    owner: dict[int, int] = {}
    across: dict[int, int] = {}
    walked = 0
    for p, root in enumerate(parts):
        stack = [root]
        while stack:
            v = stack.pop()
            walked += 1
            if walked > _MAX_ACROSS_WALKED:
                return None
            t = type(v)
            if t not in _ACROSS_WALKED:
                continue
            i = id(v)
            if i in marks and not (p and v is root):  # (another of the call's containers: its mark)
                continue
            q = owner.get(i)
            if q == p:
                continue  # (met before in this part)
            if q is None:
                owner[i] = p
            elif t in _ACROSS_KINDS and i not in across:
                across[i] = _FIRST_ACROSS + len(across)
            if t in _MAPS:
                stack.extend(x for kv in v.items() for x in kv)
            elif t is not bytearray:
                stack.extend(v)
    return across


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


class _NodeNo:
    """The number of a container of the test's among the pending call's (:meth:`_Peer._adopt`)."""

    __slots__ = ("n", "changes")

    def __init__(self, n: int):
        self.n = n
        self.changes = None  # (and the changes a function of the test's made to its arguments)


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
