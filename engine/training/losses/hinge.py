"""Hinge losses, for labels of -1 and 1 (labels of 0 and 1 are turned into
-1 and 1 first, as Keras does) and for one-hot labels."""

import numpy as np

from engine.autodiff import untraced
from engine.training.losses.loss import Loss, as_float_pair


def _signed_labels(y_true):
    """Labels that are all 0 or 1 become -1 and 1; any other labels are kept."""
    labels = untraced(y_true)
    return 2 * y_true - 1 if np.all((labels == 0) | (labels == 1)) else y_true


def hinge(y_true, y_pred):
    """``mean(maximum(1 - y_true * y_pred, 0), axis=-1)``.

    Args:
        y_true: the targets, -1 or 1 (0 or 1 are converted).
        y_pred: the predictions, of the targets' shape.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> hinge(np.array([[0.0, 1.0]]), np.array([[0.5, 0.2]]))
        array([1.15])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    return np.mean(np.maximum(1 - _signed_labels(y_true) * y_pred, 0), axis=-1)


def squared_hinge(y_true, y_pred):
    """``mean(square(maximum(1 - y_true * y_pred, 0)), axis=-1)``.

    Args:
        y_true: the targets, -1 or 1 (0 or 1 are converted).
        y_pred: the predictions, of the targets' shape.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(squared_hinge(np.array([[0.0, 1.0]]), np.array([[0.5, 0.2]])), 4)
        array([1.445])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    return np.mean(np.square(np.maximum(1 - _signed_labels(y_true) * y_pred, 0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    """``maximum(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)``
    over the last axis, for one-hot labels.

    Args:
        y_true: the one-hot targets.
        y_pred: the predictions, of the targets' shape.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(categorical_hinge(np.array([[0.0, 1.0, 0.0]]), np.array([[0.3, 0.5, 0.2]])), 4)
        array([0.8])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    positive = np.sum(y_true * y_pred, axis=-1)
    negative = np.max((1 - y_true) * y_pred, axis=-1)
    return np.maximum(negative - positive + 1, 0)


class Hinge(Loss):
    """The hinge loss ``mean(maximum(1 - y_true * y_pred, 0))`` over the last axis.

    Args:
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'hinge'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> round(float(Hinge()(np.array([[0, 1], [0, 0]]), np.array([[0.6, 0.4], [0.4, 0.6]]))), 4)
        1.3
    """

    def __init__(self, reduction="sum_over_batch_size", name="hinge", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)

    def call(self, y_true, y_pred):
        return hinge(y_true, y_pred)


class SquaredHinge(Loss):
    """The squared hinge loss ``mean(square(maximum(1 - y_true * y_pred, 0)))`` over the last axis.

    Args:
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'squared_hinge'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> round(float(SquaredHinge()(np.array([[0, 1], [0, 0]]), np.array([[0.6, 0.4], [0.4, 0.6]]))), 4)
        1.86
    """

    def __init__(self, reduction="sum_over_batch_size", name="squared_hinge", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)

    def call(self, y_true, y_pred):
        return squared_hinge(y_true, y_pred)


class CategoricalHinge(Loss):
    """The categorical hinge loss: how far the best wrong class comes within a margin of 1 of the true class.

    Args:
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'categorical_hinge'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> round(float(CategoricalHinge()(np.array([[0, 1], [0, 0]]), np.array([[0.6, 0.4], [0.4, 0.6]]))), 4)
        1.4
    """

    def __init__(self, reduction="sum_over_batch_size", name="categorical_hinge", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)

    def call(self, y_true, y_pred):
        return categorical_hinge(y_true, y_pred)
