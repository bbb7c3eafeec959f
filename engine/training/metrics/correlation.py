"""Correlation metrics: running weighted means of each sample's Pearson or
concordance correlation between labels and predictions along ``axis``."""

import numpy as np

from engine.training.losses.loss import EPSILON, as_float_pair
from engine.training.metrics.reduction import MeanMetricWrapper


def pearson_correlation(y_true, y_pred, axis=-1):
    """The Pearson correlation coefficient of labels and predictions along ``axis``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.
        axis: the axis along which each correlation is taken.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(pearson_correlation(np.array([[1.0, 2.0, 3.0]]), np.array([[2.0, 4.0, 7.0]])), 4)
        array([0.9934])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    centred_true = y_true - np.mean(y_true, axis=axis, keepdims=True)
    centred_pred = y_pred - np.mean(y_pred, axis=axis, keepdims=True)
    centred_true = centred_true / np.std(centred_true, axis=axis, keepdims=True)
    centred_pred = centred_pred / np.std(centred_pred, axis=axis, keepdims=True)
    return np.mean(centred_true * centred_pred, axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance correlation coefficient along ``axis``, as Keras 3
    computes it: ``mean(2 * (y_true - mean(y_pred)) * (y_pred - mean(y_pred)))
    / (var(y_true) + var(y_pred) + (mean(y_true) - mean(y_pred))**2 + 1e-7)``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.
        axis: the axis along which each correlation is taken.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(concordance_correlation(np.array([[1.0, 2.0, 3.0]]), np.array([[1.0, 2.0, 3.0]])), 4)
        array([1.])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    mean_true = np.mean(y_true, axis=axis, keepdims=True)
    mean_pred = np.mean(y_pred, axis=axis, keepdims=True)
    variance_true = np.var(y_true - mean_true, axis=axis, keepdims=True)
    variance_pred = np.var(y_pred - mean_pred, axis=axis, keepdims=True)
    covariance = (y_true - mean_pred) * (y_pred - mean_pred)
    norm = variance_true + variance_pred + np.square(mean_true - mean_pred)
    return np.mean(2 * covariance / (norm + y_pred.dtype.type(EPSILON)), axis=axis)


class PearsonCorrelation(MeanMetricWrapper):
    """The mean over samples of the Pearson correlation along ``axis``.

    Args:
        name: the metric's name (default ``'pearson_correlation'``).
        dtype: the floating dtype the state accumulates in (float32 by default).
        axis: the axis along which each correlation is taken.

    Example:
        >>> round(PearsonCorrelation()([[1.0, 2.0, 3.0]], [[2.0, 4.0, 7.0]]), 4)
        0.9934
    """

    def __init__(self, name="pearson_correlation", dtype=None, axis=-1):
        super().__init__(pearson_correlation, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class ConcordanceCorrelation(MeanMetricWrapper):
    """The mean over samples of the concordance correlation along ``axis``.

    Args:
        name: the metric's name (default ``'concordance_correlation'``).
        dtype: the floating dtype the state accumulates in (float32 by default).
        axis: the axis along which each correlation is taken.

    Example:
        >>> round(ConcordanceCorrelation()([[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]]), 4)
        1.0
    """

    def __init__(self, name="concordance_correlation", dtype=None, axis=-1):
        super().__init__(concordance_correlation, name=name, dtype=dtype, axis=axis)
        self.axis = axis
