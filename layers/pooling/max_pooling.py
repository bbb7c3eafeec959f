"""MaxPooling1D and MaxPooling2D: the largest value of each window."""

import numpy as np

from layers.convolutional._base import from_channels_last, to_channels_last
from layers.pooling._base import _BasePooling


class _MaxPooling(_BasePooling):
    """Max over windows, one spatial axis at a time: a window's max is the max over its
    rows of each row's max (the last spatial axis first). Each stage keeps, per output,
    the index of the tap that won, and the backward pass routes each output's gradient
    back through those indices to the input that was the maximum of its window: on
    ties, the first one in row-major order, as Keras (XLA's select-and-scatter) and
    PyTorch choose. Pads never win: windows start from ``-inf``."""

    def _stages(self, x):
        """``(array axis, pool, stride, pads, out)`` of each stage, the last spatial axis first."""
        pads, out = self._geometry(x.shape[1:-1])
        return [(1 + d, self.pool_size[d], self.strides[d], pads[d], out[d]) for d in reversed(range(self.rank))]

    def call(self, inputs, training=False):
        pooled = to_channels_last(inputs, self.data_format)
        for stage in self._stages(pooled):
            pooled = max_along(pooled, *stage)[0]
        return from_channels_last(pooled, self.data_format)

    def forward(self, inputs, training=True):
        pooled = to_channels_last(inputs, self.data_format)
        cache = []
        for stage in self._stages(pooled):
            size = pooled.shape[stage[0]]
            pooled, index = max_along(pooled, *stage, with_index=True)
            cache.append((stage, size, index))
        return from_channels_last(pooled, self.data_format), cache

    def backward(self, cache, grad_outputs):
        grad = to_channels_last(grad_outputs, self.data_format)
        for stage, size, index in reversed(cache):
            grad = max_along_backward(grad, index, size, *stage)
        return from_channels_last(grad, self.data_format), {}


def axis_taps(size, pool, stride, pads, out):
    """Yields ``(tap, output slice, input slice)`` for each tap of a window along one
    axis of ``size`` inputs: the outputs whose window reads a real input (not a pad) at
    that tap, and those inputs.

    >>> [(t, o.start, o.stop, i.start, i.stop) for t, o, i in axis_taps(4, 3, 2, (0, 1), 2)]
    [(0, 0, 2, 0, 3), (1, 0, 2, 1, 4), (2, 0, 1, 2, 3)]
    """
    before = pads[0]
    for tap in range(pool):
        low = max(0, -((tap - before) // stride))
        high = min(out, (size - 1 - tap + before) // stride + 1)
        if high > low:
            first = low * stride + tap - before
            yield tap, slice(low, high), slice(first, first + (high - low - 1) * stride + 1, stride)


def max_along(x, axis, pool, stride, pads, out, with_index=False):
    """Max pooling of ``x`` along one ``axis``: a running max over the taps (strided
    views, no copies of the windows), and with ``with_index`` the first tap holding
    each max (uint8).

    Args:
        x: an array.
        axis: the axis pooled.
        pool, stride, pads, out: the window length, stride, ``(before, after)`` pads
            and number of outputs along ``axis``.
        with_index: whether to return the winning taps.

    Returns:
        ``(pooled, index)``, ``index`` None without ``with_index``.

    >>> max_along(np.array([[3.0, 1.0, 4.0, 4.0, 2.0]]), 1, 2, 2, (0, 1), 3, with_index=True)
    (array([[3., 4., 2.]]), array([[0, 0, 0]], dtype=uint8))
    """
    shape = x.shape[:axis] + (out,) + x.shape[axis + 1:]
    pooled = np.empty(shape, x.dtype)
    index = np.zeros(shape, np.uint8) if with_index else None
    taps = list(axis_taps(x.shape[axis], pool, stride, pads, out))
    if taps[0][0] != 0 or taps[0][1] != slice(0, out):
        pooled.fill(-np.inf)
    before = (slice(None),) * axis
    for tap, outputs, inputs in taps:
        target, candidate = pooled[before + (outputs,)], x[before + (inputs,)]
        if tap == 0:
            np.copyto(target, candidate)
            continue
        if with_index:
            wins = np.greater(candidate, target)
            update_index(index[before + (outputs,)], wins, tap)
        np.maximum(target, candidate, out=target)
    return pooled, index


def update_index(index, wins, tap):
    """Sets ``index`` (uint8) to ``tap`` where ``wins``, by uint8 arithmetic
    (``index += wins * (tap - index)``, wrapping), several times faster than a masked write.

    >>> index = np.array([0, 1, 2], np.uint8)
    >>> update_index(index, np.array([True, False, True]), 3)
    >>> index
    array([3, 1, 3], dtype=uint8)
    """
    step = np.subtract(np.uint8(tap), index)
    step *= wins.view(np.uint8)
    index += step


def max_along_backward(grad, index, size, axis, pool, stride, pads, out):
    """Gradient of ``max_along``'s input (``size`` long along ``axis``) from its
    output's: each output's gradient added to the input its ``index`` names.

    >>> max_along_backward(np.array([[1.0, 2.0]]), np.array([[1, 0]], np.uint8), 4, 1, 2, 2, (0, 0), 2)
    array([[0., 1., 2., 0.]])
    """
    grad_x = np.zeros(grad.shape[:axis] + (size,) + grad.shape[axis + 1:], grad.dtype)
    before = (slice(None),) * axis
    # Taps that never share an input (stride >= pool) write their share; overlapping ones add it.
    share = None if stride >= pool else np.empty_like(grad)
    for tap, outputs, inputs in axis_taps(size, pool, stride, pads, out):
        target, mask = grad_x[before + (inputs,)], index[before + (outputs,)] == tap
        if share is None:
            np.multiply(grad[before + (outputs,)], mask, out=target)
        else:
            np.multiply(grad[before + (outputs,)], mask, out=share[before + (outputs,)])
            target += share[before + (outputs,)]
    return grad_x


class MaxPooling1D(_MaxPooling):
    """Max pooling over the steps of a sequence.

    Args:
        pool_size: an int or a tuple of 1 int, the window length.
        strides: an int or a tuple of 1 int; None means ``pool_size``.
        padding: ``"valid"`` (windows inside the input) or ``"same"``
            (``ceil(steps / strides)`` outputs; pads never win the max).
        data_format: ``"channels_last"`` (default, ``(batch, steps, features)``)
            or ``"channels_first"`` (``(batch, features, steps)``).

    Example:
        >>> import numpy as np
        >>> MaxPooling1D(2)(np.arange(6.0).reshape(1, 6, 1))[0, :, 0]
        array([1., 3., 5.], dtype=float32)
    """

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(1, pool_size, strides, padding, data_format, **kwargs)


class MaxPooling2D(_MaxPooling):
    """Max pooling over the rows and columns of images.

    Args:
        pool_size: an int or a tuple of 2 ints, the window's height and width.
        strides: an int or a tuple of 2 ints; None means ``pool_size``.
        padding: ``"valid"`` (windows inside the input) or ``"same"``
            (``ceil(size / strides)`` outputs per axis; pads never win the max).
        data_format: ``"channels_last"`` (default, ``(batch, rows, cols, channels)``)
            or ``"channels_first"`` (``(batch, channels, rows, cols)``).

    Example:
        >>> import numpy as np
        >>> MaxPooling2D(2, padding="same")(np.ones((2, 5, 5, 3))).shape
        (2, 3, 3, 3)
    """

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(2, pool_size, strides, padding, data_format, **kwargs)
