"""Flatten: one feature axis per sample."""

import math

import numpy as np

from engine import InputSpec, Layer
from layers._arguments import standardize_data_format


class Flatten(Layer):
    """Flattens every axis but the batch axis; ``(batch,)`` becomes ``(batch, 1)``.

    Args:
        data_format: ``"channels_last"`` (default) or ``"channels_first"``; with
            ``"channels_first"`` the channels axis is moved last before flattening,
            so both formats give the same feature order.

    Example:
        >>> import numpy as np
        >>> Flatten()(np.ones((2, 3, 4))).shape
        (2, 12)
    """

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def compute_output_shape(self, input_shape):
        sample_shape = tuple(input_shape[1:])
        size = None if None in sample_shape else math.prod(sample_shape)
        return (input_shape[0], size)

    def _channels_last_order(self, ndim):
        """The axis order that moves channels last, or None when nothing moves."""
        if self.data_format == "channels_first" and ndim > 2:
            return (0, *range(2, ndim), 1)
        return None

    def call(self, inputs, training=False):
        order = self._channels_last_order(inputs.ndim)
        if order is not None:
            inputs = inputs.transpose(order)
        return inputs.reshape(len(inputs), math.prod(inputs.shape[1:]))

    def backward(self, cache, grad_outputs):
        order = self._channels_last_order(cache.ndim)
        if order is None:
            return grad_outputs.reshape(cache.shape), {}
        moved_shape = tuple(cache.shape[axis] for axis in order)
        return grad_outputs.reshape(moved_shape).transpose(np.argsort(order)), {}

    def flops(self, input_shapes, output_shapes):
        """0: flattening moves values, it computes nothing."""
        return 0

    def get_config(self):
        config = super().get_config()
        config["data_format"] = self.data_format
        return config
