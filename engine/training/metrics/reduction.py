"""The weighted running mean and sum, and the wrapper that makes a metric of any
per-sample function (accuracies, regression errors)."""

import numpy as np

from engine.autodiff import untraced
from engine.training.losses.loss import squeeze_or_expand_to_same_rank
from engine.training.metrics.metric import Metric, broadcast_weights, divide_no_nan
from engine.files.registry import function_name, resolve_function


class Mean(Metric):
    """The weighted mean of every value passed to ``update_state``.

    Values are first averaged to one per sample (over all axes after the
    first, or after the sample weight's axes); a sample then weighs its sample
    weight, as in Keras 3.

    Args:
        name: the metric's name (default ``'mean'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> m = Mean()
        >>> m.update_state([1.0, 3.0, 5.0, 7.0])
        >>> m.result()
        4.0
        >>> m.update_state([10.0], sample_weight=[4.0])
        >>> m.result()
        7.0
    """

    additive_state = ("total", "count")

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.reset_state()

    def update_state(self, values, sample_weight=None):
        values = np.asarray(untraced(values), dtype=self.dtype)  # a traced loss counts by its value
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=self.dtype)
            values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
            if values.ndim > sample_weight.ndim:
                values = values.mean(axis=tuple(range(sample_weight.ndim, values.ndim)))
            weight_ndim = sample_weight.ndim
            sample_weight = broadcast_weights(self, sample_weight, values.shape)
            values = values * sample_weight
            if weight_ndim > 1:
                sample_weight = sample_weight.mean(axis=tuple(range(1, weight_ndim)))
        if values.ndim > 1:
            values = values.mean(axis=tuple(range(1, values.ndim)))
        if sample_weight is not None:
            count = sample_weight.sum()
        else:
            count = values.shape[0] if values.ndim else 1
        self.total = self.total + values.sum()
        self.count = self.count + np.asarray(count, dtype=self.dtype)

    def result(self):
        return float(divide_no_nan(self.total, self.count))

    def reset_state(self):
        self.total = np.zeros((), self.dtype)
        self.count = np.zeros((), self.dtype)


class Sum(Metric):
    """The weighted sum of every value passed to ``update_state``.

    Values are first summed to the sample weight's rank; each is then
    multiplied by its weight, as in Keras 3.

    Args:
        name: the metric's name (default ``'sum'``).
        dtype: the floating dtype the state accumulates in (float32 by default).

    Example:
        >>> m = Sum()
        >>> m.update_state([1.0, 3.0, 5.0, 7.0], sample_weight=[1.0, 1.0, 0.0, 0.5])
        >>> m.result()
        7.5
    """

    additive_state = ("total",)

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.reset_state()

    def update_state(self, values, sample_weight=None):
        values = np.asarray(untraced(values), dtype=self.dtype)
        if sample_weight is not None:
            values, sample_weight = squeeze_or_expand_to_same_rank(values, np.asarray(sample_weight, self.dtype))
            if values.ndim > sample_weight.ndim:
                values = values.sum(axis=tuple(range(sample_weight.ndim, values.ndim)))
            values = values * broadcast_weights(self, sample_weight, values.shape)
        self.total = self.total + values.sum()

    def result(self):
        return float(self.total)

    def reset_state(self):
        self.total = np.zeros((), self.dtype)


class MeanMetricWrapper(Mean):
    """The weighted mean of ``fn(y_true, y_pred, **kwargs)``, a per-sample function.

    Args:
        fn: a function ``fn(y_true, y_pred, **kwargs)`` returning one value per sample.
        name: the metric's name.
        dtype: the floating dtype the state accumulates in (float32 by default).
        **kwargs: more keyword arguments passed to ``fn``.

    Example:
        >>> import numpy as np
        >>> m = MeanMetricWrapper(lambda y_true, y_pred: np.abs(y_true - y_pred), name="abs_error")
        >>> m(np.array([1.0, 2.0]), np.array([1.5, 1.0]))
        0.75
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight=sample_weight)

    def get_config(self):
        config = {**super().get_config(), **self._fn_kwargs}
        if type(self) is MeanMetricWrapper:  # a user's function, saved by name as Lambda functions are
            config["fn"] = function_name(self._fn)
        return config

    @classmethod
    def from_config(cls, config):
        if cls is MeanMetricWrapper:
            config = {**config, "fn": resolve_function(config["fn"], f"metric {config.get('name')!r}")}
        return cls(**config)
