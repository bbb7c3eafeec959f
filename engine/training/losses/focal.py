"""Crossentropies reweighted towards hard examples (focal losses) or made
robust to noisy labels (generalized crossentropy)."""

import numpy as np

from engine.autodiff import untraced
from engine.training.losses.loss import EPSILON, Loss, as_float_array, as_float_pair
from engine.training.losses.probabilistic import _smooth_binary, _smooth_categorical, sigmoid


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                              label_smoothing=0.0, axis=-1):
    """Binary crossentropy scaled by ``(1 - p_t) ** gamma`` (``p_t``: the
    probability given to the true label), averaged over ``axis``; with
    ``apply_class_balancing``, positives also weigh ``alpha`` and negatives ``1 - alpha``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.
        apply_class_balancing: whether to weigh the classes by ``alpha``.
        alpha: the weight of the positive class, with ``apply_class_balancing``.
        gamma: the focusing exponent (0 gives the binary crossentropy).
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        label_smoothing: in [0, 1]: how far the labels are pulled towards 0.5.
        axis: the axis reduced.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(binary_focal_crossentropy(np.array([[1.0, 0.0]]), np.array([[0.9, 0.2]])), 4)
        array([0.005])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    y_true = _smooth_binary(y_true, label_smoothing)
    if from_logits:
        y_pred = sigmoid(y_pred)
    clipped = np.clip(y_pred, EPSILON, 1 - EPSILON)
    crossentropy = -(y_true * np.log(clipped) + (1 - y_true) * np.log(1 - clipped))
    true_probability = y_true * y_pred + (1 - y_true) * (1 - y_pred)
    losses = np.power(1 - true_probability, gamma) * crossentropy
    if apply_class_balancing:
        losses = (y_true * alpha + (1 - y_true) * (1 - alpha)) * losses
    return np.mean(losses, axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                                   axis=-1):
    """``sum(alpha * (1 - p) ** gamma * -y_true * log(p), axis)``, with ``p``
    the predicted probabilities (renormalized along ``axis``, clipped to
    ``[1e-7, 1 - 1e-7]``).

    Args:
        y_true: the one-hot (or soft) targets.
        y_pred: the predictions, of the targets' shape.
        alpha: the weight of every class.
        gamma: the focusing exponent (0 gives ``alpha`` times the categorical crossentropy).
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        label_smoothing: in [0, 1]: how far the labels are pulled towards the uniform distribution.
        axis: the class axis.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(categorical_focal_crossentropy(np.array([[0.0, 1.0]]), np.array([[0.2, 0.8]])), 4)
        array([0.0022])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    y_true = _smooth_categorical(y_true, label_smoothing)
    if from_logits:
        exponentials = np.exp(y_pred - np.max(y_pred, axis=axis, keepdims=True))
        y_pred = exponentials / np.sum(exponentials, axis=axis, keepdims=True)
    probabilities = np.clip(y_pred / np.sum(y_pred, axis=axis, keepdims=True), EPSILON, 1 - EPSILON)
    crossentropy = -y_true * np.log(probabilities)
    return np.sum(np.power(1 - probabilities, gamma) * alpha * crossentropy, axis=axis)


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """``(1 - p ** q) / q``, with ``p`` the predicted probability of the integer
    label: the crossentropy as ``q`` tends to 0, the mean absolute error at 1.

    Args:
        y_true: the integer class labels, of the shape of ``y_pred[..., 0]``.
        y_pred: the predicted class probabilities.
        q: in (0, 1): the robustness to noisy labels.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(categorical_generalized_cross_entropy(np.array([1]), np.array([[0.2, 0.8]]), q=0.5), 4)
        array([0.2111])
    """
    y_pred = as_float_array(y_pred)
    one_hot = np.arange(y_pred.shape[-1]) == np.asarray(untraced(y_true)).astype(np.int64)[..., None]  # labels: no gradient
    probability = np.sum(y_pred * one_hot.astype(y_pred.dtype), axis=-1)
    return (1 - np.power(probability, q)) / q


class BinaryFocalCrossentropy(Loss):
    """The binary focal crossentropy: binary crossentropy down-weighting well-classified examples.

    Args:
        apply_class_balancing: whether to weigh positives ``alpha`` and negatives ``1 - alpha``.
        alpha: the weight of the positive class, with ``apply_class_balancing``.
        gamma: the focusing exponent (0 gives the binary crossentropy).
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        label_smoothing: in [0, 1]: how far the labels are pulled towards 0.5.
        axis: the axis reduced.
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'binary_focal_crossentropy'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> loss = BinaryFocalCrossentropy(gamma=2.0)
        >>> round(float(loss(np.array([[0, 1], [0, 0]]), np.array([[0.6, 0.4], [0.4, 0.6]]))), 4)
        0.2678
    """

    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                 axis=-1, reduction="sum_over_batch_size", name="binary_focal_crossentropy", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.apply_class_balancing, self.alpha, self.gamma = apply_class_balancing, alpha, gamma
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def call(self, y_true, y_pred):
        return binary_focal_crossentropy(y_true, y_pred, self.apply_class_balancing, self.alpha, self.gamma,
                                         self.from_logits, self.label_smoothing, self.axis)

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits, "label_smoothing": self.label_smoothing,
                "axis": self.axis, "apply_class_balancing": self.apply_class_balancing, "alpha": self.alpha,
                "gamma": self.gamma}


class CategoricalFocalCrossentropy(Loss):
    """The categorical focal crossentropy: categorical crossentropy down-weighting well-classified examples.

    Args:
        alpha: the weight of every class.
        gamma: the focusing exponent.
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        label_smoothing: in [0, 1]: how far the labels are pulled towards the uniform distribution.
        axis: the class axis.
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'categorical_focal_crossentropy'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> loss = CategoricalFocalCrossentropy()
        >>> round(float(loss(np.array([[0, 1, 0], [0, 0, 1]]), np.array([[0.05, 0.95, 0], [0.1, 0.8, 0.1]]))), 4)
        0.2332
    """

    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_focal_crossentropy", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.alpha, self.gamma = alpha, gamma
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def call(self, y_true, y_pred):
        return categorical_focal_crossentropy(y_true, y_pred, self.alpha, self.gamma, self.from_logits,
                                              self.label_smoothing, self.axis)

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits, "label_smoothing": self.label_smoothing,
                "axis": self.axis, "alpha": self.alpha, "gamma": self.gamma}


class CategoricalGeneralizedCrossEntropy(Loss):
    """The generalized crossentropy ``(1 - p ** q) / q`` of integer labels, robust to noisy labels.

    Args:
        q: in (0, 1): near 0 it behaves as the crossentropy, near 1 as the mean absolute error.
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'categorical_generalized_cross_entropy'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> loss = CategoricalGeneralizedCrossEntropy(q=0.5)
        >>> round(float(loss(np.array([1, 2]), np.array([[0.05, 0.95, 0], [0.1, 0.8, 0.1]]))), 4)
        0.7091
    """

    def __init__(self, q=0.5, reduction="sum_over_batch_size", name="categorical_generalized_cross_entropy",
                 dtype=None):
        if not 0 < q < 1:
            raise ValueError(f"CategoricalGeneralizedCrossEntropy expects q in the interval (0, 1). Received: q={q}")
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.q = q

    def call(self, y_true, y_pred):
        return categorical_generalized_cross_entropy(y_true, y_pred, self.q)

    def get_config(self):
        return {**super().get_config(), "q": self.q}
