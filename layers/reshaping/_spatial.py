"""Helpers shared by the reshaping layers: per-axis (before, after) pairs and the
index arithmetic of cropping and zero-padding, which are each other's backward pass."""

import numpy as np

from layers._arguments import is_int, standardize_tuple


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


