"""Rescaling: ``inputs * scale + offset``, for instance pixel values from [0, 255] to [0, 1]."""

import math

import numpy as np

from engine import Layer
from layers.preprocessing._floating import floating


def _value(argument):
    """A float, or a list for per-channel values; Keras' ``__numpy__`` config wrapper unwrapped."""
    if isinstance(argument, dict) and argument.get("class_name") == "__numpy__":
        argument = argument["config"]["value"]
    array = np.asarray(argument)
    if array.dtype.kind not in "iuf":
        raise ValueError(f"Rescaling expects `scale` and `offset` to be numbers or arrays of numbers. "
                         f"Received: {argument!r}")
    return float(array) if array.ndim == 0 else array.tolist()


class Rescaling(Layer):
    """Multiplies its inputs by ``scale`` and adds ``offset``; integer inputs give floats.

    Args:
        scale: a float, or per-channel values broadcast against the inputs.
        offset: a float, or per-channel values.

    Example:
        >>> import numpy as np
        >>> Rescaling(1 / 127.5, offset=-1.0)(np.array([[0, 255]], "uint8"))
        array([[-1.,  1.]], dtype=float32)
    """

    supports_masking = True

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = _value(scale)
        self.offset = _value(offset)

    def compute_output_shape(self, input_shape):
        return input_shape

    def call(self, inputs, training=False):
        inputs = floating(inputs, self.dtype)
        return inputs * np.asarray(self.scale, inputs.dtype) + np.asarray(self.offset, inputs.dtype)

    def backward(self, cache, grad_outputs):
        scale = np.asarray(self.scale, grad_outputs.dtype)
        return _sum_to_shape(grad_outputs * scale, cache.shape), {}

    def flops(self, input_shapes, output_shapes):
        """2 per output element: the multiply and the add."""
        return 2 * math.prod(output_shapes[0])

    def get_config(self):
        config = super().get_config()
        config.update(scale=self.scale, offset=self.offset)
        return config


def _sum_to_shape(grad, shape):
    """Sums the axes a broadcast against per-channel values added, back to the input's ``shape``."""
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra))) if extra else grad
    axes = tuple(i for i, (g, s) in enumerate(zip(grad.shape, shape)) if s == 1 and g != 1)
    return grad.sum(axis=axes, keepdims=True) if axes else grad
