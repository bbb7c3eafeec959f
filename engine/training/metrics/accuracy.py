"""Accuracy metrics: per-sample match functions (1.0 for a hit, 0.0 for a
miss) and the running weighted means of them."""

import numpy as np

from engine.training.losses.loss import squeeze_or_expand_to_same_rank
from engine.training.metrics.reduction import MeanMetricWrapper


def accuracy(y_true, y_pred):
    """Whether ``y_true == y_pred``, element by element."""
    y_pred = np.asarray(y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(np.asarray(y_true).astype(y_pred.dtype, copy=False), y_pred)
    return (y_true == y_pred).astype("float32")


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Whether ``y_true`` equals ``y_pred > threshold``, element by element.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.
        threshold: predictions above it count as 1.

    Returns:
        1.0 where the thresholded prediction equals the target, else 0.0, elementwise.

    Example:
        >>> import numpy as np
        >>> binary_accuracy(np.array([[1.0, 0.0]]), np.array([[0.9, 0.7]]))
        array([[1., 0.]], dtype=float32)
    """
    y_true, y_pred = squeeze_or_expand_to_same_rank(np.asarray(y_true), np.asarray(y_pred))
    return (y_true == (y_pred > threshold).astype(y_true.dtype)).astype("float32")


def categorical_accuracy(y_true, y_pred):
    """Whether the arg-max of one-hot ``y_true`` is the arg-max of ``y_pred``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> categorical_accuracy(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([[0.2, 0.8], [0.3, 0.7]]))
        array([1., 0.], dtype=float32)
    """
    return (np.argmax(y_true, axis=-1) == np.argmax(y_pred, axis=-1)).astype("float32")


def sparse_categorical_accuracy(y_true, y_pred):
    """Whether the integer label ``y_true`` is the arg-max of ``y_pred``.

    Args:
        y_true: the targets.
        y_pred: the class scores, with one axis more than the integer labels.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> sparse_categorical_accuracy(np.array([1, 0]), np.array([[0.2, 0.8], [0.3, 0.7]]))
        array([1., 0.], dtype=float32)
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1:] == (1,):
        y_true = y_true[..., 0]
    return (y_true == np.argmax(y_pred, axis=-1)).astype("float32")


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """Whether the arg-max of one-hot ``y_true`` is among the ``k`` largest of ``y_pred``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.
        k: how many of the highest scores count as a hit.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> top_k_categorical_accuracy(np.array([[0.0, 0.0, 1.0]]), np.array([[0.5, 0.3, 0.2]]), k=2)
        array([0.], dtype=float32)
    """
    return _in_top_k(np.argmax(y_true, axis=-1), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    """Whether the integer label ``y_true`` is among the ``k`` largest of ``y_pred``.

    Args:
        y_true: the targets.
        y_pred: the class scores, with one axis more than the integer labels;
            with ``from_sorted_ids``, the ids of the top classes, best first.
        k: how many of the highest scores count as a hit.
        from_sorted_ids: whether ``y_pred`` holds sorted class ids rather than scores.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> sparse_top_k_categorical_accuracy(np.array([2]), np.array([[0.5, 0.3, 0.2]]), k=2)
        array([0.], dtype=float32)
        >>> sparse_top_k_categorical_accuracy(np.array([2]), np.array([[0, 2, 1]]), k=2, from_sorted_ids=True)
        array([1.], dtype=float32)
    """
    if from_sorted_ids:
        y_pred = np.asarray(y_pred)
        labels = np.asarray(y_true).astype(y_pred.dtype)
        top = y_pred.reshape(-1, y_pred.shape[-1])[:, :k]
        return np.any(labels.reshape(-1, 1) == top, axis=1).astype("float32").reshape(labels.shape)
    return _in_top_k(np.asarray(y_true).astype(np.int64), y_pred, k)


def _in_top_k(labels, y_pred, k):
    """Whether fewer than ``k`` predictions beat the one at the label (so ties
    count as hits; NaN never does), with the shape of ``labels``."""
    y_pred = np.asarray(y_pred)
    y_pred = y_pred.reshape(-1, y_pred.shape[-1])
    at_label = np.take_along_axis(y_pred, labels.reshape(-1, 1), axis=-1)
    at_label = np.where(np.isnan(at_label), -np.inf, at_label)
    return (np.sum(y_pred > at_label, axis=-1) < k).astype("float32").reshape(labels.shape)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels.

    Args:
        name: the metric's name (default ``'accuracy'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> Accuracy()([[1], [2], [3], [4]], [[0], [2], [3], [4]])
        0.75
    """

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often ``y_pred > threshold`` equals the binary label.

    Args:
        name: the metric's name (default ``'binary_accuracy'``).
        dtype: the floating dtype the state accumulates in (float32 by default).
        threshold: predictions above it count as 1.

    Example:
        >>> BinaryAccuracy()([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]])
        0.75
    """

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)
        self.threshold = threshold


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the predicted class (arg-max) is the one-hot label's.

    Args:
        name: the metric's name (default ``'categorical_accuracy'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> CategoricalAccuracy()([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
        0.5
    """

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the predicted class (arg-max) is the integer label.

    Args:
        name: the metric's name (default ``'sparse_categorical_accuracy'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> SparseCategoricalAccuracy()([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])
        0.5
    """

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot label's class is among the ``k`` highest predictions.

    Args:
        k: how many of the highest scores count as a hit.
        name: the metric's name (default ``'top_k_categorical_accuracy'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> TopKCategoricalAccuracy(k=1)([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
        0.5
    """

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the ``k`` highest predictions.

    Args:
        k: how many of the highest scores count as a hit.
        name: the metric's name (default ``'sparse_top_k_categorical_accuracy'``).
        dtype: the floating dtype the state accumulates in (float32 by default).
        from_sorted_ids: whether ``y_pred`` holds the ids of the top classes,
            best first, rather than a score per class.

    Example:
        >>> SparseTopKCategoricalAccuracy(k=1)([2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
        0.5
    """

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None, from_sorted_ids=False):
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k,
                         from_sorted_ids=from_sorted_ids)
        self.k, self.from_sorted_ids = k, from_sorted_ids

    def get_config(self):
        config = super().get_config()
        if not self.from_sorted_ids:  # as Keras writes it
            del config["from_sorted_ids"]
        return config
