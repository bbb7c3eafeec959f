"""ELU: the exponential linear unit."""

import numbers

from layers import activations
from layers.activation._base import _ActivationLayer


class ELU(_ActivationLayer):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise.

    Args:
        alpha: scale of the negative part.

    Example:
        >>> import numpy as np
        >>> ELU()(np.array([[0.0, 2.0]]))
        array([[0., 2.]], dtype=float32)
    """

    activation = activations.elu

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool):
            raise ValueError(f"ELU expects `alpha` to be a number. Received: alpha={alpha!r}")
        self.alpha = alpha

    def activation_arguments(self):
        return {"alpha": self.alpha}

    def get_config(self):
        config = super().get_config()
        config["alpha"] = self.alpha
        return config
