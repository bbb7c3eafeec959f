"""Permute: reorders the axes of each sample."""

import numpy as np

from engine import InputSpec, Layer


class Permute(Layer):
    """Permutes the non-batch axes according to ``dims``.

    Args:
        dims: the new order of the sample axes, numbered from 1 (the batch
            axis stays first): ``(2, 1)`` swaps the two axes of a 3D input.

    Example:
        >>> import numpy as np
        >>> Permute((2, 1))(np.ones((2, 10, 64))).shape
        (2, 64, 10)
    """

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError(
                "Invalid permutation argument `dims` for Permute Layer. The set of indices in `dims` "
                f"must be consecutive and start from 1. Received dims={dims}"
            )
        self.dims = tuple(int(d) for d in dims)
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(input_shape[d] for d in self.dims)

    def call(self, inputs, training=False):
        return inputs.transpose((0,) + self.dims)

    def backward(self, cache, grad_outputs):
        return grad_outputs.transpose(np.argsort((0,) + self.dims)), {}

    def flops(self, input_shapes, output_shapes):
        """0: a transpose moves values, it computes nothing."""
        return 0

    def get_config(self):
        config = super().get_config()
        config["dims"] = self.dims
        return config
