"""Dtype names, computed once per distinct dtype (``np.dtype(x).name`` is slow)."""

import functools

import numpy as np


@functools.lru_cache(maxsize=None)
def dtype_name(dtype) -> str:
    """``"float32"`` for ``"float32"``, ``np.float32`` or ``np.dtype("float32")``."""
    return np.dtype(dtype).name


@functools.lru_cache(maxsize=None)
def dtype_kind(dtype) -> str:
    """NumPy's kind code: ``"f"`` for floats, ``"i"`` for ints, ``"b"`` for bools, ..."""
    return np.dtype(dtype).kind
