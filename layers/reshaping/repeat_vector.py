"""RepeatVector: repeats a feature vector ``n`` times along a new axis."""

import numpy as np

from engine import InputSpec, Layer
from layers._arguments import is_int


class RepeatVector(Layer):
    """Turns ``(batch, features)`` into ``(batch, n, features)``.

    Args:
        n: positive integer, the number of repetitions.

    Example:
        >>> import numpy as np
        >>> RepeatVector(3)(np.ones((2, 32))).shape
        (2, 3, 32)
    """

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not is_int(n):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        if n <= 0:
            raise ValueError(f"Argument `n` should be a positive integer. Received: n={n}")
        self.n = int(n)
        self.input_spec = InputSpec(ndim=2)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])

    def call(self, inputs, training=False):
        return np.repeat(inputs[:, None, :], self.n, axis=1)

    def backward(self, cache, grad_outputs):
        return grad_outputs.sum(axis=1), {}

    def flops(self, input_shapes, output_shapes):
        """0: repeating copies values, it computes nothing."""
        return 0

    def get_config(self):
        config = super().get_config()
        config["n"] = self.n
        return config
