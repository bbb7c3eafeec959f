"""Confusion-matrix metrics: weighted true and false positives and negatives
counted at thresholds, and the precision and recall built from them."""

import numpy as np

from engine.losses.loss import squeeze_or_expand_to_same_rank
from engine.metrics.metric import Metric, broadcast_weights, divide_no_nan

NEG_INF = -1e10


def confusion_counts(metric, y_true, y_pred, thresholds, sample_weight=None, top_k=None, class_id=None,
                     clip=False):
    """Weighted ``(true positives, false positives, true negatives, false
    negatives)`` at each threshold, counted as Keras 3 counts them.

    A label is positive when nonzero; a prediction is positive at threshold
    ``t`` when it is greater than ``t``. ``top_k`` keeps only the ``k``
    largest predictions of each sample (the others become negative);
    ``class_id`` keeps only that class. ``clip`` first clips the predictions
    to ``[0, 1]``, as Keras does when the thresholds are evenly spaced.
    """
    dtype = metric.dtype
    y_pred, y_true = squeeze_or_expand_to_same_rank(np.asarray(y_pred, dtype), np.asarray(y_true, dtype))
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype)[..., None]
        _, sample_weight = squeeze_or_expand_to_same_rank(y_true, sample_weight, expand_rank_1=False)
    if top_k is not None:
        y_pred = _keep_top_k(y_pred, top_k)
    if class_id is not None:
        if y_pred.ndim == 1:
            raise ValueError(
                f"Metric {metric.name!r} with class_id={class_id} needs y_pred of shape "
                f"(num_samples, num_classes), received y_pred.shape={y_pred.shape}."
            )
        y_true, y_pred = y_true[..., class_id, None], y_pred[..., class_id, None]
    if y_true.size != y_pred.size:
        raise ValueError(
            f"Metric {metric.name!r} expects one label per prediction, received "
            f"y_true.shape={y_true.shape} and y_pred.shape={y_pred.shape}."
        )
    if clip:
        y_pred = np.clip(y_pred, 0, 1)
    thresholds = np.asarray(thresholds, dtype)
    weights = np.ones(y_pred.shape, dtype) if sample_weight is None else broadcast_weights(
        metric, sample_weight, y_pred.shape)
    positive = y_true.reshape(-1) != 0
    weights = weights.reshape(-1)
    order = np.argsort(thresholds, kind="stable")
    predictions = y_pred.reshape(-1)
    above = np.where(np.isnan(predictions), 0, np.searchsorted(thresholds[order], predictions, side="left"))
    counts = np.empty((2, len(thresholds)), dtype)
    counts[:, order] = [_weight_above(above, np.where(positive, weights, 0), len(thresholds)),
                        _weight_above(above, np.where(positive, 0, weights), len(thresholds))]
    true_positives, false_positives = counts
    true_negatives = weights[~positive].sum(dtype=dtype) - false_positives
    false_negatives = weights[positive].sum(dtype=dtype) - true_positives
    return true_positives, false_positives, true_negatives, false_negatives


def _weight_above(above, weights, num_thresholds):
    """Total weight of the predictions above each sorted threshold, given how
    many thresholds lie strictly below each prediction."""
    per_count = np.bincount(above, weights=weights, minlength=num_thresholds + 1)
    return np.cumsum(per_count[::-1])[::-1][1:]


def _keep_top_k(y_pred, k):
    """Sets all but the ``k`` largest predictions of each sample (earlier index first on ties) to -1e10."""
    top = np.argsort(-y_pred, axis=-1, kind="stable")[..., :k]
    keep = np.zeros(y_pred.shape, bool)
    np.put_along_axis(keep, top, True, axis=-1)
    return np.where(keep, y_pred, y_pred.dtype.type(NEG_INF))


def _evenly_distributed(thresholds):
    """Keras' test for thresholds ``0, 1/(n-1), ..., 1`` (n >= 3)."""
    count = len(thresholds)
    return count >= 3 and np.allclose(thresholds, np.arange(count, dtype="float32") / (count - 1), atol=1e-7)


class _ThresholdMetric(Metric):
    """Precision and Recall: true positives and their two kinds of errors, per threshold."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        listed = thresholds if isinstance(thresholds, (list, tuple)) else [thresholds]
        invalid = [t for t in listed if t is None or not 0 <= t <= 1]
        if thresholds is not None and invalid:
            raise ValueError(
                f"{type(self).__name__} thresholds must be in [0, 1], received {invalid}. "
                "Pass thresholds=None for 0.5 (or for the top_k predictions)."
            )
        self.init_thresholds, self.top_k, self.class_id = thresholds, top_k, class_id
        self.thresholds = list(listed) if thresholds is not None else [0.5 if top_k is None else NEG_INF]
        self._clip = _evenly_distributed(self.thresholds)
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        tp, fp, _, fn = confusion_counts(self, y_true, y_pred, self.thresholds, sample_weight,
                                         self.top_k, self.class_id, clip=self._clip)
        self.true_positives = self.true_positives + tp
        self.false_positives = self.false_positives + fp
        self.false_negatives = self.false_negatives + fn

    def reset_state(self):
        self.true_positives = np.zeros(len(self.thresholds), self.dtype)
        self.false_positives = np.zeros(len(self.thresholds), self.dtype)
        self.false_negatives = np.zeros(len(self.thresholds), self.dtype)

    def _per_threshold(self, values):
        """A float for a single threshold, else an array with one value per threshold."""
        return float(values[0]) if len(values) == 1 else values

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


class Precision(_ThresholdMetric):
    """``true_positives / (true_positives + false_positives)``, at each threshold.

    Args:
        thresholds: a float or list of floats in ``[0, 1]``; a prediction above
            one is positive. Defaults to 0.5 (to "in the top_k" with ``top_k``).
        top_k: count only the ``top_k`` largest predictions of each sample.
        class_id: count only this class.
        name: the metric's name (default ``'precision'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    ``result()`` is a float, or an array with one value per threshold.

    Example:
        >>> Precision()([0, 1, 1, 1], [1, 0, 1, 1])
        0.6666666865348816
    """

    def result(self):
        return self._per_threshold(divide_no_nan(self.true_positives, self.true_positives + self.false_positives))


class Recall(_ThresholdMetric):
    """``true_positives / (true_positives + false_negatives)``, at each threshold.

    Args:
        thresholds: a float or list of floats in ``[0, 1]``; a prediction above
            one is positive. Defaults to 0.5 (to "in the top_k" with ``top_k``).
        top_k: count only the ``top_k`` largest predictions of each sample.
        class_id: count only this class.
        name: the metric's name (default ``'recall'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    ``result()`` is a float, or an array with one value per threshold.

    Example:
        >>> Recall()([0, 1, 1, 1], [1, 0, 1, 1])
        0.6666666865348816
    """

    def result(self):
        return self._per_threshold(divide_no_nan(self.true_positives, self.true_positives + self.false_negatives))
