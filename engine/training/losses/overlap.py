"""Overlap losses for segmentation: one minus the Dice or Tversky index of
labels and predictions, over ``axis`` (the whole batch by default)."""

import numpy as np

from engine.training.losses.loss import EPSILON, Loss, as_float_pair


def dice(y_true, y_pred, axis=None):
    """``1 - 2 * sum(y_true * y_pred) / (sum(y_true) + sum(y_pred) + 1e-7)`` over ``axis``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.
        axis: the axes summed over (None: all, giving one loss for the batch).

    Returns:
        The losses, with ``axis`` reduced.

    Example:
        >>> import numpy as np
        >>> round(float(dice(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[0.5, 0.5], [1.0, 0.0]]))), 4)
        0.4
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    intersection = np.sum(y_true * y_pred, axis=axis)
    return 1 - 2 * intersection / (np.sum(y_true, axis=axis) + np.sum(y_pred, axis=axis) + EPSILON)


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """``1 - TP / (TP + alpha * FP + beta * FN + 1e-7)`` with soft counts
    summed over ``axis``: ``TP = sum(y_true * y_pred)``, ``FP = sum(y_true * (1 -
    y_pred))`` and ``FN = sum((1 - y_true) * y_pred)``, as Keras counts them.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.
        alpha: the weight of the false positives.
        beta: the weight of the false negatives.
        axis: the axes summed over (None: all, giving one loss for the batch).

    Returns:
        The losses, with ``axis`` reduced.

    Example:
        >>> import numpy as np
        >>> round(float(tversky(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[0.5, 0.5], [1.0, 0.0]]))), 4)
        0.4
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    intersection = np.sum(y_true * y_pred, axis=axis)
    false_positives = np.sum((1 - y_pred) * y_true, axis=axis)
    false_negatives = np.sum(y_pred * (1 - y_true), axis=axis)
    return 1 - intersection / (intersection + alpha * false_positives + beta * false_negatives + EPSILON)


class Dice(Loss):
    """The Dice loss, one minus the Dice coefficient of labels and predictions.

    Args:
        reduction: how the weighted losses become one value (see ``Loss``).
        name: the loss's name (default ``'dice'``).
        axis: the axes summed over (None: all, giving one loss for the batch).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> round(float(Dice()(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[0.5, 0.5], [1.0, 0.0]]))), 4)
        0.4
    """

    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.axis = axis

    def call(self, y_true, y_pred):
        return dice(y_true, y_pred, self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class Tversky(Loss):
    """The Tversky loss, one minus the Tversky index: Dice with its two kinds of errors weighed apart.

    Args:
        alpha: the weight of the false positives.
        beta: the weight of the false negatives.
        reduction: how the weighted losses become one value (see ``Loss``).
        name: the loss's name (default ``'tversky'``).
        axis: the axes summed over (None: all, giving one loss for the batch).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> loss = Tversky(alpha=0.2, beta=0.8)
        >>> round(float(loss(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[0.5, 0.5], [1.0, 0.0]]))), 4)
        0.3182
    """

    def __init__(self, alpha=0.5, beta=0.5, reduction="sum_over_batch_size", name="tversky", axis=None, dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.alpha, self.beta, self.axis = alpha, beta, axis

    def call(self, y_true, y_pred):
        return tversky(y_true, y_pred, self.alpha, self.beta, self.axis)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha, "beta": self.beta, "axis": self.axis}
