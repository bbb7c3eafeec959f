"""Normalization: ``(inputs - mean) / sqrt(variance)`` with statistics given or learnt by ``adapt``."""

import itertools
import math

import numpy as np

from engine import Layer
from layers.preprocessing._floating import floating

_EPSILON = 1e-7  # Keras' backend.epsilon(): the smallest standard deviation divided by


class Normalization(Layer):
    """Shifts and scales inputs to mean 0 and variance 1 along the kept ``axis``.

    The statistics are given (``mean`` and ``variance``, broadcast to the kept
    axes) or computed from data by ``adapt``; then they are the layer's
    non-trainable weights ``mean``, ``variance`` and ``count``, in Keras 3's
    order, shapes and dtypes, so that Keras' weight files map. ``count`` is
    kept for that layout only: Keras' ``adapt`` leaves it at 0, and so does ours.

    Args:
        axis: the axis or axes that keep a statistic per index (``-1``: per
            feature); None for one scalar mean and variance.
        mean, variance: the statistics, both or neither.
        invert: apply the inverse, ``mean + inputs * sqrt(variance)``.

    Example:
        >>> import numpy as np
        >>> layer = Normalization(axis=None)
        >>> layer.adapt(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
        >>> layer(np.array([1.0, 2.0, 3.0])).round(4)
        array([-1.4142, -0.7071,  0.    ], dtype=float32)
    """

    supports_masking = True

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        self.axis = () if axis is None else (int(axis),) if isinstance(axis, (int, np.integer)) else tuple(axis)
        if (mean is None) != (variance is None):
            raise ValueError("When setting values directly, both `mean` and `variance` must be set. "
                             f"Received: mean={mean} and variance={variance}")
        if mean is not None:
            if np.shape(mean) != np.shape(variance):
                raise ValueError("When setting values directly, `mean` and `variance` must have the same shape. "
                                 f"Received: mean shape {np.shape(mean)} and variance shape {np.shape(variance)}")
            if np.ndim(mean) > len(self.axis):
                raise ValueError(f"The rank of `mean` must be less than or equal to the number of axes "
                                 f"({len(self.axis)}). Received: mean shape {np.shape(mean)} for axis {self.axis}")
        self.input_mean, self.input_variance = mean, variance
        self.invert = bool(invert)

    def build(self, input_shape):
        ndim = len(input_shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError(f"Layer {self.name!r} (Normalization): all `axis` values must be in the range "
                             f"[-ndim, ndim). Received inputs with ndim={ndim}, while axis={self.axis}")
        self._keep_axes = tuple(sorted(a % ndim for a in self.axis))
        if any(input_shape[a] is None for a in self._keep_axes):
            raise ValueError(f"Layer {self.name!r} (Normalization): all `axis` values to be kept must have a "
                             f"known shape. Received axis={self.axis}, inputs.shape={tuple(input_shape)}")
        self._reduce_axes = tuple(a for a in range(ndim) if a not in self._keep_axes)
        self._broadcast_shape = tuple(input_shape[a] if a in self._keep_axes else 1 for a in range(ndim))
        self._build_shape = tuple(input_shape)
        kept = tuple(input_shape[a] for a in self._keep_axes)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(shape=kept, initializer="zeros", trainable=False, name="mean")
            self.adapt_variance = self.add_weight(shape=kept, initializer="ones", trainable=False, name="variance")
            self.count = self.add_weight(shape=(), dtype="int32", initializer="zeros", trainable=False, name="count")
        else:
            self._given = tuple(self._broadcast(value) for value in (self.input_mean, self.input_variance))

    def _broadcast(self, value):
        """A given statistic aligned with the kept axes (its last axis on the last kept one)."""
        value = np.asarray(value, self.dtype)
        shape = [1] * len(self._broadcast_shape)
        for axis, size in zip(self._keep_axes[len(self._keep_axes) - value.ndim:], value.shape):
            shape[axis] = size
        return np.broadcast_to(value.reshape(shape), self._broadcast_shape)

    def _statistics(self):
        """The mean and the standard deviation (at least epsilon), shaped to broadcast against inputs."""
        if self.input_mean is None:
            mean = self.adapt_mean.value.reshape(self._broadcast_shape)
            variance = self.adapt_variance.value.reshape(self._broadcast_shape)
        else:
            mean, variance = self._given
        return mean, np.maximum(np.sqrt(variance), np.asarray(_EPSILON, variance.dtype))

    def adapt(self, data):
        """Sets ``mean`` and ``variance`` to the statistics of ``data`` over the reduced axes.

        Args:
            data: a NumPy array, or an iterable of batches (a list, a generator,
                a ``PyDataset``; ``(x, y)`` tuples count by their ``x``), whose
                statistics are merged batch by batch.

        Example:
            >>> import numpy as np
            >>> layer = Normalization()
            >>> layer.adapt(np.array([[0.0, 10.0], [2.0, 30.0]]) for _ in range(3))
            >>> layer.get_weights()[:2]
            [array([ 1., 20.], dtype=float32), array([  1., 100.], dtype=float32)]
        """
        if self.input_mean is not None:
            raise ValueError(f"Layer {self.name!r} (Normalization) was given `mean` and `variance`, so adapt() "
                             "has nothing to set. Create the layer without them to adapt it to data.")
        if not isinstance(data, np.ndarray) and not hasattr(data, "__iter__"):
            raise TypeError(f"Layer {self.name!r} (Normalization): adapt() expects a NumPy array or an iterable of "
                            f"batches, received {type(data).__name__}.")
        batches = iter([data]) if isinstance(data, np.ndarray) else iter(data)
        first = next(batches, None)
        if first is None:
            raise ValueError(f"Layer {self.name!r} (Normalization): adapt() received no data (an empty iterable). "
                             "Pass a NumPy array or an iterable of batches.")
        batches = itertools.chain([first], batches)
        total_mean = total_variance = 0.0
        total_count = 0
        for batch in batches:
            batch = np.asarray(batch[0] if isinstance(batch, tuple) else batch, np.float64)
            self._check_adapt_shape(batch.shape)
            count = math.prod(batch.shape[a] for a in self._reduce_axes)
            mean, variance = batch.mean(axis=self._reduce_axes), batch.var(axis=self._reduce_axes)
            total_count += count
            weight = count / total_count
            merged = total_mean * (1.0 - weight) + mean * weight
            total_variance = ((total_variance + (total_mean - merged) ** 2) * (1.0 - weight)
                              + (variance + (mean - merged) ** 2) * weight)
            total_mean = merged
        self.adapt_mean.assign(np.asarray(total_mean, self.dtype))
        self.adapt_variance.assign(np.asarray(total_variance, self.dtype))

    def _check_adapt_shape(self, shape):
        if not self.built:
            self._maybe_build(np.broadcast_to(np.float32(0), shape))
        if len(shape) != len(self._build_shape) or any(shape[a] != self._build_shape[a] for a in self._keep_axes):
            raise ValueError(f"Layer {self.name!r} (Normalization) was built with input_shape={self._build_shape}, "
                             f"but adapt() is being called with data with an incompatible shape, data.shape={shape}")

    def compute_output_shape(self, input_shape):
        return input_shape

    def call(self, inputs, training=False):
        mean, std = self._statistics()
        inputs = floating(inputs, self.dtype)
        return mean + inputs * std if self.invert else (inputs - mean) / std

    def backward(self, cache, grad_outputs):
        _, std = self._statistics()
        return grad_outputs * std if self.invert else grad_outputs / std, {}

    def flops(self, input_shapes, output_shapes):
        """2 per element: a shift and a scale (the standard deviation is per index, not counted)."""
        return 2 * math.prod(output_shapes[0])

    def get_config(self):
        config = super().get_config()
        config.update(axis=self.axis, invert=self.invert, mean=np.array(self.input_mean).tolist(),
                      variance=np.array(self.input_variance).tolist())
        return config
