import numpy as np
import pytest

from engine.training.metrics import Metric
from engine.training.metrics.metric import divide_no_nan


class Maximum(Metric):
    def __init__(self, name="maximum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.maximum = max(self.maximum, float(np.max(y_pred)))

    def result(self):
        return self.maximum

    def reset_state(self):
        self.maximum = float("-inf")


def test_a_subclass_updates_reads_and_resets():
    metric = Maximum()
    assert metric(None, np.array([0.5, 2.0])) == 2.0
    metric.update_state(None, np.array([1.0]))
    assert metric.result() == 2.0
    metric.reset_state()
    assert metric.result() == float("-inf")
    assert metric.get_config() == {"name": "maximum", "dtype": "float32"}
    assert Maximum.from_config({"name": "m", "dtype": "float64"}).dtype == "float64"


def test_automatic_names_are_unique_snake_case():
    class TruePositiveRate(Maximum):
        def __init__(self):
            super().__init__(name=None)

    assert [TruePositiveRate().name, TruePositiveRate().name] == ["true_positive_rate", "true_positive_rate_1"]


def test_missing_methods_say_what_to_implement():
    metric = Metric()
    for method, args in (("update_state", (1, 2)), ("result", ()), ("reset_state", ())):
        with pytest.raises(NotImplementedError, match=f"Metric must implement {method}"):
            getattr(metric, method)(*args)


def test_divide_no_nan_gives_zero_for_zero_denominators():
    np.testing.assert_array_equal(divide_no_nan(np.array([1.0, 2.0, 0.0]), np.array([2.0, 0.0, 0.0])), [0.5, 0, 0])
    assert divide_no_nan(np.float32(3), np.float32(0)) == 0
