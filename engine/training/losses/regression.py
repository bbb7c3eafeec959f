"""Regression losses: mean squared, absolute, absolute percentage and squared
logarithmic error, Huber, cosine similarity.

Each function returns one loss per sample (the last axis, or ``axis``, is
reduced); each class pairs it with its gradient."""

import numpy as np

from engine.training.losses.loss import EPSILON, Loss, as_float_pair


def mean_squared_error(y_true, y_pred):
    """``mean(square(y_true - y_pred), axis=-1)``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(mean_squared_error(np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]])), 4)
        array([0.5])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    return np.mean(np.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """``mean(abs(y_true - y_pred), axis=-1)``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(mean_absolute_error(np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]])), 4)
        array([0.5])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    return np.mean(np.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    """``100 * mean(abs((y_true - y_pred) / max(abs(y_true), 1e-7)), axis=-1)``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(mean_absolute_percentage_error(np.array([[2.0, 4.0]]), np.array([[1.0, 5.0]])), 4)
        array([37.5])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    return 100 * np.mean(np.abs((y_true - y_pred) / np.maximum(np.abs(y_true), y_pred.dtype.type(EPSILON))), axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    """``mean(square(log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1)), axis=-1)``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(mean_squared_logarithmic_error(np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]])), 4)
        array([0.2402])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    epsilon = y_pred.dtype.type(EPSILON)
    return np.mean(np.square(np.log1p(np.maximum(y_pred, epsilon)) - np.log1p(np.maximum(y_true, epsilon))), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    """Mean over the last axis of ``0.5 * e**2`` where ``|e| <= delta``, else
    ``delta * |e| - 0.5 * delta**2``, with ``e = y_pred - y_true``.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.
        delta: where the loss turns from quadratic to linear.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(huber(np.array([[0.0, 0.0]]), np.array([[0.5, 3.0]])), 4)
        array([1.3125])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    error = y_pred - y_true
    abs_error = np.abs(error)
    return np.mean(np.where(abs_error <= delta, 0.5 * np.square(error), delta * abs_error - 0.5 * delta**2), axis=-1)


def cosine_similarity(y_true, y_pred, axis=-1):
    """``-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis)``: -1 for
    aligned vectors, 0 when either is zero.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.
        axis: the axis reduced.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(cosine_similarity(np.array([[1.0, 0.0]]), np.array([[2.0, 0.0]])), 4)
        array([-1.])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    return -np.sum(_l2_normalize(y_true, axis)[0] * _l2_normalize(y_pred, axis)[0], axis=axis)


def log_cosh(y_true, y_pred):
    """``mean(log(cosh(y_pred - y_true)), axis=-1)``, computed as
    ``x + softplus(-2x) - log(2)`` so that large errors do not overflow.

    Args:
        y_true: the targets.
        y_pred: the predictions, of the targets' shape.

    Returns:
        One value per sample.

    Example:
        >>> import numpy as np
        >>> np.round(log_cosh(np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]])), 4)
        array([0.2169])
    """
    y_true, y_pred = as_float_pair(y_true, y_pred)
    error = y_pred - y_true
    return np.mean(error + np.logaddexp(-2 * error, 0) - y_pred.dtype.type(np.log(2.0)), axis=-1)


def _l2_normalize(x, axis):
    """``x / max(||x||, epsilon)`` along ``axis``, with the inverse norm and
    whether the norm exceeded epsilon (the scale then depends on ``x``)."""
    square_sum = np.sum(np.square(x), axis=axis, keepdims=True)
    inverse_norm = 1 / np.sqrt(np.maximum(square_sum, x.dtype.type(EPSILON**2)))
    return x * inverse_norm, inverse_norm, square_sum > x.dtype.type(EPSILON**2)


class MeanSquaredError(Loss):
    """Mean of squared errors over the last axis.

    Args:
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'mean_squared_error'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> loss = MeanSquaredError()
        >>> round(float(loss(np.array([1.0, 0.0, 1.0]), np.array([0.9, 0.1, 0.8]))), 4)
        0.02
        >>> loss.gradient(np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]]))
        array([[-0.5,  0.5]])
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)

    def call(self, y_true, y_pred):
        return mean_squared_error(y_true, y_pred)

    def backward(self, y_true, y_pred, grad):
        return grad[..., None] * (2 / y_pred.shape[-1]) * (y_pred - y_true.astype(y_pred.dtype))


class MeanAbsoluteError(Loss):
    """Mean of absolute errors over the last axis.

    Args:
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'mean_absolute_error'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> round(float(MeanAbsoluteError()(np.array([1.0, 0.3, 1.0]), np.array([1.9, 0.3, 1.8]))), 4)
        0.5667
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)

    def call(self, y_true, y_pred):
        return mean_absolute_error(y_true, y_pred)

    def backward(self, y_true, y_pred, grad):
        return grad[..., None] * (np.sign(y_pred - y_true.astype(y_pred.dtype)) / y_pred.shape[-1])


class MeanAbsolutePercentageError(Loss):
    """Mean of absolute errors relative to the targets, in percent, over the last axis.

    Args:
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'mean_absolute_percentage_error'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> round(float(MeanAbsolutePercentageError()(np.array([[2.0, 4.0]]), np.array([[1.0, 5.0]]))), 4)
        37.5
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_percentage_error", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)

    def call(self, y_true, y_pred):
        return mean_absolute_percentage_error(y_true, y_pred)

    def backward(self, y_true, y_pred, grad):
        y_true = y_true.astype(y_pred.dtype)
        scale = np.maximum(np.abs(y_true), y_pred.dtype.type(EPSILON))
        return grad[..., None] * (100 / y_pred.shape[-1]) * np.sign(y_pred - y_true) / scale


class MeanSquaredLogarithmicError(Loss):
    """Mean of squared differences of ``log(1 + x)`` over the last axis (inputs floored at 1e-7).

    Args:
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'mean_squared_logarithmic_error'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> round(float(MeanSquaredLogarithmicError()(np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]]))), 4)
        0.2402
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)

    def call(self, y_true, y_pred):
        return mean_squared_logarithmic_error(y_true, y_pred)

    def backward(self, y_true, y_pred, grad):
        epsilon = y_pred.dtype.type(EPSILON)
        floored = np.maximum(y_pred, epsilon)
        difference = np.log1p(floored) - np.log1p(np.maximum(y_true.astype(y_pred.dtype), epsilon))
        slope = (y_pred > epsilon) + 0.5 * (y_pred == epsilon)  # max's derivative, 0.5 at the tie as jax
        return grad[..., None] * (2 / y_pred.shape[-1]) * difference / (1 + floored) * slope


class Huber(Loss):
    """Huber loss: quadratic for errors up to ``delta``, linear beyond.

    Args:
        delta: where the loss turns from quadratic to linear.
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'huber_loss'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> round(float(Huber()(np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.6, 0.4], [0.4, 0.6]]))), 3)
        0.155
    """

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.delta = delta

    def call(self, y_true, y_pred):
        return huber(y_true, y_pred, self.delta)

    def backward(self, y_true, y_pred, grad):
        error = y_pred - y_true.astype(y_pred.dtype)
        slope = np.where(np.abs(error) <= self.delta, error, self.delta * np.sign(error))
        return grad[..., None] * (slope / y_pred.shape[-1])

    def get_config(self):
        return {**super().get_config(), "delta": self.delta}


class CosineSimilarity(Loss):
    """Negative cosine similarity along ``axis``: minimizing it aligns the vectors.

    Args:
        axis: the axis reduced.
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'cosine_similarity'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> loss = CosineSimilarity(reduction="none")
        >>> loss(np.array([[0.0, 1.0], [1.0, 1.0]]), np.array([[1.0, 0.0], [1.0, 1.0]])).round(4)
        array([-0., -1.])
    """

    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.axis = axis

    def call(self, y_true, y_pred):
        return cosine_similarity(y_true, y_pred, self.axis)

    def backward(self, y_true, y_pred, grad):
        unit_true = _l2_normalize(y_true.astype(y_pred.dtype), self.axis)[0]
        unit_pred, inverse_norm, scaled = _l2_normalize(y_pred, self.axis)
        grad_unit = -np.expand_dims(grad, self.axis) * unit_true
        radial = np.sum(grad_unit * unit_pred, axis=self.axis, keepdims=True)
        return inverse_norm * (grad_unit - scaled * unit_pred * radial)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class LogCosh(Loss):
    """The mean over the last axis of ``log(cosh(y_pred - y_true))``: about
    ``x**2 / 2`` for small errors and ``|x| - log(2)`` for large ones.

    Args:
        reduction: how the weighted per-sample losses become one value (see ``Loss``).
        name: the loss's name (default ``'log_cosh'``).
        dtype: the dtype of the computation (default: that of ``y_pred``, float32 when not floating).

    Example:
        >>> import numpy as np
        >>> round(float(LogCosh()(np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[1.0, 1.0], [0.0, 0.0]]))), 4)
        0.1084
    """

    def __init__(self, reduction="sum_over_batch_size", name="log_cosh", dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)

    def call(self, y_true, y_pred):
        return log_cosh(y_true, y_pred)
