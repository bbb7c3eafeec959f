"""UnitNormalization: scale to unit L2 norm along some axes."""

import math

import numpy as np

from engine import Layer
from layers.normalization._base import check_axis, resolve_axes

# Keras' epsilon: the norm is taken as at least this (an all-zero slice stays zero).
_EPSILON = 1e-12


class UnitNormalization(Layer):
    """Divides the inputs by their L2 norm over ``axis``: ``x / max(||x||, 1e-12)``.

    Args:
        axis: the axis (an int) or axes (a list of ints) that the norm is taken over.

    Example:
        >>> import numpy as np
        >>> UnitNormalization()(np.array([[3.0, 4.0]]))
        array([[0.6, 0.8]], dtype=float32)
    """

    supports_masking = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = check_axis(axis)

    def compute_output_shape(self, input_shape):
        resolve_axes(self.axis, input_shape, self.name)
        return tuple(input_shape)

    def call(self, inputs, training=False):
        return self.forward(inputs)[0]

    def forward(self, inputs, training=True):
        axes = resolve_axes(self.axis, inputs.shape, self.name)
        norm = np.sqrt(np.sum(np.square(inputs), axis=axes, keepdims=True))
        inv_norm = 1.0 / np.maximum(norm, _EPSILON)
        outputs = inputs * inv_norm
        return outputs, (outputs, inv_norm, norm >= _EPSILON, axes)

    def backward(self, cache, grad_outputs):
        outputs, inv_norm, unclamped, axes = cache
        # Where the norm is not clamped, d(x / ||x||) = (dx - y * sum(y * dx)) / ||x||.
        radial = np.where(unclamped, outputs * np.sum(outputs * grad_outputs, axis=axes, keepdims=True), 0.0)
        return inv_norm * (grad_outputs - radial), {}

    def flops(self, input_shapes, output_shapes):
        """3 per element: the square, the sum, the multiply by 1 / norm (the square root per
        group is not counted)."""
        return 3 * math.prod(input_shapes[0])

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config
