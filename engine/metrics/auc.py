"""Area under the ROC or precision-recall curve, from confusion counts at
evenly spaced thresholds, with Keras 3's thresholds and summation rules."""

import numpy as np

from engine.losses.loss import EPSILON
from engine.losses.probabilistic import sigmoid
from engine.metrics.confusion import confusion_counts
from engine.metrics.metric import Metric, divide_no_nan

CURVES = ("ROC", "PR")
SUMMATION_METHODS = ("interpolation", "minoring", "majoring")


class AUC(Metric):
    """Approximate area under the ROC or precision-recall (PR) curve.

    Predictions (probabilities, or logits with ``from_logits=True``) are
    counted at ``num_thresholds`` thresholds: ``-1e-7``, ``num_thresholds - 2``
    evenly spaced ones in ``(0, 1)``, and ``1 + 1e-7``. The area sums one
    rectangle per pair of neighbouring thresholds, whose height is the mean
    (``"interpolation"``), minimum (``"minoring"``) or maximum
    (``"majoring"``) of the curve at both ends; for PR with interpolation,
    precision is interpolated as Davis & Goadrich (2006) do.

    Args:
        num_thresholds: how many thresholds the curve is sampled at.
        curve: ``"ROC"`` or ``"PR"`` (precision-recall).
        summation_method: ``"interpolation"``, ``"minoring"`` or ``"majoring"``: how the area is summed.
        name: the metric's name.
        dtype: the floating dtype the state accumulates in (float32 by default).
        from_logits: whether ``y_pred`` holds logits rather than probabilities.

    Example:
        >>> AUC(num_thresholds=3)([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
        0.75
    """

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 from_logits=False):
        super().__init__(name=name, dtype=dtype)
        if not isinstance(num_thresholds, (int, np.integer)) or num_thresholds <= 1:
            raise ValueError(
                f"AUC expects num_thresholds to be an integer > 1. Received: num_thresholds={num_thresholds!r}"
            )
        if str(curve).upper() not in CURVES:
            raise ValueError(f"AUC expects curve to be one of {CURVES}. Received: curve={curve!r}")
        if str(summation_method).lower() not in SUMMATION_METHODS:
            raise ValueError(
                f"AUC expects summation_method to be one of {SUMMATION_METHODS}. "
                f"Received: summation_method={summation_method!r}"
            )
        self.num_thresholds = num_thresholds
        self.curve = curve.upper()
        self.summation_method = summation_method.lower()
        self.from_logits = from_logits
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.thresholds = [-EPSILON] + inner + [1.0 + EPSILON]
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = np.asarray(y_pred, self.dtype)
        if self.from_logits:
            y_pred = sigmoid(y_pred)
        tp, fp, tn, fn = confusion_counts(self, y_true, y_pred, self.thresholds, sample_weight, clip=True)
        self.true_positives = self.true_positives + tp
        self.false_positives = self.false_positives + fp
        self.true_negatives = self.true_negatives + tn
        self.false_negatives = self.false_negatives + fn

    def result(self):
        tp, fp, tn, fn = self.true_positives, self.false_positives, self.true_negatives, self.false_negatives
        if self.curve == "PR" and self.summation_method == "interpolation":
            return float(np.sum(_interpolated_pr_areas(tp, fp, fn)))
        recall = divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, divide_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) / 2
        elif self.summation_method == "minoring":
            heights = np.minimum(y[:-1], y[1:])
        else:
            heights = np.maximum(y[:-1], y[1:])
        return float(np.sum((x[:-1] - x[1:]) * heights))

    def reset_state(self):
        self.true_positives = np.zeros(self.num_thresholds, self.dtype)
        self.false_positives = np.zeros(self.num_thresholds, self.dtype)
        self.true_negatives = np.zeros(self.num_thresholds, self.dtype)
        self.false_negatives = np.zeros(self.num_thresholds, self.dtype)

    def get_config(self):
        return {**super().get_config(), "num_thresholds": self.num_thresholds, "curve": self.curve,
                "summation_method": self.summation_method, "from_logits": self.from_logits}


def _interpolated_pr_areas(tp, fp, fn):
    """The PR-curve area between neighbouring thresholds, with precision
    interpolated along the line from one threshold's counts to the next."""
    predicted_positive = tp + fp
    d_tp = tp[:-1] - tp[1:]
    d_positive = predicted_positive[:-1] - predicted_positive[1:]
    slope = divide_no_nan(d_tp, np.maximum(d_positive, 0))
    intercept = tp[1:] - slope * predicted_positive[1:]
    both_positive = (predicted_positive[:-1] > 0) & (predicted_positive[1:] > 0)
    ratio = np.where(both_positive, divide_no_nan(predicted_positive[:-1], np.maximum(predicted_positive[1:], 0)), 1)
    return divide_no_nan(slope * (d_tp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0))
