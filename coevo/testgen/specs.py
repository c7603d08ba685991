"""What a parameter's values look like, read from the source: its type hint, its default, how the
body uses it, and its name, in that order of trust.

A :class:`Spec` is a small type description (``Spec("list", (Spec("int"),))``). Kinds:
``int float bool str bytes none complex list tuple dict set frozenset optional union literal
callable instance enum any date datetime decimal fraction match pattern stream``
(``stream`` holds ``"str"`` or ``"bytes"``). ``instance`` and ``enum`` name a class
of the module under test (``args[0]``); ``literal`` holds its values; ``tuple`` holds one spec per
position, or one spec and ``Ellipsis``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

__all__ = ["Spec", "from_annotation", "from_default", "infer_param", "names_checked", "module_globals", "ANY"]


@dataclass(frozen=True)
class Spec:
    kind: str
    args: tuple = ()

    def __repr__(self) -> str:
        return self.kind + (f"[{', '.join(map(repr, self.args))}]" if self.args else "")


ANY = Spec("any")
INT, FLOAT, STR, BOOL, NONE = Spec("int"), Spec("float"), Spec("str"), Spec("bool"), Spec("none")

_SIMPLE = {"int": "int", "float": "float", "str": "str", "bool": "bool", "bytes": "bytes",
           "bytearray": "bytes", "complex": "complex", "None": "none", "NoneType": "none",
           "object": "any", "Any": "any", "date": "date", "datetime": "datetime",
           "Decimal": "decimal", "Fraction": "fraction", "Number": "float", "Real": "float",
           "Integral": "int", "SupportsInt": "int", "SupportsFloat": "float", "AnyStr": "str",
           "Text": "str", "Hashable": "any"}
_LISTS = {"list", "List", "Sequence", "MutableSequence", "Iterable", "Collection", "Iterator",
          "Reversible", "Container", "Generator", "deque", "Deque", "Sized"}
_DICTS = {"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict", "DefaultDict",
          "Counter", "ChainMap"}
_SETS = {"set", "Set", "AbstractSet", "MutableSet"}
_FROZEN = {"frozenset", "FrozenSet"}
_TUPLES = {"tuple", "Tuple"}
# streams: a text one (IO[str], TextIO) gets StringIO('...'), a binary one BytesIO(b'...')
_TEXT_STREAMS = {"IO", "TextIO", "StringIO", "TextIOBase", "TextIOWrapper", "SupportsRead"}
_BINARY_STREAMS = {"BinaryIO", "BytesIO", "BufferedIOBase", "RawIOBase", "BufferedReader"}


def _name_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def from_annotation(node: ast.AST | None, classes: dict[str, str] | None = None, depth: int = 0) -> Spec | None:
    """The spec of a type hint (None when there is no hint). ``classes`` maps the module's class
    names to their style (``enum`` classes become ``enum`` specs, others ``instance``)."""
    if node is None or depth > 6:
        return None
    classes = classes or {}
    if isinstance(node, ast.Constant):
        if node.value is None:
            return NONE
        if isinstance(node.value, str):  # a forward reference: "Point", "list[int]"
            try:
                return from_annotation(ast.parse(node.value, mode="eval").body, classes, depth + 1)
            except SyntaxError:
                return ANY
        return ANY
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([from_annotation(node.left, classes, depth + 1),
                       from_annotation(node.right, classes, depth + 1)])
    name = _name_of(node)
    if name is not None:
        if name in classes:
            return Spec("enum" if classes[name] == "enum" else "instance", (name,))
        if name in _SIMPLE:
            return Spec(_SIMPLE[name])
        if name in _LISTS:
            return Spec("list", (ANY,))
        if name in _DICTS:
            return Spec("dict", (ANY, ANY))
        if name in _SETS:
            return Spec("set", (ANY,))
        if name in _FROZEN:
            return Spec("frozenset", (ANY,))
        if name in _TUPLES:
            return Spec("tuple", (ANY, Ellipsis))
        if name in ("Callable",):
            return Spec("callable")
        if name == "Match":  # re.Match: a match of the module's own patterns
            return Spec("match")
        if name == "Pattern":  # re.Pattern: the module's own compiled patterns
            return Spec("pattern")
        if name in _TEXT_STREAMS:
            return Spec("stream", ("str",))
        if name in _BINARY_STREAMS:
            return Spec("stream", ("bytes",))
        return ANY
    if isinstance(node, ast.Subscript):
        outer = _name_of(node.value)
        inner = node.slice
        items = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        specs = [from_annotation(i, classes, depth + 1) or ANY for i in items]
        if outer in ("Optional",):
            return _union([specs[0], NONE])
        if outer in ("Union",):
            return _union(specs)
        if outer in ("Literal",):
            vals = []
            for i in items:
                try:
                    vals.append(ast.literal_eval(i))
                except (ValueError, SyntaxError):
                    pass
            return Spec("literal", tuple(vals)) if vals else ANY
        if outer in ("Annotated", "Final", "ClassVar", "Required", "NotRequired"):
            return specs[0]
        if outer == "Match":
            return Spec("match")
        if outer == "Pattern":
            return Spec("pattern")
        if outer in _TEXT_STREAMS:  # IO[str], IO[bytes], SupportsRead[bytes]
            return Spec("stream", ("bytes",) if specs[0].kind == "bytes" else ("str",))
        if outer in _LISTS:
            return Spec("list", (specs[0],))
        if outer in _SETS:
            return Spec("set", (specs[0],))
        if outer in _FROZEN:
            return Spec("frozenset", (specs[0],))
        if outer in _DICTS:
            if outer == "Counter":
                return Spec("dict", (specs[0], INT))
            return Spec("dict", (specs[0], specs[1] if len(specs) > 1 else ANY))
        if outer in _TUPLES:
            if len(items) == 2 and isinstance(items[1], ast.Constant) and items[1].value is Ellipsis:
                return Spec("tuple", (specs[0], Ellipsis))
            if len(items) == 1 and isinstance(items[0], ast.Tuple) and not items[0].elts:
                return Spec("tuple", ())
            return Spec("tuple", tuple(specs))
        if outer in ("Callable",):
            # ``Callable[[], T]``, ``Callable[[int, int], int]``: how many arguments it is called with
            if items and isinstance(items[0], ast.List) and len(items[0].elts) in (0, 2):
                return Spec("callable", (len(items[0].elts),))
            return Spec("callable")
        if outer in ("Type", "type"):
            return ANY
        return ANY
    return ANY


def _union(specs: list[Spec | None]) -> Spec:
    flat: list[Spec] = []
    for s in specs:
        if s is None:
            continue
        for part in (s.args if s.kind == "union" else (s,)):
            if part not in flat:
                flat.append(part)
    if len(flat) == 1:
        return flat[0]
    if len(flat) == 2 and NONE in flat:
        return Spec("optional", (next(s for s in flat if s != NONE),))
    return Spec("union", tuple(flat))


def from_default(node: ast.AST | None) -> Spec | None:
    """The spec suggested by a default value (None when there is no default or it says nothing)."""
    if node is None:
        return None
    try:
        v = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return spec_of_value(v)


def spec_of_value(v, depth: int = 0) -> Spec | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return INT
    if isinstance(v, float):
        return FLOAT
    if isinstance(v, str):
        return STR
    if isinstance(v, bytes):
        return Spec("bytes")
    if depth > 3:
        return ANY
    if isinstance(v, (list, tuple, set, frozenset)):
        inner = [spec_of_value(x, depth + 1) for x in v]
        elem = next((s for s in inner if s is not None), ANY)
        kind = {list: "list", tuple: "list", set: "set", frozenset: "frozenset"}[type(v)]
        if isinstance(v, tuple) and v:
            return Spec("tuple", tuple(s or ANY for s in inner))
        return Spec(kind, (elem,))
    if isinstance(v, dict):
        k = next((spec_of_value(x, depth + 1) for x in v), None) or ANY
        val = next((spec_of_value(x, depth + 1) for x in v.values()), None) or ANY
        return Spec("dict", (k, val))
    return ANY


# ----------------------------------------------------------------------------- usage in the body

_STR_METHODS = frozenset({
    "lower", "upper", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith",
    "endswith", "replace", "find", "rfind", "isdigit", "isalpha", "isalnum", "isspace", "islower",
    "isupper", "istitle", "title", "capitalize", "casefold", "swapcase", "center", "ljust", "rjust",
    "zfill", "encode", "format", "partition", "rpartition", "expandtabs", "isdecimal", "isnumeric",
    "isidentifier", "isprintable", "removeprefix", "removesuffix", "translate", "maketrans",
})
_LIST_METHODS = frozenset({"append", "extend", "insert", "remove", "sort", "reverse", "pop", "clear"})
_STREAM_METHODS = frozenset({"read", "readline", "readlines", "write", "writelines"})
_DICT_METHODS = frozenset({"items", "keys", "values", "get", "setdefault", "update", "popitem"})
_SET_METHODS = frozenset({"add", "discard", "union", "intersection", "difference", "issubset",
                          "issuperset", "symmetric_difference", "isdisjoint"})
_SEQ_FUNCS = frozenset({"len", "sorted", "sum", "min", "max", "enumerate", "reversed", "set", "list",
                        "tuple", "any", "all", "zip", "frozenset", "iter", "map", "filter", "Counter",
                        "heapify", "bisect_left", "bisect_right", "bisect", "insort"})
_NUM_FUNCS = frozenset({"abs", "round", "range", "divmod", "pow", "chr", "bin", "hex", "oct",
                        "sqrt", "floor", "ceil", "log", "exp", "sin", "cos", "tan", "gcd", "factorial",
                        "isqrt", "comb", "perm", "log2", "log10", "isfinite", "isnan", "isinf", "trunc",
                        "hypot", "atan2", "radians", "degrees", "fabs", "copysign", "fsum", "prod"})
_INT_FUNCS = frozenset({"range", "chr", "bin", "hex", "oct", "gcd", "factorial", "isqrt", "comb",
                        "perm"})
_FLOAT_FUNCS = frozenset({"sqrt", "log", "exp", "sin", "cos", "tan", "isnan", "isinf", "isfinite",
                          "radians", "degrees", "fabs", "log2", "log10", "hypot", "atan2"})
_STR_FUNCS = frozenset({"ord", "compile", "match", "search", "fullmatch", "findall", "finditer",
                        "sub", "subn", "fromisoformat", "strptime", "loads", "urlparse", "b64decode"})

# what takes bytes (a parameter handed to one is bytes: plistlib's loads(value) -> BytesIO(value))
_BYTES_FUNCS = frozenset({"BytesIO", "memoryview", "b64encode", "urlsafe_b64encode", "b32encode", "b16encode",
                          "hexlify", "b2a_hex", "crc32", "adler32", "from_bytes", "md5", "sha1", "sha256",
                          "sha512", "blake2b", "blake2s"})

_INT_NAMES = frozenset({"n", "i", "j", "k", "m", "count", "num", "number", "size", "length", "index",
                        "idx", "width", "height", "depth", "level", "limit", "times", "start", "stop",
                        "end", "step", "year", "month", "day", "age", "total", "base", "exp", "exponent",
                        "digits", "places", "precision", "port", "capacity", "pos", "position", "offset",
                        "row", "col", "column", "rows", "cols", "seed", "bits", "degree", "order",
                        "minutes", "seconds", "hours", "days", "weeks", "quantity", "qty", "cents",
                        "steps", "retries", "max_len", "maxlen", "min_len", "radix", "top", "amount_cents"})
_FLOAT_NAMES = frozenset({"x", "y", "z", "value", "val", "rate", "ratio", "price", "weight", "temperature",
                          "temp", "score", "prob", "probability", "alpha", "beta", "tol", "tolerance",
                          "epsilon", "eps", "factor", "scale", "fraction", "percent", "percentage",
                          "celsius", "fahrenheit", "kelvin", "amount", "balance", "radius", "distance",
                          "speed", "mass", "lat", "lon", "latitude", "longitude", "a", "b", "c", "interest",
                          "principal", "salary", "cost", "discount", "tax", "threshold", "mean", "std",
                          "sigma", "mu", "lo", "hi", "low", "high", "lower", "upper", "minimum", "maximum"})
_STR_NAMES = frozenset({"s", "text", "string", "name", "word", "sentence", "line", "char", "ch",
                        "prefix", "suffix", "sep", "separator", "delimiter", "pattern", "msg", "message",
                        "email", "url", "title", "label", "fmt", "template", "password", "username",
                        "hex_str", "binary", "roman", "letter", "token", "key", "query", "phrase",
                        "content", "source", "src", "code", "expr", "expression", "date_str", "filename",
                        "path", "ext", "extension", "mode", "kind", "op", "operator", "unit", "currency",
                        "color", "colour", "command", "cmd", "status", "tag", "slug", "first", "last",
                        "first_name", "last_name", "haystack", "needle", "substring", "sub", "old", "new",
                        "fill", "fillchar", "padding", "encoding", "dna", "sequence_str", "isbn", "ip",
                        "address", "host", "version", "plaintext", "ciphertext", "alphabet", "vowels"})
_LIST_NAMES = frozenset({"xs", "ys", "items", "values", "nums", "numbers", "lst", "list", "arr",
                         "array", "seq", "sequence", "data", "elements", "scores", "vals", "ints",
                         "floats", "samples", "observations", "weights", "prices", "coeffs",
                         "coefficients", "heights", "temps", "costs", "grades", "marks", "stack",
                         "queue", "nodes", "vector", "vec", "row_values", "iterable", "collection",
                         "entries", "records", "measurements", "readings", "series", "sizes", "lengths",
                         "intervals", "pairs", "points", "edges"})
_STR_LIST_NAMES = frozenset({"words", "names", "strings", "lines", "tokens", "strs", "keys", "labels",
                             "tags", "texts", "sentences", "letters", "chars", "emails", "urls", "paths",
                             "fields", "columns", "headers", "parts"})
_DICT_NAMES = frozenset({"d", "dct", "mapping", "table", "counts", "config", "options", "kwargs_dict",
                         "inventory", "prices_by_name", "record", "row_dict", "obj", "payload", "headers_map",
                         "scores_by_name", "graph", "adjacency", "freq", "frequencies", "histogram",
                         "env", "settings", "attrs", "dictionary", "lookup", "cache", "memo"})
_GRAPH_NAMES = frozenset({"graph", "adjacency", "adj", "adj_list", "adjacency_list", "dependencies", "deps",
                          "dag", "digraph"})
_BOOL_PREFIXES = ("is_", "has_", "allow_", "use_", "include_", "enable", "should_", "with_", "skip_",
                  "ignore_", "keep_", "strip_", "case_", "dry_", "only_")
_BOOL_NAMES = frozenset({"flag", "verbose", "strict", "reverse", "recursive", "inclusive", "exclusive",
                         "descending", "ascending", "unique", "quiet", "force", "debug", "normalize",
                         "lenient", "exact", "signed", "sort", "stable", "wrap", "overwrite", "lazy",
                         "cyclic", "circular", "directed", "weighted", "safe", "validate", "round_up"})
_CALLABLE_NAMES = frozenset({"key", "func", "fn", "f", "predicate", "pred", "callback", "cb", "op_func",
                             "transform", "mapper", "reducer", "comparator", "cmp", "handler", "condition"})


class _Evidence:
    def __init__(self):
        self.scores: dict[str, float] = {}
        self.elem: list[Spec] = []
        self.keys: list = []
        self.optional = False
        self.attrs: set[str] = set()
        self.literals: list = []
        self.type_checked = False  # isinstance(x, ...) in the body
        self.checked_kinds: list[str] = []  # the simple kinds isinstance tests it for, in order
        self.values: list[Spec] = []  # a dict's values, from how ``for k, v in x.items()`` uses v
        self.fields: set[str] = set()  # attributes named like a str/list/dict method, read, not called
        self.arities: list[int] = []  # how many arguments each call of it hands it (``func()``: 0)

    def add(self, kind: str, w: float = 1.0) -> None:
        self.scores[kind] = self.scores.get(kind, 0.0) + w


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _const_kind(node: ast.AST) -> str | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, int):
            return "int"
        if isinstance(v, float):
            return "float"
        if isinstance(v, str):
            return "str"
        if isinstance(v, bytes):
            return "bytes"
    if isinstance(node, ast.JoinedStr):
        return "str"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):  # b'\0' * n: bytes
        if any(isinstance(side, ast.Constant) and type(side.value) is bytes for side in (node.left, node.right)):
            return "bytes"
    if isinstance(node, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(node, (ast.Dict, ast.DictComp)):
        return "dict"
    return None


def container_keys(stmts: list[ast.stmt]) -> dict[str, list]:
    """``name -> [its constant keys or items]`` for the names ``stmts`` bind to a literal table:
    ``factors = {'km': 1000.0, ...}``, ``KINDS = ('plain', 'grid')``, ``frozenset({...})``."""
    out: dict[str, list] = {}
    for stmt in stmts:
        for node in ast.walk(stmt):
            if not (isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                continue
            v = node.value
            if isinstance(v, ast.Call) and _name_of(v.func) in ("frozenset", "set", "tuple", "list", "dict") \
                    and len(v.args) == 1 and not v.keywords:
                v = v.args[0]
            elts = v.keys if isinstance(v, ast.Dict) else v.elts if isinstance(v, (ast.Set, ast.List, ast.Tuple)) \
                else None
            if not elts:
                continue
            keys = [e.value for e in elts if isinstance(e, ast.Constant) and type(e.value) in (str, int, bytes)]
            if len(keys) == len(elts):
                out[targets[0].id] = keys[:50]
    return out


def _evidence(body: list[ast.stmt], name: str, classes: dict[str, list[str]], depth: int = 0,
              tables: dict[str, list] | None = None) -> _Evidence:
    """Scores for what ``name`` holds, from how ``body`` uses it (``tables``: the module's names
    bound to literal tables, :func:`container_keys`)."""
    ev = _Evidence()
    parents: dict[int, ast.AST] = {}
    nodes = []
    for stmt in body:
        for n in ast.walk(stmt):
            nodes.append(n)
            for c in ast.iter_child_nodes(n):
                parents[id(c)] = n
    tables = {**(tables or {}), **container_keys(body)}

    def table_keys(node, weight: float) -> bool:
        """``name in TABLE`` / ``TABLE[name]``: the table's keys are what works."""
        keys = tables.get(node.id) if isinstance(node, ast.Name) else None
        if not keys:
            return False
        kinds = {{str: "str", int: "int", bytes: "bytes"}[type(k)] for k in keys}
        for kind in kinds:  # (the table's size is no evidence: each kind of key counts once)
            ev.add(kind, weight / len(kinds))
        ev.literals.extend(keys)
        return True
    # `key in box` ... `box[key]`: a key of a mapping, looked up where it was found (netrc's
    # `if host in self.hosts: return self.hosts[host]`), not an index
    tested = {(ast.dump(c.left), ast.dump(c.comparators[0])) for c in nodes if isinstance(c, ast.Compare)
              and len(c.ops) == 1 and isinstance(c.ops[0], (ast.In, ast.NotIn))}
    for n in nodes:
        if not _is(n, name):
            continue
        p = parents.get(id(n))
        if p is None:
            continue
        if isinstance(p, ast.Attribute) and p.value is n:
            attr = p.attr
            ev.attrs.add(attr)
            up = parents.get(id(p))
            if isinstance(up, (ast.Attribute, ast.Subscript, ast.For, ast.comprehension, ast.Compare)) and \
                    attr in _STR_METHODS | _LIST_METHODS | _DICT_METHODS | _SET_METHODS:
                # ``sec.values.items()``, ``sec.values[k]``: data named like a method (not
                # ``key=counts.get``, a method handed on)
                ev.fields.add(attr)
            elif attr in _STR_METHODS:
                ev.add("str", 3)
            elif attr in _LIST_METHODS:
                ev.add("list", 3)
            elif attr in _DICT_METHODS:
                ev.add("dict", 3)
                if attr in ("items", "values") and depth < 2:
                    value = _loop_value(p, parents, attr)
                    if value is not None:
                        ev.values.append(_infer(value[0], value[1], classes, depth + 1, None))
            elif attr in _SET_METHODS:
                ev.add("set", 3)
            elif attr in ("real", "imag", "conjugate", "bit_length", "is_integer"):
                ev.add("int" if attr == "bit_length" else "float", 2)
            elif attr in ("year", "month", "day", "weekday", "isoformat", "strftime"):
                ev.add("date", 3)
            elif attr == "join":
                ev.add("str", 2)
            elif attr in ("count", "index"):
                ev.add("list", 1)
                ev.add("str", 0.5)
        elif isinstance(p, ast.BinOp):
            other = p.right if p.left is n else p.left
            k = _const_kind(other)
            if k in ("int", "float"):
                ev.add(k, 2)
                if isinstance(p.op, ast.Mod) and k == "int":
                    ev.add("int", 1)
            elif k == "str" and isinstance(p.op, ast.Mult):
                ev.add("int", 3)  # n * "-": a repeat count
            elif k == "str":
                ev.add("str", 3 if not isinstance(p.op, ast.Mod) else 0)
            elif k == "bytes" and isinstance(p.op, ast.Mult):
                ev.add("int", 3)  # b'\0' * n: a repeat count, as for a text
            elif k == "bytes" and not isinstance(p.op, ast.Mod):
                ev.add("bytes", 6)  # s + b'\0': only bytes join bytes (a list raises)
            elif k == "list":
                ev.add("list", 2)
            if isinstance(p.op, (ast.Div, ast.Pow)):
                ev.add("float", 1)
            elif isinstance(p.op, (ast.FloorDiv, ast.Mod, ast.BitAnd, ast.BitOr, ast.BitXor,
                                   ast.LShift, ast.RShift)):
                ev.add("int", 1.5)
            elif isinstance(p.op, (ast.Sub,)):
                ev.add("float", 0.5)
                ev.add("int", 0.5)
            elif isinstance(p.op, ast.Mult):
                ev.add("int", 0.5)
        elif isinstance(p, ast.AugAssign):
            k = _const_kind(p.value)
            if k == "str" and isinstance(p.op, ast.Mult):
                ev.add("int", 1)  # n *= " ": a repeat count
            elif k:
                ev.add(k, 1)
        elif isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.USub):
            ev.add("float", 1)
            ev.add("int", 1)
        elif isinstance(p, ast.Compare):
            others = [p.left] + list(p.comparators)
            others = [o for o in others if o is not n]
            for o, op in zip(others, p.ops):
                if isinstance(o, ast.Constant) and o.value is None and isinstance(op, (ast.Is, ast.IsNot,
                                                                                        ast.Eq, ast.NotEq)):
                    ev.optional = True
                    continue
                k = _const_kind(o)
                if k in ("int", "float"):
                    ev.add(k, 1.5)
                    ev.literals.append(ast.literal_eval(o))
                elif k == "str":
                    if isinstance(op, (ast.In, ast.NotIn)) and p.left is n:
                        ev.add("str", 2)  # x in "aeiou": a character
                    else:
                        ev.add("str", 2)
                    ev.literals.append(o.value if isinstance(o, ast.Constant) else None)
                elif isinstance(op, (ast.In, ast.NotIn)) and p.left is n and table_keys(o, 3):
                    pass
                elif isinstance(o, (ast.Tuple, ast.List, ast.Set)) and isinstance(op, (ast.In, ast.NotIn)):
                    for e in o.elts:
                        k2 = _const_kind(e)
                        if k2:
                            ev.add(k2, 1.5)
                            try:
                                ev.literals.append(ast.literal_eval(e))
                            except ValueError:
                                pass
            if any(isinstance(op, (ast.In, ast.NotIn)) for op in p.ops) and p.left is not n:
                ev.add("list", 1)
                ev.add("str", 0.5)
                ev.add("dict", 0.5)
            if any(isinstance(op, (ast.Lt, ast.Gt, ast.LtE, ast.GtE)) for op in p.ops):
                ev.add("int", 0.5)
                ev.add("float", 0.5)
        elif isinstance(p, ast.Call):
            fname = _name_of(p.func)
            if p.func is n:
                ev.add("callable", 4)
                if not p.keywords and not any(isinstance(a, ast.Starred) for a in p.args):
                    ev.arities.append(len(p.args))
            elif _module_path_call(p.func):  # os.path.join(top, name), fnmatch.filter(names, pattern)
                if not (isinstance(p.func, ast.Attribute) and p.func.attr == "filter" and p.args and p.args[0] is n):
                    ev.add("str", 4)
            elif fname == "isinstance" and p.args and p.args[0] is n and len(p.args) > 1:
                ev.type_checked = True
                t = p.args[1]
                for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    en = _name_of(e)
                    if en in _SIMPLE:
                        ev.add(_SIMPLE[en], 4)
                        ev.checked_kinds.append(_SIMPLE[en])
                    elif en in _LISTS or en in _TUPLES:
                        ev.add("list", 4)
                    elif en in _DICTS:
                        ev.add("dict", 4)
                    elif en in _SETS:
                        ev.add("set", 4)
                    elif en in classes:
                        ev.add("instance:" + en, 4)
            elif fname in ("max", "min") and len(p.args) >= 2 and n in p.args:
                # ``max(r, g, b)``: each argument is one of the items compared (colorsys drew
                # lists for rgb_to_hsv's r, g, b, each call a TypeError)
                ev.add("float", 1.5)
                ev.add("int", 1.5)
            elif fname in _SEQ_FUNCS:
                ev.add("list", 2)
                if fname == "len":
                    ev.add("str", 0.7)
                if fname in ("sum", "max", "min"):
                    ev.elem.append(Spec("int"))
            elif fname in _INT_FUNCS:
                ev.add("int", 3)
            elif fname in _FLOAT_FUNCS:
                ev.add("float", 3)
            elif fname in _NUM_FUNCS:
                ev.add("float", 1.5)
                ev.add("int", 1.5)
            elif fname in ("int", "float"):
                ev.add("str", 1)
                ev.add(fname, 1)
            elif fname in _STR_FUNCS:
                ev.add("str", 2)
            elif fname in _BYTES_FUNCS and p.args and p.args[0] is n:
                ev.add("bytes", 3)
            elif fname in ("str", "repr"):
                ev.add("int", 0.3)
            elif fname == "join" and isinstance(p.func, ast.Attribute):
                ev.add("list", 2)
                ev.elem.append(STR)
        elif isinstance(p, ast.Subscript) and p.value is n:
            sl = p.slice
            k = _const_kind(sl)
            if k is None and (ast.dump(sl), ast.dump(n)) in tested:
                ev.add("dict", 3)  # looked up by a key tested to be in it
            elif k == "str":
                ev.add("dict", 3)
                ev.keys.append(sl.value)
            elif isinstance(sl, ast.Slice):
                up = parents.get(id(p))
                if isinstance(up, ast.BinOp) and isinstance(up.op, ast.Add) and \
                        _const_kind(up.right if up.left is p else up.left) == "bytes":
                    ev.add("bytes", 6)  # data[i:j] + b'|': a part of bytes
                ev.add("list", 1.5)
                ev.add("str", 1)
            elif _item_is_text(p, parents, body, classes, depth):
                ev.add("str", 2)  # s[i] == "*": a string's characters (or a list of strings)
                ev.elem.append(STR)
            else:
                ev.add("list", 1.5)
                ev.add("dict", 0.3)
        elif isinstance(p, ast.Subscript) and p.slice is n:
            if (ast.dump(n), ast.dump(p.value)) in tested:
                ev.add("str", 1)  # a key tested to be in the mapping first
            elif not table_keys(p.value, 3):
                ev.add("int", 2)
        elif isinstance(p, ast.comprehension) and p.iter is n:
            ev.add("list", 2)
            comp = parents.get(id(p))
            if isinstance(p.target, ast.Name) and comp is not None and _made_a_byte(comp, p.target.id):
                ev.add("bytes", 4)  # [bytes([b]).hex() for b in data]: data's items are bytes' ints
            if isinstance(p.target, ast.Name) and depth < 2 and comp is not None:
                # ``sum(item.price * item.qty for item in items)``: the items, from the expression
                parts = [getattr(comp, f) for f in ("elt", "key", "value") if getattr(comp, f, None) is not None]
                parts += [c for g in getattr(comp, "generators", []) for c in g.ifs]
                ev.elem.append(_infer([ast.Expr(e) for e in parts], p.target.id, classes, depth + 1, None))
        elif isinstance(p, ast.For) and p.iter is n:
            ev.add("list", 2.5)
            if isinstance(p.target, ast.Name) and any(_made_a_byte(stmt, p.target.id) for stmt in p.body):
                ev.add("bytes", 4)  # for c in s: c = bytes((c,)) (quopri's unhex): s is bytes
            if isinstance(p.target, ast.Name) and depth < 2:
                ev.elem.append(_infer(p.body, p.target.id, classes, depth + 1, None))
            elif isinstance(p.target, ast.Tuple):
                ev.elem.append(Spec("tuple", (INT, INT)))
        elif isinstance(p, (ast.If, ast.While, ast.IfExp)) and p.test is n:
            ev.add("bool", 0.5)
        elif isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not):
            ev.add("bool", 0.5)
        elif isinstance(p, ast.JoinedStr) or isinstance(p, ast.FormattedValue):
            ev.add("str", 0.2)
        elif isinstance(p, ast.Starred):  # f(*x): x's items are arguments
            ev.add("list", 2)
    return ev


def _loop_value(attr: ast.Attribute, parents: dict[int, ast.AST], method: str) -> tuple[list[ast.stmt], str] | None:
    """``for k, v in x.items(): BODY`` / ``for v in x.values(): BODY`` (or a comprehension
    over them): ``(BODY, 'v')``, where the body says what the dict's values are."""
    call = parents.get(id(attr))
    if not (isinstance(call, ast.Call) and call.func is attr and not call.args):
        return None
    loop = parents.get(id(call))
    if isinstance(loop, (ast.For, ast.comprehension)) and loop.iter is call:
        target = loop.target
        if method == "items":
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                return None
            target = target.elts[1]
        if not isinstance(target, ast.Name):
            return None
        if isinstance(loop, ast.For):
            return loop.body, target.id
        comp = parents.get(id(loop))
        parts = [getattr(comp, f) for f in ("elt", "key", "value") if getattr(comp, f, None) is not None]
        parts += [c for g in getattr(comp, "generators", []) for c in g.ifs]
        return [ast.Expr(e) for e in parts], target.id
    return None


def _item_is_text(item: ast.Subscript, parents: dict[int, ast.AST], body: list[ast.stmt],
                  classes: dict[str, list[str]], depth: int) -> bool:
    """``x[i]`` is compared with a string literal (``x[i] == "!"``), or bound to a name that the
    body uses as a string (``c = x[i]`` ... ``c == "*"``)."""
    up = parents.get(id(item))
    if isinstance(up, ast.Compare) and not any(isinstance(op, (ast.In, ast.NotIn)) for op in up.ops):
        return any(o is not item and _const_kind(o) == "str" for o in [up.left, *up.comparators])
    if isinstance(up, ast.Assign) and up.value is item and len(up.targets) == 1 and \
            isinstance(up.targets[0], ast.Name) and depth < 2:
        spec = _infer(body, up.targets[0].id, classes, depth + 1, None)
        return spec == STR or (spec.kind == "union" and STR in spec.args)  # "*", "?", ... or any text
    return False


# modules whose functions take paths and patterns as strings (not str.join(iterable), not filter(f, it))
_PATH_MODULES = frozenset({"os.path", "path", "posixpath", "ntpath", "fnmatch", "glob"})


def _module_path_call(func: ast.expr) -> bool:
    """``os.path.join(...)``, ``posixpath.split(...)``, ``fnmatch.filter(...)``, ``glob.glob(...)``."""
    if not isinstance(func, ast.Attribute):
        return False
    v = func.value
    dotted = v.id if isinstance(v, ast.Name) else \
        f"{v.value.id}.{v.attr}" if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) else None
    return dotted in _PATH_MODULES


def _by_name(name: str) -> Spec | None:
    low = name.lower()
    if low in _BOOL_NAMES or low.startswith(_BOOL_PREFIXES):
        return BOOL
    if low in _CALLABLE_NAMES:
        return Spec("callable")
    if low in _INT_NAMES or low.startswith(("n_", "num_", "max_", "min_", "count_")) or \
            low.endswith(("_count", "_index", "_idx", "_size", "_len", "_length", "_num", "_id")):
        return INT
    if low in _STR_LIST_NAMES:
        return Spec("list", (STR,))
    if low in _LIST_NAMES or low in ("matrix", "grid", "board"):
        if low in ("matrix", "grid", "board"):
            return Spec("list", (Spec("list", (INT,)),))
        return Spec("list", (INT,))
    if low in _GRAPH_NAMES:  # node -> the nodes it points to
        return Spec("dict", (STR, Spec("list", (STR,))))
    if low in _DICT_NAMES:
        return Spec("dict", (STR, INT))
    if low in _STR_NAMES or low.endswith(("_str", "_string", "_name", "_text", "_char", "_word")):
        return STR
    if low in _FLOAT_NAMES or low.endswith(("_rate", "_ratio", "_price", "_amount", "_pct")):
        return FLOAT
    if low.endswith("s") and len(low) > 3:
        return Spec("list", (INT,))
    return None


def _infer(body: list[ast.stmt], name: str, classes: dict[str, list[str]], depth: int,
           hint: Spec | None, tables: dict[str, list] | None = None) -> Spec:
    ev = _evidence(body, name, classes, depth, tables)
    return _decide(ev, name, classes, hint)


def _decide(ev: _Evidence, name: str, classes: dict[str, list[str]], hint: Spec | None) -> Spec:
    # an attribute that only a class of the module has: an instance of that class
    special = (ev.attrs - _STR_METHODS - _LIST_METHODS - _DICT_METHODS - _SET_METHODS) | ev.fields
    if special:
        fits = [c for c, members in classes.items() if special <= set(members)]
        if fits:
            ev.add("instance:" + fits[0], 5)
    plain = _STR_METHODS | _LIST_METHODS | _DICT_METHODS
    if ev.attrs & {"group", "groups", "groupdict"} and not ev.attrs & plain:
        base = Spec("match")  # m.group(1), m.groups(): a match object
    elif ev.attrs & _STREAM_METHODS and not ev.attrs & (plain | _SET_METHODS) \
            and not any(k.startswith("instance:") for k in ev.scores):
        base = Spec("stream", ("str",))  # f.read(), out.write(text): a file (xmltodict's output)
    elif not ev.scores:
        base = hint or _by_name(name) or ANY
    else:
        kind = max(ev.scores, key=lambda k: (ev.scores[k], k))
        if kind.startswith("instance:"):
            base = Spec("instance", (kind.split(":", 1)[1],))
        elif kind == "list":
            elem = next((e for e in ev.elem if e is not None and e != ANY), None)
            by_name = _by_name(name)
            if elem is None and by_name is not None and by_name.kind == "list":
                elem = by_name.args[0]
            base = Spec("list", (elem or INT,))
            if name.lower() in _GRAPH_NAMES and ev.scores.get("dict", 0) > 0 and by_name is not None:
                # graph[node] iterated, `start not in graph`: a dict of the nodes' neighbours as
                # likely as a list (an adjacency matrix): both (bfs_order, shortest_path were
                # only called on lists, their search never ran)
                base = Spec("union", (by_name, base))
        elif kind == "dict":
            by_name = _by_name(name)
            base = Spec("dict", (STR, by_name.args[1] if by_name is not None and by_name.kind == "dict" else INT))
            value = next((v for v in ev.values if v.kind in ("list", "set", "dict", "instance")), None)
            if value is not None and value.kind in ("list", "set"):
                # values iterated or unpacked (graphlib's add(node, *predecessors)): collections
                # of the dict's own keys, a graph
                base = Spec("dict", (STR, Spec(value.kind, (STR,))))
            elif value is not None:
                base = Spec("dict", (STR, value))
            if ev.keys:
                base = Spec("dict", (Spec("literal", tuple(dict.fromkeys(ev.keys))), base.args[1]))
        elif kind == "set":
            base = Spec("set", (INT,))
        elif kind in ("int", "float"):
            both = ev.scores.get("int", 0) and ev.scores.get("float", 0)
            by_name = _by_name(name)
            if both and by_name is not None and by_name.kind in ("int", "float"):
                base = by_name
            else:
                base = Spec(kind)
        elif kind == "callable" and len(set(ev.arities)) == 1 and ev.arities[0] in (0, 2):
            base = Spec("callable", (ev.arities[0],))  # ``func()``: called with no argument
        else:
            base = Spec(kind)
    str_lits = [v for v in ev.literals if isinstance(v, str)]
    if base == STR and str_lits and len(str_lits) >= 2:
        base = Spec("union", (Spec("literal", tuple(dict.fromkeys(str_lits))), STR))
    if ev.optional and base.kind not in ("optional", "none"):
        base = Spec("optional", (base,))
    return base


def guessed_by_name(param, body: list[ast.stmt], spec: Spec) -> bool:
    """``spec`` is only the guess from the parameter's name (``shortopts``: a plural, a list):
    no hint, no default, nothing in ``body`` using it but handing it on."""
    if param.annotation is not None or param.default is not None or spec != _by_name(param.name):
        return False
    ev = _evidence(body, param.name, {}, 0)
    return not (ev.scores or ev.attrs or ev.elem or ev.keys or ev.literals or ev.values or ev.type_checked)


def infer_param(param, body: list[ast.stmt], classes: dict[str, tuple[str, list[str]]],
                tables: dict[str, list] | None = None) -> Spec:
    """The spec of one parameter: its hint, else its default's type (with usage deciding between
    a few), else its use in ``body``, else its name. ``classes`` maps each class of the module to
    ``(style, member names)``. A parameter the body checks with ``isinstance`` is wrapped in
    ``checked`` (its pool also holds a value of another type)."""
    spec = _infer_param(param, body, classes, tables)
    ev = _evidence(body, param.name, {}, 0)
    if spec.kind not in ("any", "union", "optional") and ev.type_checked:
        # and the other simple types it is tested for (Fraction's numerator: float, Decimal, str)
        others = [k for k in dict.fromkeys(ev.checked_kinds) if k != spec.kind and k in _CHECKED_KINDS]
        return Spec("checked", (spec, *(Spec(k) for k in others)))
    return spec


def _made_a_byte(node: ast.AST, name: str) -> bool:
    """Whether ``node`` makes the value named ``name`` into one byte: ``bytes((c,))``,
    ``bytes([c])``, ``bytearray([c])`` (an item of bytes, an int, back into bytes)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("bytes", "bytearray") \
                and len(n.args) == 1 and isinstance(n.args[0], (ast.Tuple, ast.List)) \
                and len(n.args[0].elts) == 1 and isinstance(n.args[0].elts[0], ast.Name) \
                and n.args[0].elts[0].id == name:
            return True
    return False


_CHECKED_KINDS = frozenset({"int", "float", "str", "bytes", "decimal", "fraction", "complex"})


def _infer_param(param, body: list[ast.stmt], classes: dict[str, tuple[str, list[str]]],
                 tables: dict[str, list] | None = None) -> Spec:
    styles = {k: v[0] for k, v in classes.items()}
    members = {k: v[1] for k, v in classes.items()}
    hint = from_annotation(param.annotation, styles)
    if hint is not None and hint.kind in ("list", "set", "frozenset") and hint.args == (ANY,):
        # a bare ``list`` whose items the body reads as the module's objects (``item.sku``)
        usage = _infer(body, param.name, members, 0, None, tables)
        if usage.kind == hint.kind and usage.args and usage.args[0].kind == "instance":
            hint = usage
    elif hint is not None and hint.kind == "dict" and hint.args == (ANY, ANY):
        # a bare ``dict`` whose values the body reads as the module's objects (``sec.values``)
        usage = _infer(body, param.name, members, 0, None, tables)
        if usage.kind == "dict" and usage.args[1:] and usage.args[1].kind == "instance":
            hint = usage
    if hint is not None and hint != ANY:
        if param.default is not None and isinstance(param.default, ast.Constant) and \
                param.default.value is None and hint.kind not in ("optional", "none", "union"):
            return Spec("optional", (hint,))
        return hint
    dflt = from_default(param.default)
    usage = _infer(body, param.name, members, 0, dflt, tables)
    if dflt is not None and dflt != ANY:
        if usage.kind == "optional":
            return Spec("optional", (dflt,))
        return dflt
    if param.default is not None and isinstance(param.default, ast.Constant) and param.default.value is None:
        return usage if usage.kind == "optional" else Spec("optional", (usage,))
    if param.kind == "star":
        return usage if usage != ANY else (_by_name(param.name) or INT)
    return usage


def module_globals(tree: ast.Module) -> set[str]:
    """The names the module binds at its top level: assignments, classes, functions, names
    imported from other modules (h11's ``from ._state import CLIENT``), not whole modules."""
    out: set[str] = set()
    for n in tree.body:
        if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                out |= {e.id for e in ast.walk(t) if isinstance(e, ast.Name)}
        elif isinstance(n, ast.ImportFrom):  # (``import os``: a module, which the suite does not
            out |= {a.asname or a.name for a in n.names if a.name != "*"}  # import from the module)
    return out


def _global_text(node: ast.expr, names: set[str]) -> str | None:
    """``NAME`` or ``NAME.attr`` (``NAME.a.b``) where NAME is one of ``names``, as text."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in names and len(parts) <= 2:
        return ".".join([node.id, *reversed(parts)])
    return None


def names_checked(body: list[ast.stmt], name: str, globals_: set[str]) -> tuple[str, ...]:
    """The module's names the body compares parameter ``name`` with, as argument text:
    ``name in (CLIENT, SERVER)`` / ``not in``, ``name is CLIENT``, ``name == Modes.FAST`` (h11's
    ``Connection(our_role)`` raises unless ``our_role`` is one of them). A name the body binds
    itself is a local, not the module's."""
    local = {n.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Name)
             and isinstance(n.ctx, (ast.Store, ast.Del))}
    known = globals_ - local - {name}
    out: list[str] = []
    for stmt in body:
        for c in ast.walk(stmt):
            if not isinstance(c, ast.Compare):
                continue
            sides = [c.left, *c.comparators]
            for i, op in enumerate(c.ops):
                a, b = sides[i], sides[i + 1]
                if isinstance(op, (ast.In, ast.NotIn)):
                    if _is(a, name) and isinstance(b, (ast.Tuple, ast.List, ast.Set)):
                        out += [t for t in (_global_text(e, known) for e in b.elts) if t]
                elif isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
                    other = b if _is(a, name) else a if _is(b, name) else None
                    t = _global_text(other, known) if other is not None else None
                    if t:
                        out.append(t)
    return tuple(dict.fromkeys(out))
