"""ReLU: the rectified linear unit with Keras 3's slope, ceiling and threshold."""

import numbers

from layers import activations
from layers.activation._base import _ActivationLayer


class ReLU(_ActivationLayer):
    """``max_value`` if ``x >= max_value``, ``x`` if ``threshold < x < max_value``,
    ``negative_slope * (x - threshold)`` otherwise.

    Args:
        max_value: non-negative ceiling of the output; None for none.
        negative_slope: non-negative slope below the threshold.
        threshold: non-negative value below which the output is damped.

    Example:
        >>> import numpy as np
        >>> ReLU(max_value=1.0)(np.array([[-1.0, 0.5, 2.0]]))
        array([[0. , 0.5, 1. ]], dtype=float32)
    """

    activation = activations.relu

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and not _non_negative(max_value):
            raise ValueError(f"max_value of a ReLU layer cannot be a negative value. Received: max_value={max_value!r}")
        if not _non_negative(negative_slope):
            raise ValueError(
                "negative_slope of a ReLU layer cannot be None or a negative value. "
                f"Received: negative_slope={negative_slope!r}"
            )
        if not _non_negative(threshold):
            raise ValueError(
                f"threshold of a ReLU layer cannot be None or a negative value. Received: threshold={threshold!r}"
            )
        self.max_value = max_value
        self.negative_slope = negative_slope
        self.threshold = threshold

    def activation_arguments(self):
        return {"negative_slope": self.negative_slope, "max_value": self.max_value, "threshold": self.threshold}

    def get_config(self):
        config = super().get_config()
        config.update(max_value=self.max_value, negative_slope=self.negative_slope, threshold=self.threshold)
        return config


def _non_negative(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and value >= 0
