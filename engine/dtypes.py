"""Dtype names, computed once per distinct dtype (``np.dtype(x).name`` is slow),
and the float64 mode of gradient checking."""

import contextlib
import contextvars
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


_KEEP_FLOAT64 = contextvars.ContextVar("nodeweave_keep_float64", default=False)


@contextlib.contextmanager
def keeping_float64():
    """Within it, a model's training ``forward`` keeps float64 inputs as they are
    instead of casting them to its Inputs' dtypes (``gradient_check`` runs in
    float64 so that finite differences are exact enough)."""
    token = _KEEP_FLOAT64.set(True)
    try:
        yield
    finally:
        _KEEP_FLOAT64.reset(token)


def float64_kept() -> bool:
    """Whether ``keeping_float64`` is in effect in this context."""
    return _KEEP_FLOAT64.get()
