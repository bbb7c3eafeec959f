"""Probabilistic metrics: running weighted means of the crossentropies and the
Kullback-Leibler divergence."""

from engine.training.losses.probabilistic import (binary_crossentropy, categorical_crossentropy, kl_divergence, poisson,
                                                  sparse_categorical_crossentropy)
from engine.training.metrics.reduction import MeanMetricWrapper


class BinaryCrossentropy(MeanMetricWrapper):
    """The binary crossentropy over everything seen.

    Args:
        name: the metric's name (default ``'binary_crossentropy'``).
        dtype: the floating dtype the state accumulates in (float32 by default).
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        label_smoothing: in [0, 1]: how far the labels are pulled towards the uniform distribution (0.5 for binary).

    Example:
        >>> round(BinaryCrossentropy()([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]]), 4)
        0.8149
    """

    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0):
        super().__init__(binary_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class CategoricalCrossentropy(MeanMetricWrapper):
    """The categorical crossentropy of one-hot labels over everything seen.

    Args:
        name: the metric's name (default ``'categorical_crossentropy'``).
        dtype: the floating dtype the state accumulates in (float32 by default).
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        label_smoothing: in [0, 1]: how far the labels are pulled towards the uniform distribution (0.5 for binary).
        axis: the axis reduced.

    Example:
        >>> round(CategoricalCrossentropy()([[0, 1, 0], [0, 0, 1]], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]]), 4)
        1.1769
    """

    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False, label_smoothing=0, axis=-1):
        super().__init__(categorical_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """The categorical crossentropy of integer labels over everything seen.

    Args:
        name: the metric's name (default ``'sparse_categorical_crossentropy'``).
        dtype: the floating dtype the state accumulates in (float32 by default).
        from_logits: whether ``y_pred`` holds logits rather than probabilities.
        ignore_class: a label whose losses are masked out (weigh 0), or None.
        axis: the class axis of ``y_pred``.

    Example:
        >>> round(SparseCategoricalCrossentropy()([1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]]), 4)
        1.1769
    """

    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False, ignore_class=None,
                 axis=-1):
        super().__init__(sparse_categorical_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         ignore_class=ignore_class, axis=axis)


class KLDivergence(MeanMetricWrapper):
    """The Kullback-Leibler divergence over everything seen.

    Args:
        name: the metric's name (default ``'kl_divergence'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> round(KLDivergence()([[0.2, 0.8]], [[0.5, 0.5]]), 4)
        0.1927
    """

    def __init__(self, name="kl_divergence", dtype=None):
        super().__init__(kl_divergence, name=name, dtype=dtype)


class Poisson(MeanMetricWrapper):
    """The Poisson loss ``mean(y_pred - y_true * log(y_pred + 1e-7))`` over everything seen.

    Args:
        name: the metric's name (default ``'poisson'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> round(Poisson()([[0, 1], [0, 0]], [[1, 1], [0, 0]]), 4)
        0.5
    """

    def __init__(self, name="poisson", dtype=None):
        super().__init__(poisson, name=name, dtype=dtype)
