"""Masking: skips the timesteps whose features all equal ``mask_value``."""

import math
import numbers

import numpy as np

from engine import Layer


class Masking(Layer):
    """Masks the timesteps (axis 1) whose features (last axis) all equal ``mask_value``.

    The output is the input with masked timesteps set to 0, and the layer's
    mask, ``(batch, timesteps)`` booleans (False where masked), reaches the
    layers downstream that take one (LSTM, GlobalAveragePooling1D,
    MultiHeadAttention, ...), as in Keras 3.

    Args:
        mask_value: the value that marks padding.

    Example:
        >>> import numpy as np
        >>> x = np.array([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]], "float32")
        >>> Masking(mask_value=0.0).compute_mask(x)
        array([[ True, False,  True]])
    """

    supports_masking = True

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(mask_value, numbers.Real):
            raise TypeError(
                f"Masking expects mask_value to be a number (the value that marks padding). "
                f"Received: mask_value={mask_value!r} of type {type(mask_value).__name__}"
            )
        self.mask_value = mask_value

    def compute_output_shape(self, input_shape):
        return input_shape

    def compute_mask(self, inputs, mask=None):
        """True at the timesteps with some feature different from ``mask_value``."""
        return np.any(np.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        return self.forward(inputs)[0]

    def forward(self, inputs, training=True):
        keep = np.any(np.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        return np.where(keep, inputs, np.zeros((), inputs.dtype)), keep

    def backward(self, cache, grad_outputs):
        return np.where(cache, grad_outputs, np.zeros((), grad_outputs.dtype)), {}

    def flops(self, input_shapes, output_shapes):
        """2 per element: the comparison with ``mask_value`` and its reduction over the features
        (selecting the kept steps computes nothing)."""
        return 2 * math.prod(input_shapes[0])

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}
