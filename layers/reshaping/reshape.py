"""Reshape: a new shape for each sample."""

import math

from engine import Layer
from layers._arguments import is_int


class Reshape(Layer):
    """Reshapes each sample to ``target_shape``.

    Args:
        target_shape: the new sample shape (without the batch axis); one entry
            may be -1, inferred from the sample's size.

    Example:
        >>> import numpy as np
        >>> Reshape((3, -1))(np.ones((2, 12))).shape
        (2, 3, 4)
    """

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        try:
            target_shape = tuple(target_shape)
        except TypeError:
            raise ValueError(
                f"`target_shape` should be a tuple of integers. Received: target_shape={target_shape!r}"
            ) from None
        if not all(is_int(d) and d >= -1 for d in target_shape):
            raise ValueError(
                "Each dimension in `target_shape` must be a non-negative integer, or `-1` for a single "
                f"unknown dimension. Received: target_shape={target_shape}."
            )
        if target_shape.count(-1) > 1:
            raise ValueError(
                f"There must be at most one unknown dimension (-1) in `target_shape`. Received: "
                f"target_shape={target_shape}."
            )
        self.target_shape = tuple(int(d) for d in target_shape)

    def compute_output_shape(self, input_shape):
        sample_shape = tuple(input_shape[1:])
        if None in sample_shape:
            return (input_shape[0],) + tuple(None if d == -1 else d for d in self.target_shape)
        size = math.prod(sample_shape)
        known = math.prod(d for d in self.target_shape if d != -1)
        if -1 not in self.target_shape:
            if known != size:
                raise ValueError(
                    "The total size of the tensor must be unchanged. Received: "
                    f"input_shape={sample_shape}, target_shape={self.target_shape}"
                )
            return (input_shape[0],) + self.target_shape
        if known == 0 or size % known:
            raise ValueError(
                "The total size of the tensor must be unchanged, however, the input size cannot be divided "
                f"by the specified dimensions in target_shape. Received: input_shape={sample_shape}, "
                f"target_shape={self.target_shape}"
            )
        return (input_shape[0],) + tuple(size // known if d == -1 else d for d in self.target_shape)

    def call(self, inputs, training=False):
        return inputs.reshape(self.compute_output_shape(inputs.shape))

    def backward(self, cache, grad_outputs):
        return grad_outputs.reshape(cache.shape), {}

    def flops(self, input_shapes, output_shapes):
        """0: reshaping moves values, it computes nothing."""
        return 0

    def get_config(self):
        config = super().get_config()
        config["target_shape"] = self.target_shape
        return config
