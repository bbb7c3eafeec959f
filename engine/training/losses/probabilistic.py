"""Probabilistic losses: binary, categorical and sparse categorical
crossentropy, and Kullback-Leibler divergence.

Probabilities are clipped to ``[1e-7, 1 - 1e-7]`` as Keras does; logits go
through log-sigmoid and log-softmax, whose gradients are ``sigmoid - y`` and
``softmax - y``."""

import numpy as np

from engine.autodiff import untraced
from engine.training.losses.loss import EPSILON, Loss, as_float_array, as_float_pair, clip_slope


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Elementwise binary crossentropy, averaged over ``axis``.

    ``label_smoothing`` squeezes the labels towards 0.5:
    ``y_true * (1 - label_smoothing) + 0.5 * label_smoothing``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        label_smoothing: in [0, 1]: how far the labels are pulled towards the uniform distribution (0.5 for binary).
        axis: the axis reduced.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(binary_crossentropy(np.array([[1.0, 0.0]]), np.array([[0.9, 0.2]])), 4)
        array([0.1643])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    y_true = _smooth_binary(y_true, label_smoothing)
    if from_logits:
        losses = y_true * np.logaddexp(0, -y_pred) + (1 - y_true) * np.logaddexp(0, y_pred)
    else:
        y_pred = np.clip(y_pred, EPSILON, 1 - EPSILON)
        losses = -(y_true * np.log(y_pred) + (1 - y_true) * np.log(1 - y_pred))
    return np.mean(losses, axis=axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """``-sum(y_true * log(p), axis)`` for one-hot (or soft) labels.

    Probabilities are first divided by their sum along ``axis``.
    ``label_smoothing`` mixes the labels with the uniform distribution over the
    ``y_true.shape[-1]`` classes.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        label_smoothing: in [0, 1]: how far the labels are pulled towards the uniform distribution (0.5 for binary).
        axis: the axis reduced.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(categorical_crossentropy(np.array([[0.0, 1.0]]), np.array([[0.2, 0.8]])), 4)
        array([0.2231])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(
            "categorical_crossentropy expects y_true and y_pred of the same shape (one-hot labels), "
            f"received y_true.shape={y_true.shape} and y_pred.shape={y_pred.shape}. For integer "
            "class labels use sparse_categorical_crossentropy."
        )
    y_true = _smooth_categorical(y_true, label_smoothing)
    return -np.sum(y_true * _log_probabilities(y_pred, from_logits, axis), axis=axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """Categorical crossentropy for integer class labels (``y_true`` has the
    shape of ``y_pred`` without its class axis, or with a last axis of 1).

    Losses at labels equal to ``ignore_class`` are 0. Labels outside
    ``[0, num_classes)`` raise a ValueError.

    Args:
        y_true: the targets.
        y_pred: the class scores, with one axis more than the integer labels.
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        ignore_class: a label whose losses are masked out (weigh 0), or None.
        axis: the class axis of ``y_pred``.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(sparse_categorical_crossentropy(np.array([1]), np.array([[0.2, 0.8]])), 4)
        array([0.2231])
    """
    y_pred = as_float_array(y_pred)
    if axis not in (-1, np.ndim(y_pred) - 1):
        y_pred = np.moveaxis(y_pred, axis, -1)
    labels, valid = _sparse_labels(y_true, y_pred, ignore_class)
    log_probabilities = _log_probabilities(y_pred, from_logits, -1)
    losses = -np.take_along_axis(log_probabilities, labels[..., None], axis=-1)[..., 0]
    return losses if valid is None else np.where(valid, losses, y_pred.dtype.type(0))


def kl_divergence(y_true, y_pred):
    """``sum(y_true * log(y_true / y_pred), axis=-1)``, both clipped to ``[1e-7, 1]``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(kl_divergence(np.array([[0.5, 0.5]]), np.array([[0.25, 0.75]])), 4)
        array([0.1438])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    y_true = np.clip(y_true, EPSILON, 1)
    return np.sum(y_true * np.log(y_true / np.clip(y_pred, EPSILON, 1)), axis=-1)


def poisson(y_true, y_pred):
    """``mean(y_pred - y_true * log(y_pred + 1e-7), axis=-1)``, the Poisson
    negative log-likelihood of counts ``y_true`` at rates ``y_pred`` (up to a constant).

    Args:
        y_true: the targets (counts).
        y_pred: the predicted rates, of the targets' shape.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(poisson(np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]])), 4)
        array([1.])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    return np.mean(y_pred - y_true * np.log(y_pred + y_pred.dtype.type(EPSILON)), axis=-1)


def _smooth_binary(y_true, label_smoothing):
    return y_true * (1 - label_smoothing) + 0.5 * label_smoothing if label_smoothing else y_true


def _smooth_categorical(y_true, label_smoothing):
    return y_true * (1 - label_smoothing) + label_smoothing / y_true.shape[-1] if label_smoothing else y_true


def sigmoid(x):
    return 0.5 * (np.tanh(0.5 * x) + 1)


def _log_probabilities(y_pred, from_logits, axis):
    """``log_softmax(y_pred)`` for logits, else the log of the renormalized, clipped probabilities."""
    if from_logits:
        shifted = y_pred - np.max(y_pred, axis=axis, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return np.log(np.clip(y_pred / np.sum(y_pred, axis=axis, keepdims=True), EPSILON, 1 - EPSILON))


def _categorical_backward(target, y_pred, from_logits, axis, grad):
    """Gradient of ``-sum(target * log_probabilities(y_pred), axis)`` given ``grad`` per sample."""
    grad = np.expand_dims(grad, axis)
    if from_logits:
        log_probabilities = _log_probabilities(y_pred, True, axis)
        return grad * (np.exp(log_probabilities) * np.sum(target, axis=axis, keepdims=True) - target)
    total = np.sum(y_pred, axis=axis, keepdims=True)
    normalized = y_pred / total
    grad_normalized = -grad * target / np.clip(normalized, EPSILON, 1 - EPSILON) * clip_slope(
        normalized, EPSILON, 1 - EPSILON
    )
    return (grad_normalized - np.sum(grad_normalized * normalized, axis=axis, keepdims=True)) / total


def _sparse_labels(y_true, y_pred, ignore_class):
    """Integer labels of the shape of ``y_pred[..., 0]`` (ignored ones set to 0),
    and the mask of the labels that count (None without ``ignore_class``)."""
    y_true = np.asarray(untraced(y_true))  # integer labels: no gradient
    if y_true.ndim == y_pred.ndim and y_true.shape[-1:] == (1,):
        y_true = y_true[..., 0]
    if y_true.shape != y_pred.shape[:-1]:
        raise ValueError(
            "sparse_categorical_crossentropy expects integer labels of shape y_pred.shape[:-1] "
            f"(or with a last axis of 1), received y_true.shape={y_true.shape} for "
            f"y_pred.shape={y_pred.shape}. For one-hot labels use categorical_crossentropy."
        )
    labels = y_true.astype(np.int64)
    valid = None if ignore_class is None else labels != ignore_class
    num_classes = y_pred.shape[-1]
    out_of_range = (labels < 0) | (labels >= num_classes)
    if valid is not None:
        out_of_range &= valid
    if out_of_range.any():
        raise ValueError(
            f"sparse_categorical_crossentropy received the label {labels[out_of_range].flat[0]}, "
            f"outside the range [0, {num_classes}) of the {num_classes} classes of y_pred "
            f"(y_pred.shape={y_pred.shape}). Labels must be class indices; to skip a label, "
            "pass it as ignore_class."
        )
    return (labels if valid is None else np.where(valid, labels, 0)), valid


class BinaryCrossentropy(Loss):
    """Crossentropy between binary labels and predicted probabilities (or logits).

    Args:
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        label_smoothing: in [0, 1]: how far the labels are pulled towards the uniform distribution (0.5 for binary).
        axis: the axis reduced.
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'binary_crossentropy'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> loss = BinaryCrossentropy(from_logits=True)
        >>> round(float(loss(np.array([0, 1, 0, 0]), np.array([-18.6, 0.51, 2.94, -12.8]))), 3)
        0.865
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_crossentropy", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def call(self, y_true, y_pred):
        return binary_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing, self.axis)

    def backward(self, y_true, y_pred, grad):
        y_true = _smooth_binary(y_true.astype(y_pred.dtype), self.label_smoothing)
        grad = np.expand_dims(grad, self.axis) / y_pred.shape[self.axis]
        if self.from_logits:
            return grad * (sigmoid(y_pred) - y_true)
        clipped = np.clip(y_pred, EPSILON, 1 - EPSILON)
        return grad * ((1 - y_true) / (1 - clipped) - y_true / clipped) * clip_slope(y_pred, EPSILON, 1 - EPSILON)

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis}


class CategoricalCrossentropy(Loss):
    """Crossentropy between one-hot labels and predicted class probabilities (or logits).

    Args:
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        label_smoothing: in [0, 1]: how far the labels are pulled towards the uniform distribution (0.5 for binary).
        axis: the axis reduced.
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'categorical_crossentropy'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> loss = CategoricalCrossentropy()
        >>> round(float(loss(np.array([[0, 1, 0], [0, 0, 1]]), np.array([[0.05, 0.95, 0], [0.1, 0.8, 0.1]]))), 3)
        1.177
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="categorical_crossentropy", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def call(self, y_true, y_pred):
        return categorical_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing, self.axis)

    def backward(self, y_true, y_pred, grad):
        target = _smooth_categorical(y_true.astype(y_pred.dtype), self.label_smoothing)
        return _categorical_backward(target, y_pred, self.from_logits, self.axis, grad)

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis}


class SparseCategoricalCrossentropy(Loss):
    """Crossentropy between integer class labels and predicted class probabilities (or logits).

    With ``ignore_class``, losses at that label are masked out: they weigh 0
    and the averaging reductions average over the other losses only.

    Args:
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        ignore_class: a label whose losses are masked out (weigh 0), or None.
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'sparse_categorical_crossentropy'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> loss = SparseCategoricalCrossentropy()
        >>> round(float(loss(np.array([1, 2]), np.array([[0.05, 0.95, 0], [0.1, 0.8, 0.1]]))), 3)
        1.177
    """

    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.from_logits, self.ignore_class = from_logits, ignore_class

    def call(self, y_true, y_pred):
        return sparse_categorical_crossentropy(y_true, y_pred, self.from_logits, self.ignore_class)

    def backward(self, y_true, y_pred, grad):
        labels, valid = _sparse_labels(y_true, y_pred, self.ignore_class)
        if valid is not None:
            grad = grad * valid
        target = (np.arange(y_pred.shape[-1]) == labels[..., None]).astype(y_pred.dtype)
        return _categorical_backward(target, y_pred, self.from_logits, -1, grad)

    def _mask(self, y_true, y_pred):
        return None if self.ignore_class is None else _sparse_labels(y_true, y_pred, self.ignore_class)[1]

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits, "ignore_class": self.ignore_class}


class KLDivergence(Loss):
    """Kullback-Leibler divergence ``sum(y_true * log(y_true / y_pred))`` over the last axis.

    Args:
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'kl_divergence'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> round(float(KLDivergence()(np.array([[0.2, 0.8]]), np.array([[0.5, 0.5]]))), 4)
        0.1927
    """

    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)

    def call(self, y_true, y_pred):
        return kl_divergence(y_true, y_pred)

    def backward(self, y_true, y_pred, grad):
        y_true = np.clip(y_true.astype(y_pred.dtype), EPSILON, 1)
        return -grad[..., None] * y_true / np.clip(y_pred, EPSILON, 1) * clip_slope(y_pred, EPSILON, 1)


class Poisson(Loss):
    """The Poisson loss ``mean(y_pred - y_true * log(y_pred + 1e-7))`` over the last axis.

    Args:
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'poisson'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> round(float(Poisson()(np.array([[0, 1], [0, 0]]), np.array([[1.0, 1.0], [0.0, 0.0]]))), 4)
        0.5
    """

    def __init__(self, reduction="sum_over_batch_size", name="poisson", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)

    def call(self, y_true, y_pred):
        return poisson(y_true, y_pred)
