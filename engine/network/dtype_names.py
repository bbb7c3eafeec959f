"""A dtype's name and NumPy dtype, looked up once per distinct dtype (``np.dtype`` costs more than a graph's
other per-layer checks)."""

import numpy as np

from engine.dtypes import dtype_name

#: ``{dtype as given: (its name, its NumPy dtype)}``, filled as dtypes are met.
DTYPE_NAMES = {}


def dtype_names(dtype):
    """``(name, numpy dtype)`` of ``dtype`` (a name, a NumPy type or dtype), looked up once per distinct dtype.

    Args:
        dtype: a dtype name, a NumPy scalar type or a NumPy dtype.

    Example:
        >>> import numpy as np
        >>> dtype_names(np.float32)
        ('float32', dtype('float32'))
    """
    try:
        return DTYPE_NAMES[dtype]
    except (KeyError, TypeError):  # TypeError: an unhashable dtype-like
        named = (dtype_name(dtype), np.dtype(dtype))
        try:
            DTYPE_NAMES[dtype] = named
        except TypeError:
            pass
        return named
