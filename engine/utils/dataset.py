"""Splitting in-memory data in two (train / test), as Keras' ``split_dataset``."""

import numbers
import random

import numpy as np

from engine import tree
from engine.utils.random_state import random_generator


def split_dataset(dataset, left_size=None, right_size=None, shuffle: bool = False, seed: int | None = None):
    """Splits an array, or a tuple (or list, or dict) of arrays with one sample
    per row, into a left and a right part of the same structure.

    Keras returns ``tf.data.Dataset`` objects; here the parts are NumPy arrays
    holding the same samples in the same order (Keras' shuffle, by Python's
    ``random`` with the same seed, included).

    Args:
        dataset: an array, or a tuple/list/dict of arrays of the same length.
        left_size: a fraction in (0, 1) or a number of samples for the left
            part; by default the complement of ``right_size``.
        right_size: the same for the right part, taken from the end; by
            default the complement of ``left_size``.
        shuffle: whether to shuffle the samples before splitting.
        seed: the shuffle's seed; by default one drawn from the global
            generator (``set_random_seed``).

    Example:
        >>> x, y = np.arange(10).reshape(5, 2), np.arange(5)
        >>> (x_left, y_left), (x_right, y_right) = split_dataset((x, y), left_size=0.6)
        >>> y_left, y_right
        (array([0, 1, 2]), array([3, 4]))
    """
    if left_size is None and right_size is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be specified. "
                         "Received: left_size=None and right_size=None")
    arrays = [np.asarray(a) for a in tree.flatten(dataset)]
    if isinstance(dataset, (str, bytes)) or not arrays or any(a.ndim == 0 for a in arrays):
        raise TypeError("The `dataset` argument must be an array or a tuple, list or dict of arrays (one sample "
                        f"per row). Received: dataset of type {type(dataset).__name__}.")
    lengths = {len(a) for a in arrays}
    if len(lengths) != 1:
        raise ValueError(f"The arrays of `dataset` must have the same number of samples, received lengths "
                         f"{[len(a) for a in arrays]}.")
    total = lengths.pop()
    left, right = _split_sizes(left_size, right_size, total)
    order = list(range(total))
    if shuffle:
        if seed is None:
            seed = int(random_generator().integers(0, 10**6 + 1))
        random.Random(seed).shuffle(order)  # the permutation Keras' random.seed(seed); random.shuffle(...) makes
    order = np.asarray(order, dtype=np.int64)
    return tuple(_take(dataset, arrays, indices) for indices in (order[:left], order[total - right:]))


def _take(dataset, arrays, indices):
    parts = [a[indices] for a in arrays]
    if not isinstance(dataset, (list, tuple, dict)):
        return parts[0]
    packed = tree.pack_as(dataset, parts)
    return tuple(packed) if isinstance(packed, list) else packed


def _split_sizes(left_size, right_size, total):
    """Keras' checks and rounding of the two sizes: fractions round to samples,
    and each part must hold at least one sample."""
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if size is not None and (isinstance(size, bool) or not isinstance(size, numbers.Real)):
            raise TypeError(f"Invalid `{name}` Type. Expected: int or float or None, Received: "
                            f"type({name})={type(size)}.")
        integer = isinstance(size, numbers.Integral)
        if size is not None and (size <= 0 or (size >= total if integer else size >= 1)):
            raise ValueError(f"`{name}` should be either a positive integer smaller than {total}, or a float "
                             f"within the range `[0, 1]`. Received: {name}={size}")
    if isinstance(left_size, float) and isinstance(right_size, float) and left_size + right_size > 1:
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must be less than or "
                         "equal to 1.")
    left = None if left_size is None else int(left_size) if isinstance(left_size, numbers.Integral) \
        else round(left_size * total)
    right = None if right_size is None else int(right_size) if isinstance(right_size, numbers.Integral) \
        else round(right_size * total)
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the {total}. Received: "
                         f"left_size + right_size = {left + right} and total_length = {total}")
    for size, side in ((left, "left"), (right, "right")):
        if size == 0:
            raise ValueError(f"With `dataset` of length={total}, `left_size`={left} and `right_size`={right}. "
                             f"Resulting {side} side dataset split will be empty. Adjust any of the "
                             "aforementioned parameters")
    return left, right
