"""The Metric base class, and the two array helpers its subclasses share."""

import numpy as np

from engine.dtypes import dtype_kind, dtype_name
from engine.network.naming import to_snake_case, unique_name


class Metric:
    """Base class of stateful metrics, as in Keras 3.

    ``update_state(y_true, y_pred, sample_weight=None)`` accumulates a batch,
    ``result()`` reads the metric over everything accumulated so far and
    ``reset_state()`` forgets it. Subclasses implement the three and call
    ``reset_state()`` at the end of their ``__init__`` to create their state.

    Args:
        name: the metric name; by default the snake-case class name, made unique.
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> import numpy as np
        >>> class Maximum(Metric):
        ...     def __init__(self, name="maximum", dtype=None):
        ...         super().__init__(name=name, dtype=dtype)
        ...         self.reset_state()
        ...     def update_state(self, y_true, y_pred, sample_weight=None):
        ...         self.maximum = max(self.maximum, float(np.max(y_pred)))
        ...     def result(self):
        ...         return self.maximum
        ...     def reset_state(self):
        ...         self.maximum = float("-inf")
        >>> Maximum()(None, np.array([0.5, 2.0]))
        2.0
    """

    # The dtype the state accumulates in by default, and the dtype kinds it may take.
    _DEFAULT_DTYPE, _DTYPE_KINDS = "float32", "f"
    #: The state attributes that add up over parts of the data (totals and counts): the state
    #: over all of it is the sum of the parts' states, which evaluate() on Dask arrays relies
    #: on to sum its blocks. Empty when the state does not add up (a maximum, a running ratio).
    additive_state = ()

    def __init__(self, name=None, dtype=None):
        dtype = dtype or self._DEFAULT_DTYPE
        if dtype_kind(dtype) not in self._DTYPE_KINDS:
            raise ValueError(
                f"{type(self).__name__} accumulates in a floating dtype, received dtype={dtype!r}. "
                "Pass a float dtype such as 'float32'."
            )
        self.name = name or unique_name(to_snake_case(type(self).__name__))
        self.dtype = dtype_name(dtype)

    def update_state(self, *args, **kwargs):
        """Accumulates a batch: override it in every metric.

        Args:
            *args: usually ``y_true`` and ``y_pred`` (``Mean`` takes the values).
            **kwargs: usually ``sample_weight``, a weight per sample or None.

        Example:
            >>> import numpy as np
            >>> from engine.training.metrics import MeanAbsoluteError
            >>> metric = MeanAbsoluteError()
            >>> metric.update_state(np.zeros((2, 1)), np.array([[1.0], [3.0]]))
            >>> metric.update_state(np.zeros((1, 1)), np.array([[5.0]]))
            >>> metric.result()
            3.0
        """
        raise NotImplementedError(f"{type(self).__name__} must implement update_state.")

    def result(self):
        """The metric over everything accumulated since the last reset.

        Returns:
            A float (an array or a dict for some metrics).

        Example:
            >>> from engine.training.metrics import Mean
            >>> metric = Mean()
            >>> metric.update_state([1.0, 2.0, 6.0])
            >>> metric.result()
            3.0
        """
        raise NotImplementedError(f"{type(self).__name__} must implement result.")

    def reset_state(self):
        """Forgets everything accumulated (``fit`` and ``evaluate`` do at their start).

        Example:
            >>> from engine.training.metrics import Mean
            >>> metric = Mean()
            >>> metric.update_state([4.0])
            >>> metric.reset_state()
            >>> metric.result()
            0.0
        """
        raise NotImplementedError(f"{type(self).__name__} must implement reset_state.")

    def __call__(self, *args, **kwargs):
        """Updates the state with one batch and returns the result.

        Args:
            *args: what ``update_state`` takes (``y_true, y_pred``).
            **kwargs: its keyword arguments (``sample_weight``).

        Example:
            >>> from engine.training.metrics import BinaryAccuracy
            >>> metric = BinaryAccuracy()
            >>> metric([1, 0], [0.9, 0.8]), metric([1, 1], [0.9, 0.8])
            (0.5, 0.75)
        """
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        """The arguments that recreate this metric (without its state).

        Example:
            >>> from engine.training.metrics import TopKCategoricalAccuracy
            >>> TopKCategoricalAccuracy(k=3).get_config()["k"]
            3
        """
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        """Creates a metric from what ``get_config`` returned.

        Args:
            config: the dict of ``__init__`` arguments.

        Example:
            >>> from engine.training.metrics import TopKCategoricalAccuracy
            >>> TopKCategoricalAccuracy.from_config({"k": 3}).k
            3
        """
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def divide_no_nan(numerator, denominator):
    """``numerator / denominator``, with 0 wherever the denominator is 0."""
    numerator, denominator = np.broadcast_arrays(numerator, denominator)
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator != 0)


def broadcast_weights(metric, sample_weight, shape):
    """``sample_weight`` broadcast to ``shape``, or a ValueError naming ``metric``."""
    try:
        return np.broadcast_to(sample_weight, shape)
    except ValueError:
        raise ValueError(
            f"Metric {metric.name!r}: sample_weight of shape {np.shape(sample_weight)} cannot be "
            f"broadcast to the values of shape {tuple(shape)}. Give one weight per sample."
        ) from None
