"""Regression metrics: running weighted means of the per-sample regression losses."""

import numpy as np

from engine.losses.loss import as_float_pair
from engine.losses.regression import (cosine_similarity, mean_absolute_error, mean_absolute_percentage_error,
                                      mean_squared_error, mean_squared_logarithmic_error)
from engine.metrics.reduction import Mean, MeanMetricWrapper


class MeanSquaredError(MeanMetricWrapper):
    """The mean squared error over everything seen.

    Args:
        name: the metric's name (default ``'mean_squared_error'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> MeanSquaredError()([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        0.25
    """

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """The mean absolute error over everything seen.

    Args:
        name: the metric's name (default ``'mean_absolute_error'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> MeanAbsoluteError()([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        0.25
    """

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, name=name, dtype=dtype)


class MeanAbsolutePercentageError(MeanMetricWrapper):
    """The mean absolute percentage error over everything seen.

    Args:
        name: the metric's name (default ``'mean_absolute_percentage_error'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> MeanAbsolutePercentageError()([[2.0, 4.0]], [[1.0, 5.0]])
        37.5
    """

    def __init__(self, name="mean_absolute_percentage_error", dtype=None):
        super().__init__(mean_absolute_percentage_error, name=name, dtype=dtype)


class MeanSquaredLogarithmicError(MeanMetricWrapper):
    """The mean squared logarithmic error over everything seen.

    Args:
        name: the metric's name (default ``'mean_squared_logarithmic_error'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> round(MeanSquaredLogarithmicError()([[0.0, 1.0]], [[1.0, 1.0]]), 4)
        0.2402
    """

    def __init__(self, name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(mean_squared_logarithmic_error, name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    """The square root of the mean squared error over everything seen.

    Args:
        name: the metric's name (default ``'root_mean_squared_error'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> RootMeanSquaredError()([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [0.0, 0.0]])
        0.5
    """

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = as_float_pair(y_true, y_pred)
        super().update_state(np.square(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        return float(np.sqrt(super().result()))


class CosineSimilarity(MeanMetricWrapper):
    """The cosine similarity of labels and predictions along ``axis``, over everything seen.

    Args:
        name: the metric's name (default ``'cosine_similarity'``).
        dtype: the floating dtype the state accumulates in (float32 by default).
        axis: the axis reduced.

    Example:
        >>> round(CosineSimilarity()([[0.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [1.0, 1.0]]), 4)
        0.5
    """

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        super().__init__(_similarity, name=name, dtype=dtype, axis=axis)


def _similarity(y_true, y_pred, axis=-1):
    """Cosine similarity, 1 for aligned vectors (the loss is its negative)."""
    return -cosine_similarity(y_true, y_pred, axis)
