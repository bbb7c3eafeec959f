"""LeakyReLU: ``x`` for ``x >= 0``, ``negative_slope * x`` below."""

import numbers

from layers import activations
from layers.activation._base import _ActivationLayer


class LeakyReLU(_ActivationLayer):
    """A ReLU with a small slope for negative inputs.

    Args:
        negative_slope: non-negative slope for ``x < 0``.

    Example:
        >>> import numpy as np
        >>> LeakyReLU(0.5)(np.array([[-2.0, 3.0]]))
        array([[-1.,  3.]], dtype=float32)
    """

    activation = activations.leaky_relu

    def __init__(self, negative_slope=0.3, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(negative_slope, numbers.Real) or isinstance(negative_slope, bool) or negative_slope < 0:
            raise ValueError(
                "The negative_slope value of a Leaky ReLU layer cannot be None or negative value. "
                f"Expected a float. Received: negative_slope={negative_slope!r}"
            )
        self.negative_slope = negative_slope

    def activation_arguments(self):
        return {"negative_slope": self.negative_slope}

    def get_config(self):
        config = super().get_config()
        config["negative_slope"] = self.negative_slope
        return config
