"""F-scores: the weighted harmonic mean of precision and recall, per class or averaged."""

import numpy as np

from engine.training.losses.loss import EPSILON
from engine.training.metrics.metric import Metric

AVERAGES = (None, "micro", "macro", "weighted")


class FBetaScore(Metric):
    """``(1 + beta**2) * precision * recall / (beta**2 * precision + recall)``,
    for ``(samples, classes)`` labels and predictions.

    A prediction is positive above ``threshold``; without one, the largest
    prediction of each sample is (ties too, unless it is 0).

    Args:
        average: None for one score per class; ``"micro"`` to count every class
            together; ``"macro"`` for the mean of the classes' scores;
            ``"weighted"`` for their mean weighted by each class's positives.
        beta: a float > 0: how many times more recall counts than precision.
        threshold: a float in ``(0, 1]``, or None for the arg-max.
        name: the metric's name (default ``'fbeta_score'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    ``result()`` is an array with one score per class (``average=None``), else a float.

    Example:
        >>> metric = FBetaScore(beta=2.0, threshold=0.5, average="micro")
        >>> round(metric([[1, 0], [1, 1]], [[0.9, 0.6], [0.2, 0.7]]), 4)
        0.6667
    """

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in AVERAGES:
            raise ValueError(
                f"Invalid `average` argument value for {type(self).__name__}. Expected one of: "
                f"{{None, 'micro', 'macro', 'weighted'}}. Received: average={average!r}"
            )
        if not isinstance(beta, float) or beta <= 0.0:
            raise ValueError(
                f"Invalid `beta` argument value for {type(self).__name__}: expected a Python float > 0. "
                f"Received: beta={beta!r} of type {type(beta).__name__!r}"
            )
        if threshold is not None and (not isinstance(threshold, float) or not 0.0 < threshold <= 1.0):
            raise ValueError(
                f"Invalid `threshold` argument value for {type(self).__name__}: expected a Python float "
                f"with 0 < threshold <= 1, or None. Received: threshold={threshold!r}"
            )
        self.average, self.beta, self.threshold = average, beta, threshold
        self._num_classes = None
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = np.asarray(y_true, self.dtype), np.asarray(y_pred, self.dtype)
        if y_true.ndim != 2 or y_pred.ndim != 2:
            raise ValueError(
                f"{type(self).__name__} expects 2D inputs with shape (batch_size, output_dim). Received input "
                f"shapes: y_pred.shape={y_pred.shape} and y_true.shape={y_true.shape}."
            )
        if self._num_classes is None:
            self._num_classes = y_pred.shape[-1]
            self.reset_state()
        if self.threshold is None:
            predicted = (y_pred >= y_pred.max(axis=-1, keepdims=True)) & (np.abs(y_pred) > 1e-9)
        else:
            predicted = y_pred > self.threshold
        predicted = predicted.astype(self.dtype)
        weight = None if sample_weight is None else np.asarray(sample_weight, self.dtype)[:, None]
        self.true_positives = self.true_positives + self._sum(predicted * y_true, weight)
        self.false_positives = self.false_positives + self._sum(predicted * (1 - y_true), weight)
        self.false_negatives = self.false_negatives + self._sum((1 - predicted) * y_true, weight)
        self.intermediate_weights = self.intermediate_weights + self._sum(y_true, weight)

    def _sum(self, values, weight):
        """The (weighted) values summed over the samples (and the classes, for micro)."""
        values = values if weight is None else values * weight
        return values.sum(axis=None if self.average == "micro" else 0)

    def result(self):
        scalar = np.dtype(self.dtype).type
        epsilon = scalar(EPSILON)
        precision = self.true_positives / (self.true_positives + self.false_positives + epsilon)
        recall = self.true_positives / (self.true_positives + self.false_negatives + epsilon)
        beta_squared = scalar(self.beta**2)
        score = precision * recall / (beta_squared * precision + recall + epsilon) * (1 + beta_squared)
        if self.average == "weighted":
            weights = self.intermediate_weights / (np.sum(self.intermediate_weights) + epsilon)
            return float(np.sum(score * weights))
        if self.average is not None:
            return float(np.mean(score))
        return score

    def reset_state(self):
        shape = () if self.average == "micro" else (self._num_classes or 0,)
        for state in ("true_positives", "false_positives", "false_negatives", "intermediate_weights"):
            setattr(self, state, np.zeros(shape, self.dtype))

    def get_config(self):
        return {**super().get_config(), "average": self.average, "beta": self.beta, "threshold": self.threshold}


class F1Score(FBetaScore):
    """The F-score with ``beta=1``: the harmonic mean of precision and recall.

    Args:
        average: None for one score per class; ``"micro"``, ``"macro"`` or
            ``"weighted"`` to average (see ``FBetaScore``).
        threshold: a float in ``(0, 1]``, or None for the arg-max.
        name: the metric's name (default ``'f1_score'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> round(F1Score(average="macro", threshold=0.5)([[1, 0], [0, 1]], [[0.9, 0.6], [0.2, 0.7]]), 4)
        0.8333
    """

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config
