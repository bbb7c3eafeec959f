"""Metrics read at the best operating point: the best sensitivity, specificity,
precision or recall over the thresholds where the other one reaches a value."""

import numpy as np

from engine.training.metrics.confusion import confusion_counts
from engine.training.metrics.metric import Metric, divide_no_nan


class _OperatingPoint(Metric):
    """Confusion counts at ``num_thresholds`` evenly spaced thresholds in [0, 1]
    (one threshold, 0.5, for ``num_thresholds=1``); ``result`` takes the largest
    value of one rate over the thresholds where another rate reaches ``value``.

    Subclasses name their constraint argument (``_CONSTRAINT``) and say which
    rate is constrained and which is maximized (``_rates``).
    """

    additive_state = ("true_positives", "false_positives", "true_negatives", "false_negatives")

    _CONSTRAINT = None

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        if not 0 <= value <= 1:
            raise ValueError(
                f"Argument `{self._CONSTRAINT}` of {type(self).__name__} must be in the range [0, 1]. "
                f"Received: {self._CONSTRAINT}={value}"
            )
        if num_thresholds <= 0:
            raise ValueError(
                f"Argument `num_thresholds` of {type(self).__name__} must be an integer > 0. "
                f"Received: num_thresholds={num_thresholds}"
            )
        self.value, self.num_thresholds, self.class_id = value, num_thresholds, class_id
        if num_thresholds == 1:
            self.thresholds = [0.5]
        else:
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self.thresholds = [0.0] + inner + [1.0]
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        tp, fp, tn, fn = confusion_counts(self, y_true, y_pred, self.thresholds, sample_weight,
                                          class_id=self.class_id, clip=self.num_thresholds > 1)
        self.true_positives = self.true_positives + tp
        self.false_positives = self.false_positives + fp
        self.true_negatives = self.true_negatives + tn
        self.false_negatives = self.false_negatives + fn

    def result(self):
        constrained, maximized = self._rates()
        return float(np.max(np.where(constrained >= self.value, maximized, 0), initial=0))

    def reset_state(self):
        for state in ("true_positives", "false_positives", "true_negatives", "false_negatives"):
            setattr(self, state, np.zeros(len(self.thresholds), self.dtype))

    def _sensitivity(self):
        return divide_no_nan(self.true_positives, self.true_positives + self.false_negatives)

    def _specificity(self):
        return divide_no_nan(self.true_negatives, self.true_negatives + self.false_positives)

    def _precision(self):
        return divide_no_nan(self.true_positives, self.true_positives + self.false_positives)

    def get_config(self):
        return {**super().get_config(), "class_id": self.class_id, "num_thresholds": self.num_thresholds,
                self._CONSTRAINT: self.value}


class SensitivityAtSpecificity(_OperatingPoint):
    """The best sensitivity (recall) over the thresholds whose specificity is at least ``specificity``.

    Args:
        specificity: the specificity to reach, in [0, 1].
        num_thresholds: how many evenly spaced thresholds in [0, 1] are tried.
        class_id: count only this class.
        name: the metric's name (default ``'sensitivity_at_specificity'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> SensitivityAtSpecificity(0.5)([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8])
        0.5
    """

    _CONSTRAINT = "specificity"

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)
        self.specificity = specificity

    def _rates(self):
        return self._specificity(), self._sensitivity()


class SpecificityAtSensitivity(_OperatingPoint):
    """The best specificity over the thresholds whose sensitivity (recall) is at least ``sensitivity``.

    Args:
        sensitivity: the sensitivity to reach, in [0, 1].
        num_thresholds: how many evenly spaced thresholds in [0, 1] are tried.
        class_id: count only this class.
        name: the metric's name (default ``'specificity_at_sensitivity'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> round(SpecificityAtSensitivity(0.5)([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8]), 4)
        0.6667
    """

    _CONSTRAINT = "sensitivity"

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)
        self.sensitivity = sensitivity

    def _rates(self):
        return self._sensitivity(), self._specificity()


class PrecisionAtRecall(_OperatingPoint):
    """The best precision over the thresholds whose recall is at least ``recall``.

    Args:
        recall: the recall to reach, in [0, 1].
        num_thresholds: how many evenly spaced thresholds in [0, 1] are tried.
        class_id: count only this class.
        name: the metric's name (default ``'precision_at_recall'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> PrecisionAtRecall(0.5)([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8])
        0.5
    """

    _CONSTRAINT = "recall"

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)
        self.recall = recall

    def _rates(self):
        return self._sensitivity(), self._precision()


class RecallAtPrecision(_OperatingPoint):
    """The best recall over the thresholds whose precision is at least ``precision``.

    Args:
        precision: the precision to reach, in [0, 1].
        num_thresholds: how many evenly spaced thresholds in [0, 1] are tried.
        class_id: count only this class.
        name: the metric's name (default ``'recall_at_precision'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> RecallAtPrecision(0.8)([0, 0, 1, 1], [0.5, 0.6, 0.8, 0.9])
        1.0
    """

    _CONSTRAINT = "precision"

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)
        self.precision = precision

    def _rates(self):
        return self._precision(), self._sensitivity()
