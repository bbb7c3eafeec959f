"""Keras' argument standardization shared across the catalog: ``data_format``,
integer tuples (kernel sizes, strides, pool sizes), and the integer check."""

import numpy as np

_DATA_FORMATS = ("channels_first", "channels_last")


def standardize_data_format(data_format):
    """``None`` means ``"channels_last"``; otherwise one of the two names, any case."""
    if data_format is None:
        return "channels_last"
    value = str(data_format).lower()
    if value not in _DATA_FORMATS:
        raise ValueError(
            "The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
            f"Received: data_format={data_format!r}"
        )
    return value


def standardize_tuple(value, n, name, allow_zero=False):
    """An integer (repeated ``n`` times) or ``n`` integers, as a tuple of ints that are
    positive (``>= 0`` with ``allow_zero``)."""
    message = f"The `{name}` argument must be a tuple of {n} integers. Received: {name}={value!r}"
    if is_int(value):
        values = (int(value),) * n
    else:
        try:
            values = tuple(value)
        except TypeError:
            raise ValueError(message) from None
        if len(values) != n or not all(is_int(v) for v in values):
            raise ValueError(message)
        values = tuple(int(v) for v in values)
    if min(values) < (0 if allow_zero else 1):
        requirement = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{message}, including values that do not satisfy `value {requirement}`")
    return values


def is_int(value):
    """Whether ``value`` is an integer (a Python or NumPy one, not a bool)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
