"""MaxPooling1D and MaxPooling2D: the largest value of each window."""

import math

import numpy as np

from layers.convolutional._base import from_channels_last, to_channels_last
from layers.convolutional._im2col import pad, window_grad, windows
from layers.pooling._base import _BasePooling


class _MaxPooling(_BasePooling):
    """Max over windows; the backward pass routes each output's gradient to the
    input that was the maximum of its window (the first one on ties)."""

    def _windows(self, x):
        """The ``-inf``-padded windows ``(batch, *out, *pool_size, channels)`` of a
        channels-last ``x``, and the pads."""
        pads, out = self._geometry(x.shape[1:-1])
        return windows(pad(x, pads, -np.inf), self.pool_size, self.strides, (1,) * self.rank, out), pads

    def call(self, inputs, training=False):
        view, _ = self._windows(to_channels_last(inputs, self.data_format))
        pooled = view.max(axis=tuple(range(1 + self.rank, 1 + 2 * self.rank)))
        return from_channels_last(pooled, self.data_format)

    def forward(self, inputs, training=True):
        x = to_channels_last(inputs, self.data_format)
        view, pads = self._windows(x)
        # Taps leading, one row each: the layout col2im takes back.
        taps = np.moveaxis(view, range(1 + self.rank, 1 + 2 * self.rank), range(self.rank))
        taps = taps.reshape((math.prod(self.pool_size),) + taps.shape[self.rank:])
        pooled = taps.max(axis=0)
        return from_channels_last(pooled, self.data_format), (x.shape[1:-1], pads, _first_max_tap(taps, pooled)[None])

    def backward(self, cache, grad_outputs):
        spatial, pads, index = cache
        grad = to_channels_last(grad_outputs, self.data_format)
        grad_taps = np.zeros((math.prod(self.pool_size),) + grad.shape, grad.dtype)
        np.put_along_axis(grad_taps, index, grad[None], axis=0)
        grad_x = window_grad(grad_taps.reshape(self.pool_size + grad.shape), pads, spatial, self.pool_size,
                             self.strides, (1,) * self.rank)
        return from_channels_last(grad_x, self.data_format), {}


def _first_max_tap(taps, pooled):
    """Per window, the first tap holding the maximum: one comparison per tap, much
    faster than ``argmax`` along the (strided) tap axis."""
    index = np.zeros(pooled.shape, np.intp)
    for tap in range(len(taps) - 1, -1, -1):
        index[taps[tap] == pooled] = tap
    return index


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
