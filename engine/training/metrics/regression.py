"""Regression metrics: running weighted means of the per-sample regression
losses, and the coefficient of determination (R2)."""

import warnings

import numpy as np

from engine.training.losses.loss import as_float_pair, squeeze_or_expand_to_same_rank
from engine.training.losses.regression import (cosine_similarity, log_cosh, mean_absolute_error,
                                               mean_absolute_percentage_error, mean_squared_error,
                                               mean_squared_logarithmic_error)
from engine.training.metrics.metric import Metric
from engine.training.metrics.reduction import Mean, MeanMetricWrapper

CLASS_AGGREGATIONS = (None, "uniform_average", "variance_weighted_average")


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


class LogCoshError(MeanMetricWrapper):
    """The mean of ``log(cosh(y_pred - y_true))`` over everything seen.

    Args:
        name: the metric's name (default ``'logcosh'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> round(LogCoshError()([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [0.0, 0.0]]), 4)
        0.1084
    """

    def __init__(self, name="logcosh", dtype=None):
        super().__init__(log_cosh, name=name, dtype=dtype)


class R2Score(Metric):
    """The coefficient of determination ``1 - residual sum of squares / total
    sum of squares`` of ``(samples, outputs)`` labels and predictions, per output.

    Args:
        class_aggregation: how the outputs' scores are combined: None (one per
            output), ``"uniform_average"`` (their mean) or
            ``"variance_weighted_average"`` (weighted by each output's variance).
        num_regressors: the number of independent variables, for the adjusted
            R2 ``1 - (1 - R2) * (n - 1) / (n - num_regressors - 1)`` (0: plain R2).
        name: the metric's name (default ``'r2_score'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> round(R2Score()([[1.0], [4.0], [3.0]], [[2.0], [4.0], [4.0]]), 4)
        0.5714
    """

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in CLASS_AGGREGATIONS:
            raise ValueError(
                f"Invalid value for argument `class_aggregation` of R2Score. Expected one of {CLASS_AGGREGATIONS}. "
                f"Received: class_aggregation={class_aggregation!r}"
            )
        if num_regressors < 0:
            raise ValueError(
                "Invalid value for argument `num_regressors` of R2Score. Expected a value >= 0. "
                f"Received: num_regressors={num_regressors}"
            )
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors
        self._num_outputs = 0
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = squeeze_or_expand_to_same_rank(np.asarray(y_true, self.dtype), np.asarray(y_pred, self.dtype))
        if y_true.ndim != 2 or y_pred.ndim != 2:
            raise ValueError(
                "R2Score expects 2D inputs with shape (batch_size, output_dim). Received input "
                f"shapes: y_pred.shape={y_pred.shape} and y_true.shape={y_true.shape}."
            )
        if not self._num_outputs:
            self._num_outputs = y_pred.shape[-1]
            self.reset_state()
        weight = np.asarray(1 if sample_weight is None else sample_weight, self.dtype)
        weight = np.broadcast_to(weight[:, None] if weight.ndim == 1 else weight, y_true.shape)
        weighted_true = y_true * weight
        self.sum = self.sum + weighted_true.sum(axis=0)
        self.squared_sum = self.squared_sum + (y_true * weighted_true).sum(axis=0)
        self.total_mse = self.total_mse + ((y_true - y_pred) ** 2 * weight).sum(axis=0)
        self.count = self.count + weight.sum(axis=0)
        self.num_samples = self.num_samples + y_true.size

    def result(self):
        scalar = np.dtype(self.dtype).type
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = self.sum / self.count
            total = self.squared_sum - self.sum * mean
            raw_scores = 1 - self.total_mse / total
        raw_scores = np.where(np.isinf(raw_scores), scalar(0), raw_scores)
        if self.class_aggregation == "uniform_average":
            score = np.mean(raw_scores)
        elif self.class_aggregation == "variance_weighted_average":
            score = np.sum(total * raw_scores) / np.sum(total)
        else:
            score = raw_scores
        if self.num_regressors:
            score = self._adjusted(score, float(self.num_samples), scalar)
        return float(score) if np.ndim(score) == 0 else score

    def _adjusted(self, score, samples, scalar):
        """The adjusted R2 for ``samples`` values; the plain one (with a warning) when undefined."""
        if self.num_regressors > samples - 1:
            warnings.warn("R2Score: more independent predictors (num_regressors) than datapoints in the adjusted R2 "
                          "score. Falling back to the standard R2 score.", stacklevel=3)
            return score
        if self.num_regressors == samples - 1:
            warnings.warn("R2Score: division by zero in the adjusted R2 score (num_regressors = datapoints - 1). "
                          "Falling back to the standard R2 score.", stacklevel=3)
            return score
        return 1 - (1 - score) * scalar(samples - 1) / scalar(samples - self.num_regressors - 1)

    def reset_state(self):
        self.num_samples = np.zeros((), self.dtype)
        for state in ("squared_sum", "sum", "total_mse", "count"):
            setattr(self, state, np.zeros(self._num_outputs, self.dtype))

    def get_config(self):
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}
