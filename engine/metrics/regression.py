"""Regression metrics: running weighted means of the per-sample regression losses."""

from engine.losses.regression import mean_absolute_error, mean_squared_error
from engine.metrics.reduction import MeanMetricWrapper


class MeanSquaredError(MeanMetricWrapper):
    """The mean squared error over everything seen.

    Example:
        >>> MeanSquaredError()([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        0.25
    """

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """The mean absolute error over everything seen.

    Example:
        >>> MeanAbsoluteError()([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        0.25
    """

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, name=name, dtype=dtype)
