"""Helpers shared by the reshaping layers: Keras' argument standardization
(``data_format``, integer tuples, per-axis pairs) and the index arithmetic of
cropping and zero-padding, which are each other's backward pass."""

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


def standardize_pairs(value, name):
    """Cropping2D's and ZeroPadding2D's argument: an int (the same on both sides of
    both axes), two ints (symmetric per axis) or two pairs ``((top, bottom), (left, right))``."""
    if is_int(value):
        return (standardize_tuple(value, 2, name, allow_zero=True),) * 2
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ValueError(
            f"`{name}` should be either an int, a tuple of 2 ints or a tuple of 2 tuples of 2 ints "
            f"((top, bottom), (left, right)). Received: {name}={value!r}."
        )
    return (standardize_tuple(value[0], 2, f"1st entry of {name}", allow_zero=True),
            standardize_tuple(value[1], 2, f"2nd entry of {name}", allow_zero=True))


def spatial_axes(data_format, rank):
    """The axes between the batch and the channels axes."""
    return tuple(range(2, rank)) if data_format == "channels_first" else tuple(range(1, rank - 1))


def crop(x, axes, pairs):
    """Removes ``pairs[i] = (before, after)`` elements from each end of ``x`` along ``axes[i]``."""
    index = [slice(None)] * x.ndim
    for axis, (before, after) in zip(axes, pairs):
        index[axis] = slice(before, x.shape[axis] - after)
    return x[tuple(index)]


def zero_pad(x, axes, pairs):
    """Adds ``pairs[i] = (before, after)`` zeros at each end of ``x`` along ``axes[i]``."""
    widths = [(0, 0)] * x.ndim
    for axis, pair in zip(axes, pairs):
        widths[axis] = pair
    return np.pad(x, widths)


def is_int(value):
    """Whether ``value`` is an integer (a Python or NumPy one, not a bool)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
