"""numpy arrays (and numpy bools) crossing as data: encoded through the value's own methods,
decoded under a size bound per array and per message."""

from __future__ import annotations

import sys

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


def _is_array(t) -> bool:
    """Whether ``t`` is numpy's ndarray (read through ``type``'s own descriptors)."""
    return type.__dict__["__module__"].__get__(t) == "numpy" and type.__dict__["__name__"].__get__(t) == "ndarray"
