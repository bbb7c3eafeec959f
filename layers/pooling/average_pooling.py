"""AveragePooling1D and AveragePooling2D: the mean of each window."""

import math

import numpy as np

from layers.convolutional._base import from_channels_last, to_channels_last
from layers.convolutional._im2col import pad, window_grad, windows
from layers.pooling._base import _BasePooling


class _AveragePooling(_BasePooling):
    """Mean over windows. With ``"same"`` padding a window that overlaps the pads
    is divided by its number of real inputs, as Keras on jax does."""

    def _counts(self, spatial, pads, out, dtype):
        """The number of real inputs in each window: an int, or ``(1, *out, 1)`` counts."""
        if not any(before or after for before, after in pads):
            return math.prod(self.pool_size)
        ones = pad(np.ones((1,) + tuple(spatial) + (1,), dtype), pads)
        return self._sum(windows(ones, self.pool_size, self.strides, (1,) * self.rank, out))

    def _sum(self, view):
        return view.sum(axis=tuple(range(1 + self.rank, 1 + 2 * self.rank)))

    def forward(self, inputs, training=True):
        x = to_channels_last(inputs, self.data_format)
        spatial = x.shape[1:-1]
        pads, out = self._geometry(spatial)
        counts = self._counts(spatial, pads, out, x.dtype)
        pooled = self._sum(windows(pad(x, pads), self.pool_size, self.strides, (1,) * self.rank, out)) / counts
        return from_channels_last(pooled, self.data_format), (spatial, pads, counts)

    def call(self, inputs, training=False):
        return self.forward(inputs, training=training)[0]

    def backward(self, cache, grad_outputs):
        spatial, pads, counts = cache
        grad = to_channels_last(grad_outputs, self.data_format) / counts
        grad_taps = np.broadcast_to(grad, self.pool_size + grad.shape)
        grad_x = window_grad(grad_taps, pads, spatial, self.pool_size, self.strides, (1,) * self.rank)
        return from_channels_last(grad_x, self.data_format), {}


class AveragePooling1D(_AveragePooling):
    """Average pooling over the steps of a sequence.

    Args:
        pool_size: an int or a tuple of 1 int, the window length.
        strides: an int or a tuple of 1 int; None means ``pool_size``.
        padding: ``"valid"`` (windows inside the input) or ``"same"``
            (``ceil(steps / strides)`` outputs; edge windows average their real inputs only).
        data_format: ``"channels_last"`` (default, ``(batch, steps, features)``)
            or ``"channels_first"`` (``(batch, features, steps)``).

    Example:
        >>> import numpy as np
        >>> AveragePooling1D(2, strides=1, padding="same")(np.arange(3.0).reshape(1, 3, 1))[0, :, 0]
        array([0.5, 1.5, 2. ], dtype=float32)
    """

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(1, pool_size, strides, padding, data_format, **kwargs)


class AveragePooling2D(_AveragePooling):
    """Average pooling over the rows and columns of images.

    Args:
        pool_size: an int or a tuple of 2 ints, the window's height and width.
        strides: an int or a tuple of 2 ints; None means ``pool_size``.
        padding: ``"valid"`` (windows inside the input) or ``"same"``
            (``ceil(size / strides)`` outputs per axis; edge windows average their real inputs only).
        data_format: ``"channels_last"`` (default, ``(batch, rows, cols, channels)``)
            or ``"channels_first"`` (``(batch, channels, rows, cols)``).

    Example:
        >>> import numpy as np
        >>> AveragePooling2D(2)(np.ones((2, 5, 5, 3))).shape
        (2, 2, 2, 3)
    """

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(2, pool_size, strides, padding, data_format, **kwargs)
