"""Typed configuration: YAML files mapped onto dataclasses, with validation and overrides.

* ``load_config(Cls, path, overrides)`` reads YAML, applies ``key.sub=value`` overrides (values are
  parsed as YAML scalars/lists), and builds ``Cls`` recursively.
* Every value is type-checked against the dataclass annotations; unknown keys are errors that
  suggest the nearest valid key; errors are :class:`matrix.errors.InputError` naming the file,
  the line of the offending key and the dotted field.
* A dataclass may define ``validate(self)`` raising ``ValueError("field: message")`` for
  cross-field checks; it is reported the same way.
* ``paths``: dotted fields that name files. A relative path written in a config file resolves
  against that file's directory (then, if nothing is there, the current directory: the shipped
  configs name the user's data files as ``data/...``); one given as an override resolves against
  the current directory. Either way the loaded value is absolute, so a saved run config works from
  anywhere. ``checks``: ``{dotted field: fn(value)}`` run on the (resolved) value when the file or
  an override sets it; ``fn`` raises ``ValueError(message)``, reported with file, line and field.
* ``find_config(name)`` takes a path or the name of a shipped config (``smoke``, ``tiny``, ...:
  package data of ``coevo.configs``, the repository's ``configs/`` directory).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import types
import typing
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import yaml

from matrix.errors import InputError

T = typing.TypeVar("T")


def _line_index(text: str) -> dict[str, int]:
    """Map dotted key paths of a YAML mapping document to 1-based line numbers."""
    lines: dict[str, int] = {}
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return lines

    def walk(node, prefix: str):
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = f"{prefix}{key_node.value}"
                lines[key] = key_node.start_mark.line + 1
                walk(value_node, key + ".")

    if root is not None:
        walk(root, "")
    return lines


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (PyYAML keeps the last one
    without a word: two `lr:` lines in a config silently meant the second)."""

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {_show(key)} is given twice (first on line {seen[key] + 1})",
                        key_node.start_mark)
                seen[key] = key_node.start_mark.line
            except TypeError:  # an unhashable key: the base class says so
                pass
        return super().construct_mapping(node, deep=deep)


def _load_yaml(text: str):
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass


def _show(value: Any, limit: int = 120) -> str:
    """A value for a one-line message: its repr cut to ``limit`` characters, built no larger (a
    430-byte YAML alias bomb printed whole made a 312 MB message), or its type where it has none
    (an int past the digit limit)."""
    import reprlib

    r = reprlib.Repr()
    r.maxstring = r.maxother = r.maxlong = limit
    r.maxlevel, r.maxlist, r.maxdict, r.maxtuple, r.maxset = 3, 6, 6, 6, 6
    try:
        text = r.repr(value)
    except (ValueError, RecursionError):
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _default_of(f: dataclasses.Field) -> Any:
    """A field's default value (a fresh one from its factory), or None."""
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None if f.default is dataclasses.MISSING else f.default


class _Reader:
    def __init__(self, file: str | None, lines: dict[str, int], overridden: set[str] = frozenset(),
                 paths: Collection[str] = (), checks: Mapping[str, Callable[[Any], None]] | None = None,
                 override_leaves: Collection[str] = ()):
        self.file = file
        self.lines = lines
        self.overridden = overridden
        self.override_leaves = set(override_leaves)  # the dotted keys the overrides name themselves
        self.paths = set(paths)
        self.checks = dict(checks or {})

    def error(self, path: str, message: str) -> InputError:
        if path in self.overridden or self.file is None:
            return InputError(message, file="<overrides>", field=path or None)
        line = None
        probe = path
        while probe:
            if probe in self.lines:
                line = self.lines[probe]
                break
            probe = probe.rpartition(".")[0]
        return InputError(message, file=self.file, line=line, field=path or None)

    def build(self, cls, data: Any, path: str, base: Any = None):
        """``cls`` from ``data``; keys ``data`` leaves out keep their value in ``base`` (the
        parent's default for this section, e.g. the tiny world's learning rate), else the class
        default."""
        if not isinstance(data, dict):
            raise self.error(path, f"expected a mapping for {cls.__name__}, got {type(data).__name__}")
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
        kwargs = {name: getattr(base, name) for name in fields} if isinstance(base, cls) else {}
        for key, value in data.items():
            dotted = f"{path}.{key}" if path else str(key)
            if key not in fields:
                near = difflib.get_close_matches(str(key), list(fields), n=1, cutoff=0.5)
                hint = f"; did you mean '{near[0]}'?" if near else f"; valid keys: {', '.join(fields)}"
                raise self.error(dotted, f"unknown key{hint}")
            section = None  # what a partly given sub-section starts from
            if dataclasses.is_dataclass(hints[key]):
                section = kwargs[key] if key in kwargs else _default_of(fields[key])
            elif self._keys_overridden(dotted) and isinstance(value, dict):
                # `train.role_weights.fixer=1.5` changes one key of the mapping, keeping the rest
                # (the default's or the section's); a config file's mapping replaces it whole
                start = kwargs[key] if key in kwargs else _default_of(fields[key])
                if isinstance(start, dict):
                    value = {**start, **value}
            kwargs[key] = self.coerce(hints[key], value, dotted, section)
            written = kwargs[key]
            if dotted in self.paths and isinstance(kwargs[key], str) and kwargs[key]:
                kwargs[key] = self.resolve(kwargs[key], dotted)
            if dotted in self.checks and kwargs[key] is not None:
                try:
                    self.checks[dotted](kwargs[key])
                except ValueError as exc:
                    raise self.error(dotted, str(exc) + self._also_looked(written, dotted)) from None
        try:
            obj = cls(**kwargs)
        except TypeError as exc:  # missing required fields
            raise self.error(path, str(exc)) from None
        validate = getattr(obj, "validate", None)
        if callable(validate):
            try:
                validate()
            except ValueError as exc:
                field, _, msg = str(exc).partition(": ")
                if msg and field.replace("_", "").replace(".", "").isalnum():
                    raise self.error(f"{path}.{field}" if path else field, msg) from None
                raise self.error(path, str(exc)) from None
        return obj

    def _keys_overridden(self, dotted: str) -> bool:
        """Overrides name keys inside the field ``dotted`` (not the field whole), and the config
        file does not set it."""
        return dotted not in self.override_leaves and dotted not in self.lines \
            and any(k.startswith(dotted + ".") for k in self.override_leaves)

    def resolve(self, value: str, path: str) -> str:
        """An absolute path for a path field (see the module doc)."""
        p = Path(value).expanduser()
        if p.is_absolute():
            return str(p)
        if path in self.overridden or self.file is None:
            return str(Path.cwd() / p)
        beside = Path(self.file).resolve().parent / p
        if not beside.exists() and (Path.cwd() / p).exists():
            return str(Path.cwd() / p)
        return str(beside)

    def _also_looked(self, written: Any, path: str) -> str:
        """For a relative path a config file names that is in neither place: where else it was
        looked for (the current directory), so the user sees both."""
        if path not in self.paths or not isinstance(written, str) or not written:
            return ""
        p = Path(written).expanduser()
        if p.is_absolute() or path in self.overridden or self.file is None or (Path.cwd() / p).exists():
            return ""
        return f" (a relative path is looked for beside the config file, then in the current directory: " \
               f"not at {Path.cwd() / p} either)"

    def coerce(self, tp, value: Any, path: str, default: Any = None):
        origin = get_origin(tp)
        if tp is Any:
            return value
        if dataclasses.is_dataclass(tp):
            if value is None:
                return default if isinstance(default, tp) else tp()
            return self.build(tp, value, path, base=default)
        if origin in (Union, types.UnionType):
            args = get_args(tp)
            if value is None and type(None) in args:
                return None
            errors = []
            for arg in args:
                if arg is type(None):
                    continue
                try:
                    return self.coerce(arg, value, path)
                except InputError as exc:
                    errors.append(exc.message)
            raise self.error(path, " or ".join(errors))
        if origin is Literal:
            choices = get_args(tp)
            if value not in choices:
                raise self.error(path, f"must be one of {list(choices)}, got {_show(value)}")
            return value
        if origin in (list, tuple):
            if not isinstance(value, (list, tuple)):
                word = isinstance(value, str) and 0 < len(value) <= 60 and "\n" not in value
                example = f" (e.g. [{value}])" if word else ""
                raise self.error(path, f"must be a list{example}, got {type(value).__name__}")
            (item_tp, *_) = get_args(tp) or (Any,)
            items = [self.coerce(item_tp, v, f"{path}[{i}]") for i, v in enumerate(value)]
            return items if origin is list else tuple(items)
        if origin is dict:
            if not isinstance(value, dict):
                raise self.error(path, f"must be a mapping, got {type(value).__name__}")
            _, val_tp = get_args(tp) or (Any, Any)
            return {k: self.coerce(val_tp, v, f"{path}.{k}") for k, v in value.items()}
        if tp is bool:
            if not isinstance(value, bool):
                raise self.error(path, f"must be true or false, got {_show(value)}")
            return value
        if tp is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.error(path, f"must be an integer, got {_show(value)}")
            return value
        if tp is float:
            if isinstance(value, str):  # PyYAML reads 1e-5 (no dot) as a string
                try:
                    value = float(value)
                except ValueError:
                    pass
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.error(path, f"must be a number, got {_show(value)}")
            if not math.isfinite(value):  # .nan passed every `x <= 0` check; no field means "none" by .inf
                raise self.error(path, f"must be a finite number, got {value}")
            return float(value)
        if tp is str:
            if not isinstance(value, str):
                raise self.error(path, f"must be a string, got {_show(value)}")
            return value
        return value


def parse_overrides(overrides: list[str]) -> dict[str, Any]:
    """``["train.lr=1e-5", "loop.roles=[coder,tester]"]`` -> nested dict."""
    nested: dict[str, Any] = {}
    first: dict[str, str] = {}  # key -> the override that gave it (a key given twice is refused, as in YAML)
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"override {_show(item)} must look like key.sub=value", file="<overrides>")
        name = key.strip()
        if name in first:
            raise InputError(f"override {_show(item)}: {name} is given twice (first as {_show(first[name])})",
                             file="<overrides>")
        first[name] = item
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except (yaml.YAMLError, ValueError):  # (ValueError: an int past the digit limit)
            value = raw
        except RecursionError:
            raise InputError(f"override {_show(item)}: nested too deeply", file="<overrides>") from None
        cur = nested
        parts = key.strip().split(".")
        for part in parts[:-1]:
            nxt = cur.setdefault(part, {})
            if not isinstance(nxt, dict):
                raise InputError(f"override {_show(item)} conflicts with another override", file="<overrides>")
            cur = nxt
        if parts[-1] in cur:  # `loop.steps.x=1` then `loop.steps=3`; `a.b={c: 1}` then `a.b.c=2` (last won)
            raise InputError(f"override {_show(item)} conflicts with another override", file="<overrides>")
        cur[parts[-1]] = value
    return nested


def _merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def shipped_config_dir() -> Path:
    """The directory of the configs shipped with coevo (package ``coevo.configs``)."""
    import coevo.configs

    return Path(coevo.configs.__file__).resolve().parent


def shipped_configs() -> list[str]:
    """Names of the shipped configs (``--config NAME``)."""
    return sorted(p.stem for p in shipped_config_dir().glob("*.yaml"))


def find_config(name: str | Path) -> Path:
    """The config file ``name`` names: an existing file, else (a bare name, with or without
    ``.yaml``) the shipped config of that name. Raises :class:`InputError` otherwise."""
    p = Path(name).expanduser()
    if p.is_file():
        return p
    if p.is_dir():
        raise InputError("is a directory, not a config file", file=str(name))
    if os.sep not in str(name) and "/" not in str(name):
        stem = p.name[: -len(p.suffix)] if p.suffix in (".yaml", ".yml") else p.name
        shipped = shipped_config_dir() / f"{stem}.yaml"
        if shipped.is_file():
            return shipped
    raise InputError(f"no such config file (shipped configs, by name: {', '.join(shipped_configs())})",
                     file=str(name))


def load_config(cls: type[T], path: str | Path | None = None, overrides: list[str] | None = None, *,
                paths: Collection[str] = (), checks: Mapping[str, Callable[[Any], None]] | None = None) -> T:
    """Build ``cls`` from an optional YAML file (a path or a shipped config's name) plus
    ``key=value`` overrides; ``paths`` and ``checks`` as in the module doc."""
    data: dict[str, Any] = {}
    lines: dict[str, int] = {}
    file = None
    if path is not None:
        p = find_config(path)
        file = str(p)
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=file) from None
        except OSError as exc:
            raise InputError(f"cannot read ({exc.strerror or exc})", file=file) from None
        try:
            loaded = _load_yaml(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(f"malformed YAML ({getattr(exc, 'problem', exc)})", file=file,
                             line=mark.line + 1 if mark else None) from None
        except RecursionError:
            raise InputError("malformed YAML (nested too deeply)", file=file) from None
        except ValueError as exc:  # an int past Python's digit limit
            raise InputError(f"malformed YAML ({str(exc)[:100]})", file=file) from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise InputError("the config must be a mapping", file=file, line=1)
        data = loaded
        lines = _line_index(text)
    over = parse_overrides(overrides or [])
    leaves = {item.partition("=")[0].strip() for item in overrides or []}
    reader = _Reader(file, lines, overridden=set(_dotted_keys(over)), paths=paths, checks=checks,
                     override_leaves=leaves)
    return reader.build(cls, _merge(data, over), "")


def _dotted_keys(nested: dict, prefix: str = ""):
    for k, v in nested.items():
        yield f"{prefix}{k}"
        if isinstance(v, dict):
            yield from _dotted_keys(v, f"{prefix}{k}.")


def to_dict(obj) -> dict[str, Any]:
    """A dataclass config as plain data (for saving next to a run)."""
    return dataclasses.asdict(obj)


def save_config(obj, path: str | Path) -> None:
    """Write a config as YAML, atomically."""
    from matrix.jsonl import write_text_atomic

    write_text_atomic(path, yaml.safe_dump(to_dict(obj), sort_keys=False))
