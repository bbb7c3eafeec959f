"""Area under the ROC or precision-recall curve, from confusion counts at
evenly spaced thresholds, with Keras 3's thresholds and summation rules."""

import numpy as np

from engine.training.losses.loss import EPSILON
from engine.training.losses.probabilistic import sigmoid
from engine.training.metrics.confusion import confusion_counts, evenly_distributed
from engine.training.metrics.metric import Metric, divide_no_nan

CURVES = ("ROC", "PR")
SUMMATION_METHODS = ("interpolation", "minoring", "majoring")


class AUC(Metric):
    """Approximate area under the ROC or precision-recall (PR) curve.

    Predictions (probabilities, or logits with ``from_logits=True``) are
    counted at ``num_thresholds`` thresholds: ``-1e-7``, ``num_thresholds - 2``
    evenly spaced ones in ``(0, 1)`` (or the given ``thresholds``, sorted), and
    ``1 + 1e-7``. The area sums one
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
        thresholds: the inner thresholds in ``(0, 1)`` to use instead of
            evenly spaced ones (``num_thresholds`` is then their number + 2).
        multi_label: with ``(samples, labels)`` predictions, compute one curve
            per label and average their areas (weighted by ``label_weights``);
            otherwise every prediction counts on one curve.
        num_labels: the number of labels with ``multi_label`` (else learnt from the first batch).
        label_weights: a weight per label: it weighs the labels' areas with
            ``multi_label``, and each label's predictions otherwise.
        from_logits: whether ``y_pred`` holds logits rather than probabilities.

    Example:
        >>> AUC(num_thresholds=3)([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
        0.75
    """

    additive_state = ("true_positives", "false_positives", "true_negatives", "false_negatives")

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        super().__init__(name=name, dtype=dtype)
        if thresholds is None and (not isinstance(num_thresholds, (int, np.integer)) or num_thresholds <= 1):
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
        if num_labels and not multi_label:
            raise ValueError(
                f"AUC takes num_labels={num_labels} only with multi_label=True. "
                "Pass multi_label=True, or leave num_labels=None."
            )
        self.curve = curve.upper()
        self.summation_method = summation_method.lower()
        self.multi_label, self.num_labels, self.from_logits = multi_label, num_labels, from_logits
        self._num_labels = num_labels
        self.label_weights = None if label_weights is None else np.asarray(label_weights, self.dtype)
        self._init_thresholds = None if thresholds is None else sorted(thresholds)
        if thresholds is None:
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._clip = True
        else:
            inner = self._init_thresholds
            self._clip = evenly_distributed([0.0] + inner + [1.0])
        self.num_thresholds = len(inner) + 2
        self.thresholds = [-EPSILON] + inner + [1.0 + EPSILON]
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = np.asarray(y_pred, self.dtype)
        if self.from_logits:
            y_pred = sigmoid(y_pred)
        counts = confusion_counts(self, y_true, y_pred, self.thresholds, sample_weight, clip=self._clip,
                                  label_weights=None if self.multi_label else self.label_weights,
                                  multi_label=self.multi_label)
        if self.true_positives is None:
            self._num_labels = y_pred.shape[1]
            self.reset_state()
        self.true_positives = self.true_positives + counts[0]
        self.false_positives = self.false_positives + counts[1]
        self.true_negatives = self.true_negatives + counts[2]
        self.false_negatives = self.false_negatives + counts[3]

    def result(self):
        tp, fp, tn, fn = self.true_positives, self.false_positives, self.true_negatives, self.false_negatives
        if tp is None:
            return 0.0
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._total(_interpolated_pr_areas(tp, fp, fn))
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
        return self._total((x[:-1] - x[1:]) * heights)

    def _total(self, areas):
        """The area: the sum of the rectangles; with multi_label, the (weighted) mean of the labels' sums."""
        if not self.multi_label:
            return float(np.sum(areas))
        by_label = np.sum(areas, axis=0)
        if self.label_weights is None:
            return float(np.mean(by_label))
        return float(divide_no_nan(np.sum(by_label * self.label_weights), np.sum(self.label_weights)))

    def reset_state(self):
        """Zero counts, of shape ``(num_thresholds,)``, or ``(num_thresholds, num_labels)`` with
        ``multi_label`` (None until the first batch says how many labels there are)."""
        if self.multi_label and not self._num_labels:
            shape = None
        else:
            shape = (self.num_thresholds, self._num_labels) if self.multi_label else (self.num_thresholds,)
        for state in ("true_positives", "false_positives", "true_negatives", "false_negatives"):
            setattr(self, state, None if shape is None else np.zeros(shape, self.dtype))

    def get_config(self):
        config = {**super().get_config(), "num_thresholds": self.num_thresholds, "curve": self.curve,
                  "summation_method": self.summation_method, "multi_label": self.multi_label,
                  "num_labels": self.num_labels,
                  "label_weights": None if self.label_weights is None else self.label_weights.tolist(),
                  "from_logits": self.from_logits}
        if self._init_thresholds is not None:
            config["thresholds"] = list(self._init_thresholds)
        return config


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
