"""Confusion-matrix metrics: weighted true and false positives and negatives
counted at thresholds, and the precision and recall built from them."""

import numpy as np

from engine.training.losses.loss import squeeze_or_expand_to_same_rank
from engine.training.metrics.metric import Metric, broadcast_weights, divide_no_nan

NEG_INF = -1e10


def confusion_counts(metric, y_true, y_pred, thresholds, sample_weight=None, top_k=None, class_id=None,
                     clip=False, label_weights=None, multi_label=False):
    """Weighted ``(true positives, false positives, true negatives, false
    negatives)`` at each threshold, counted as Keras 3 counts them.

    A label is positive when nonzero; a prediction is positive at threshold
    ``t`` when it is greater than ``t``. ``top_k`` keeps only the ``k``
    largest predictions of each sample (the others become negative);
    ``class_id`` keeps only that class. ``clip`` first clips the predictions
    to ``[0, 1]``, as Keras does when the thresholds are evenly spaced.
    ``label_weights`` weigh each class (the last axis); ``multi_label``
    counts each class of ``(samples, classes)`` predictions apart, giving
    counts of shape ``(thresholds, classes)``.
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
    if multi_label and y_pred.ndim != 2:
        raise ValueError(
            f"Metric {metric.name!r} with multi_label=True needs y_pred of shape (num_samples, num_labels), "
            f"received y_pred.shape={y_pred.shape}."
        )
    if clip:
        y_pred = np.clip(y_pred, 0, 1)
    thresholds = np.asarray(thresholds, dtype)
    weights = np.ones(y_pred.shape, dtype) if sample_weight is None else broadcast_weights(
        metric, sample_weight, y_pred.shape)
    if label_weights is not None:
        weights = weights * broadcast_weights(metric, np.asarray(label_weights, dtype), y_pred.shape)
    positive = y_true.reshape(y_pred.shape) != 0
    if multi_label:
        per_label = [_counts_at(thresholds, y_pred[:, j], positive[:, j], weights[:, j])
                     for j in range(y_pred.shape[1])]
        return tuple(np.stack(counts, axis=-1) for counts in zip(*per_label))
    return _counts_at(thresholds, y_pred.reshape(-1), positive.reshape(-1), weights.reshape(-1))


def _counts_at(thresholds, predictions, positive, weights):
    """``(tp, fp, tn, fn)`` at each threshold for flat predictions, labels and weights."""
    order = np.argsort(thresholds, kind="stable")
    above = np.where(np.isnan(predictions), 0, np.searchsorted(thresholds[order], predictions, side="left"))
    counts = np.empty((2, len(thresholds)), thresholds.dtype)
    counts[:, order] = [_weight_above(above, np.where(positive, weights, 0), len(thresholds)),
                        _weight_above(above, np.where(positive, 0, weights), len(thresholds))]
    true_positives, false_positives = counts
    true_negatives = weights[~positive].sum(dtype=thresholds.dtype) - false_positives
    false_negatives = weights[positive].sum(dtype=thresholds.dtype) - true_positives
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


def evenly_distributed(thresholds):
    """Keras' test for thresholds ``0, 1/(n-1), ..., 1`` (n >= 3)."""
    count = len(thresholds)
    return count >= 3 and np.allclose(thresholds, np.arange(count, dtype="float32") / (count - 1), atol=1e-7)


def parse_thresholds(metric, thresholds, default):
    """``thresholds`` (None, a float or a list of floats in ``[0, 1]``) as a list; ``[default]`` for None."""
    if thresholds is None:
        return [default]
    listed = list(thresholds) if isinstance(thresholds, (list, tuple)) else [thresholds]
    invalid = [t for t in listed if t is None or not 0 <= t <= 1]
    if invalid:
        raise ValueError(
            f"{type(metric).__name__} thresholds must be in [0, 1], received {invalid}. "
            "Pass thresholds=None for 0.5 (or for the top_k predictions)."
        )
    return listed


def one_or_many(values):
    """A float for a single threshold, else the array with one value per threshold."""
    return float(values[0]) if len(values) == 1 else values


class _ThresholdMetric(Metric):
    """Precision and Recall: true positives and their two kinds of errors, per threshold."""

    additive_state = ("true_positives", "false_positives", "false_negatives")

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds, self.top_k, self.class_id = thresholds, top_k, class_id
        self.thresholds = parse_thresholds(self, thresholds, 0.5 if top_k is None else NEG_INF)
        self._clip = evenly_distributed(self.thresholds)
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
        return one_or_many(divide_no_nan(self.true_positives, self.true_positives + self.false_positives))


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
        return one_or_many(divide_no_nan(self.true_positives, self.true_positives + self.false_negatives))


class _ConfusionCount(Metric):
    """One weighted count of the confusion matrix per threshold, kept in ``accumulator``."""

    additive_state = ("accumulator",)

    _COUNT = None  # the index of the count in confusion_counts' result

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = parse_thresholds(self, thresholds, 0.5)
        self._clip = evenly_distributed(self.thresholds)
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        counts = confusion_counts(self, y_true, y_pred, self.thresholds, sample_weight, clip=self._clip)
        self.accumulator = self.accumulator + counts[self._COUNT]

    def result(self):
        return one_or_many(self.accumulator)

    def reset_state(self):
        self.accumulator = np.zeros(len(self.thresholds), self.dtype)

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_ConfusionCount):
    """The weighted number of true positives (positive labels predicted above a threshold).

    Args:
        thresholds: a float or list of floats in ``[0, 1]``; a prediction above
            one is positive. Defaults to 0.5.
        name: the metric's name (default ``'true_positives'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    ``result()`` is a float, or an array with one value per threshold.

    Example:
        >>> TruePositives()([0, 1, 1, 1], [1, 0, 1, 1])
        2.0
    """

    _COUNT = 0


class FalsePositives(_ConfusionCount):
    """The weighted number of false positives (negative labels predicted above a threshold).

    Args:
        thresholds: a float or list of floats in ``[0, 1]``; a prediction above
            one is positive. Defaults to 0.5.
        name: the metric's name (default ``'false_positives'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    ``result()`` is a float, or an array with one value per threshold.

    Example:
        >>> FalsePositives(thresholds=[0.2, 0.6])([0, 1, 0, 0], [0.1, 0.5, 0.5, 0.9])
        array([2., 1.], dtype=float32)
    """

    _COUNT = 1


class TrueNegatives(_ConfusionCount):
    """The weighted number of true negatives (negative labels predicted at or below a threshold).

    Args:
        thresholds: a float or list of floats in ``[0, 1]``; a prediction above
            one is positive. Defaults to 0.5.
        name: the metric's name (default ``'true_negatives'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    ``result()`` is a float, or an array with one value per threshold.

    Example:
        >>> TrueNegatives()([0, 1, 0, 0], [0, 0, 1, 1], sample_weight=[1.0, 1.0, 0.0, 2.0])
        1.0
    """

    _COUNT = 2


class FalseNegatives(_ConfusionCount):
    """The weighted number of false negatives (positive labels predicted at or below a threshold).

    Args:
        thresholds: a float or list of floats in ``[0, 1]``; a prediction above
            one is positive. Defaults to 0.5.
        name: the metric's name (default ``'false_negatives'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    ``result()`` is a float, or an array with one value per threshold.

    Example:
        >>> FalseNegatives()([0, 1, 1, 1], [0, 1, 0, 0])
        2.0
    """

    _COUNT = 3
