"""Hinge metrics: running weighted means of the hinge losses."""

from engine.training.losses.hinge import categorical_hinge, hinge, squared_hinge
from engine.training.metrics.reduction import MeanMetricWrapper


class Hinge(MeanMetricWrapper):
    """The hinge loss over everything seen (labels of 0 and 1 are turned into -1 and 1).

    Args:
        name: the metric's name (default ``'hinge'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> round(Hinge()([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]]), 4)
        1.3
    """

    def __init__(self, name="hinge", dtype=None):
        super().__init__(hinge, name=name, dtype=dtype)


class SquaredHinge(MeanMetricWrapper):
    """The squared hinge loss over everything seen.

    Args:
        name: the metric's name (default ``'squared_hinge'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> round(SquaredHinge()([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]]), 4)
        1.86
    """

    def __init__(self, name="squared_hinge", dtype=None):
        super().__init__(squared_hinge, name=name, dtype=dtype)


class CategoricalHinge(MeanMetricWrapper):
    """The categorical hinge loss of one-hot labels over everything seen.

    Args:
        name: the metric's name (default ``'categorical_hinge'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> round(CategoricalHinge()([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]]), 4)
        1.4
    """

    def __init__(self, name="categorical_hinge", dtype=None):
        super().__init__(categorical_hinge, name=name, dtype=dtype)
