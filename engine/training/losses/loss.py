"""The Loss base class: per-sample losses, Keras 3's sample weighting and
reduction, and the gradient of the reduced loss with respect to ``y_pred`` (and
to ``y_true`` when it is traced: soft targets that train, as in distillation)."""

import numpy as np

from engine.autodiff import GradientTape, Traced, TracingError, record_op, untraced
from engine.dtypes import dtype_kind, dtype_name
from engine.network.naming import to_snake_case, unique_name
from engine.network.ops import unbroadcast

EPSILON = 1e-7
REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None)


class Loss:
    """Base class of losses.

    Subclasses implement ``call(y_true, y_pred)``, the per-sample losses, and
    ``backward(y_true, y_pred, grad)``, the gradient with respect to ``y_pred``
    given ``grad``, the gradient with respect to those per-sample losses. Both
    receive ``y_pred`` in the loss's dtype and the two arrays brought to the
    same rank the way Keras does. The base class weighs, reduces and
    differentiates exactly as Keras 3:

    - ``"sum_over_batch_size"`` and ``"mean"``: sum of weighted losses divided
      by their number of elements;
    - ``"sum"``: sum of weighted losses;
    - ``"mean_with_sample_weight"``: sum of weighted losses divided by the sum
      of the sample weights;
    - ``"none"`` or None: the weighted per-sample losses (``gradient`` then
      differentiates their sum).

    Args:
        name: the loss name; by default the snake-case class name, made unique.
        reduction: one of the reductions above.
        dtype: the dtype of the computation; by default that of ``y_pred``
            (float32 when ``y_pred`` is not floating).

    Example:
        >>> import numpy as np
        >>> class Absolute(Loss):
        ...     def call(self, y_true, y_pred):
        ...         return np.abs(y_pred - y_true).sum(axis=-1)
        ...     def backward(self, y_true, y_pred, grad):
        ...         return grad[..., None] * np.sign(y_pred - y_true)
        >>> float(Absolute()(np.zeros((2, 2)), np.array([[1.0, -1.0], [2.0, 0.0]])))
        2.0
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in REDUCTIONS:
            raise ValueError(
                f"Invalid value for argument `reduction` of {type(self).__name__}: expected one of "
                f"{', '.join(map(repr, REDUCTIONS))}. Received: reduction={reduction!r}"
            )
        if dtype is not None and dtype_kind(dtype) != "f":
            raise ValueError(
                f"{type(self).__name__} computes in a floating dtype, received dtype={dtype!r}. "
                "Pass a float dtype such as 'float32', or None to follow y_pred."
            )
        self.name = name or unique_name(to_snake_case(type(self).__name__))
        self.reduction = reduction
        self.dtype = None if dtype is None else dtype_name(dtype)

    def __call__(self, y_true, y_pred, sample_weight=None):
        """Returns the reduced loss: a NumPy scalar of the loss dtype (an array for ``"none"``).
        Inside a ``GradientTape``, a traced ``y_pred`` gives a traced loss (its gradient
        is ``gradient``'s), so a custom training loop can differentiate it; a traced
        ``y_true`` is differentiated too, through ``call`` (as the loss function is).

        Args:
            y_true: the targets.
            y_pred: the predictions.
            sample_weight: a weight per sample (or per loss value), or None.

        Raises:
            ValueError: weights that do not broadcast to the per-sample losses.

        Example:
            >>> import numpy as np
            >>> from engine.training.losses import MeanSquaredError
            >>> loss = MeanSquaredError()
            >>> y_true, y_pred = np.zeros((2, 1)), np.array([[1.0], [3.0]])
            >>> float(loss(y_true, y_pred)), float(loss(y_true, y_pred, sample_weight=np.array([1.0, 0.0])))
            (5.0, 0.5)
        """
        if isinstance(y_pred, Traced) or isinstance(y_true, Traced):
            return self._recorded_call(y_true, y_pred, sample_weight)
        _, _, _, values, weights = self._weighted_losses(y_true, y_pred, sample_weight)
        weighted = values if weights is None else values * weights
        if self.reduction in ("none", None) or weighted.ndim == 0:
            return weighted
        divisor = _divisor(weighted, weights, self.reduction)
        return weighted.sum() / divisor if divisor else weighted.dtype.type(0)

    def gradient(self, y_true, y_pred, sample_weight=None):
        """Returns d(reduced loss)/d(y_pred), with the shape and dtype of ``y_pred``.

        Args:
            y_true: the targets.
            y_pred: the predictions.
            sample_weight: a weight per sample (or per loss value), or None.

        Example:
            >>> import numpy as np
            >>> from engine.training.losses import MeanSquaredError
            >>> MeanSquaredError().gradient(np.zeros((2, 1)), np.array([[1.0], [3.0]]))
            array([[1.],
                   [3.]])
        """
        return self._gradient(y_true, y_pred, sample_weight, 1)

    def _recorded_call(self, y_true, y_pred, sample_weight):
        """The loss as one step of the tape, differentiated by ``backward`` in a traced ``y_pred`` and by
        tracing ``call`` in a traced ``y_true``."""
        true, pred, weight = untraced(y_true), untraced(y_pred), untraced(sample_weight)

        def vjp(g):
            return [self._gradient(true, pred, weight, g[0]) if isinstance(y_pred, Traced) else None,
                    self._target_gradient(true, pred, weight, g[0]) if isinstance(y_true, Traced) else None], {}

        (loss,) = record_op(vjp, [y_pred, y_true], [self(true, pred, weight)], name=f"loss {self.name!r}")
        return loss

    def _losses_gradient(self, y_true, y_pred, sample_weight, upstream):
        """``(aligned y_true, aligned y_pred, gradient with respect to the per-sample losses)`` given
        ``upstream``, that of the result of ``__call__`` (a number, or one per loss for ``"none"``)."""
        y_true, aligned_pred, losses, values, weights = self._weighted_losses(y_true, y_pred, sample_weight)
        weighted = values if weights is None else values * weights
        divisor = 1 if self.reduction in ("none", None) else _divisor(weighted, weights, self.reduction)
        grad = np.full(weighted.shape, 1 / divisor if divisor else 0, dtype=values.dtype)
        grad = grad * np.asarray(upstream, values.dtype)
        if weights is not None:
            grad = unbroadcast(grad * weights, values.shape).reshape(losses.shape)
        return y_true, aligned_pred, grad

    def _target_gradient(self, y_true, y_pred, sample_weight, upstream):
        """The gradient with respect to ``y_true`` given ``upstream``: ``call`` traced in ``y_true``; None
        where ``call`` does not differentiate it (labels it reads as constants)."""
        y_true = np.asarray(y_true)
        _, _, grad = self._losses_gradient(y_true, y_pred, sample_weight, upstream)
        with GradientTape() as tape:
            traced = tape.watch(y_true)
            try:
                losses = self.call(*self._aligned(traced, y_pred))
            except TracingError as error:
                raise error.with_context(f"loss {self.name!r} (differentiated in y_true)") from None
        return tape.gradient(losses, traced, output_gradients=grad)

    def _gradient(self, y_true, y_pred, sample_weight, upstream):
        """The gradient with respect to ``y_pred`` given ``upstream``, that of the
        result of ``__call__`` (a number, or one per loss for ``"none"``)."""
        y_pred = np.asarray(y_pred)
        y_true, aligned_pred, grad = self._losses_gradient(y_true, y_pred, sample_weight, upstream)
        # Targets may broadcast against the output (Keras accepts (n, 4) labels for an (n, 1)
        # output with mse): backward sees the broadcast prediction, and the output's gradient
        # sums over the broadcast axes.
        seen_pred = aligned_pred
        if np.ndim(y_true) == aligned_pred.ndim and np.shape(y_true) != aligned_pred.shape:
            seen_pred = np.broadcast_to(aligned_pred, np.broadcast_shapes(np.shape(y_true), aligned_pred.shape))
        grad = self.backward(y_true, seen_pred, grad)
        return unbroadcast(grad, aligned_pred.shape).reshape(y_pred.shape).astype(y_pred.dtype, copy=False)

    def call(self, y_true, y_pred):
        """The per-sample losses: override it in every loss.

        Args:
            y_true: the targets, brought to the rank of ``y_pred``.
            y_pred: the predictions, in the loss's dtype.

        Returns:
            One loss per sample (the last axis reduced), unweighted.

        Example:
            >>> import numpy as np
            >>> from engine.training.losses import MeanAbsoluteError
            >>> MeanAbsoluteError().call(np.zeros((2, 2)), np.array([[1.0, 3.0], [2.0, 2.0]]))
            array([2., 2.])
        """
        raise NotImplementedError(f"{type(self).__name__} must implement call(y_true, y_pred).")

    def backward(self, y_true, y_pred, grad):
        """The gradient with respect to ``y_pred`` given ``grad``, that of the
        per-sample losses. By default ``call`` is traced, so a loss written in
        plain NumPy needs no backward; override it for speed.

        Args:
            y_true: the targets, as ``call`` received them.
            y_pred: the predictions, as ``call`` received them.
            grad: the gradient with respect to each per-sample loss.

        Returns:
            The gradient with respect to ``y_pred``, of its shape.

        Example:
            >>> import numpy as np
            >>> class Absolute(Loss):
            ...     def call(self, y_true, y_pred):
            ...         return np.sum(np.abs(y_pred - y_true), axis=-1)
            >>> Absolute().backward(np.zeros((1, 2)), np.array([[2.0, -1.0]]), np.ones(1))
            array([[ 1., -1.]])
        """
        with GradientTape() as tape:
            traced = tape.watch(y_pred)
            try:
                losses = self.call(y_true, traced)
            except TracingError as error:
                raise error.with_context(f"loss {self.name!r}") from None
        result = tape.gradient(losses, traced, output_gradients=grad)
        return np.zeros_like(y_pred) if result is None else result

    def get_config(self):
        """The arguments that recreate this loss.

        Example:
            >>> from engine.training.losses import Huber
            >>> Huber(delta=2.0).get_config()["delta"]
            2.0
        """
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        """Creates a loss from what ``get_config`` returned.

        Args:
            config: the dict of ``__init__`` arguments.

        Example:
            >>> from engine.training.losses import Huber
            >>> Huber.from_config(Huber(delta=2.0).get_config()).delta
            2.0
        """
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, reduction={self.reduction}>"

    def _mask(self, y_true, y_pred):
        """Which per-sample losses count (None: all); Keras' mask on the losses."""
        return None

    def _aligned(self, y_true, y_pred):
        """``y_true`` and ``y_pred`` brought to the same rank, ``y_pred`` in the loss's dtype; a traced
        ``y_true`` stays traced."""
        y_pred = np.asarray(y_pred)
        dtype = self.dtype or (y_pred.dtype if y_pred.dtype.kind == "f" else np.dtype("float32"))
        y_true = y_true if isinstance(y_true, Traced) else np.asarray(y_true)
        return squeeze_or_expand_to_same_rank(y_true, y_pred.astype(dtype, copy=False))

    def _weighted_losses(self, y_true, y_pred, sample_weight):
        """The aligned ``y_true`` and ``y_pred``, the per-sample losses, and the
        losses and weights brought to the same rank (weights None without any)."""
        y_true, y_pred = self._aligned(y_true, y_pred)
        losses = values = np.asarray(self.call(y_true, y_pred))
        weights = _merge_mask(sample_weight, self._mask(y_true, y_pred), losses.dtype, self.reduction)
        if weights is not None:
            values, weights = squeeze_or_expand_to_same_rank(losses, weights)
            try:
                np.broadcast_shapes(values.shape, weights.shape)
            except ValueError:
                raise ValueError(
                    f"Loss {self.name!r}: sample_weight of shape {np.shape(sample_weight)} cannot be "
                    f"broadcast to the per-sample losses of shape {values.shape}. Give one weight per "
                    "sample, or one per loss value."
                ) from None
        return y_true, y_pred, losses, values, weights


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Keras' rank alignment: when the ranks differ by one and the longer array
    ends in a size-1 axis, drops that axis (or, if the shorter array has rank
    1 and ``expand_rank_1``, gives the shorter one a trailing axis instead)."""
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        if x2.ndim == 1 and expand_rank_1:
            return x1, x2[..., None]
        return x1[..., 0], x2
    if x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        if x1.ndim == 1 and expand_rank_1:
            return x1[..., None], x2
        return x1, x2[..., 0]
    return x1, x2


def as_float_pair(y_true, y_pred):
    """``y_pred`` as a float array (float32 unless already floating), ``y_true``
    cast to its dtype, both brought to the same rank. A traced array (a loss
    function differentiated by the tape) is kept as it is, so its gradient flows."""
    y_pred = as_float_array(y_pred)
    if not isinstance(y_true, Traced):
        y_true = np.asarray(y_true).astype(y_pred.dtype, copy=False)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


def as_float_array(y_pred):
    """``y_pred`` as a float array (float32 unless already floating); a traced
    array, already floating, is kept as it is so that its gradient flows."""
    if isinstance(y_pred, Traced):
        return y_pred
    y_pred = np.asarray(y_pred)
    return y_pred if y_pred.dtype.kind == "f" else y_pred.astype("float32")


def clip_slope(x, low, high):
    """The derivative of ``np.clip(x, low, high)``: 1 inside, 0 outside and, like
    jax (and central differences), 0.5 on the bounds themselves."""
    low, high = x.dtype.type(low), x.dtype.type(high)
    inside = ((x > low) & (x < high)).astype(x.dtype)
    return inside + 0.5 * ((x == low) | (x == high)).astype(x.dtype)


def _merge_mask(sample_weight, mask, dtype, reduction):
    """Keras' ``apply_mask``: folds a mask over the losses into the sample weights.
    Under the averaging reductions a masked-out loss weighs 0 and a kept one
    ``total / valid``, so the average runs over the kept losses only."""
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=dtype)
    if mask is None:
        return sample_weight
    mask_weight = mask.astype(dtype)
    if reduction in ("mean", "sum_over_batch_size"):
        valid = mask_weight.sum()
        mask_weight = mask_weight * (dtype.type(mask.size) / valid if valid else dtype.type(0))
    if sample_weight is None:
        return mask_weight
    mask_weight, sample_weight = squeeze_or_expand_to_same_rank(mask_weight, sample_weight)
    return sample_weight * mask_weight


class LossFunctionWrapper(Loss):
    """A loss written as a function ``fn(y_true, y_pred) -> per-sample losses``,
    as Keras takes ``compile(loss=fn)``: weighted and reduced like every Loss,
    its gradient traced through the function's NumPy code.

    Args:
        fn: the function; saved by its registered name, else ``module:qualname``.
        name: the loss name; by default the function's name.
        reduction: as for ``Loss``.
        dtype: as for ``Loss``.
        **kwargs: more keyword arguments passed to ``fn``.

    Example:
        >>> def mean_absolute(y_true, y_pred):
        ...     return np.mean(np.abs(y_pred - y_true), axis=-1)
        >>> float(LossFunctionWrapper(mean_absolute)(np.zeros((2, 2)), np.ones((2, 2))))
        1.0
    """

    def __init__(self, fn, name=None, reduction="sum_over_batch_size", dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None), reduction=reduction, dtype=dtype)
        self.fn, self._fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        from engine.files.registry import function_name

        return {**super().get_config(), "fn": function_name(self.fn), **self._fn_kwargs}

    @classmethod
    def from_config(cls, config):
        from engine.files.registry import resolve_function

        config = dict(config)
        config["fn"] = resolve_function(config["fn"], f"loss {config.get('name')!r}")
        return cls(**config)


def _divisor(weighted, weights, reduction):
    """What the summed weighted losses are divided by (a zero divisor gives a zero loss)."""
    if reduction == "sum":
        return 1
    if reduction == "mean_with_sample_weight" and weights is not None:
        return weights.sum()
    return weighted.size
