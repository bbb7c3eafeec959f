import numpy as np
import pytest

from engine import metrics
from tests.engine.metrics.oracle import assert_matches_keras, keras


@pytest.mark.parametrize("name", ["MeanSquaredError", "MeanAbsoluteError"])
def test_result_after_weighted_updates_matches_keras(name):
    rng = np.random.default_rng(0)
    y_true, y_pred = rng.normal(size=(2, 5, 3)).astype("float32")
    weights = np.array([1.0, 0.0, 2.5, 0.5, 1.0], "float32")
    batches = [(y_true, y_pred, None), (y_pred, y_true[::-1], weights), (y_true[:, :1], y_pred[:, 0], None)]
    ours, theirs = getattr(metrics, name)(), getattr(keras.metrics, name)()
    assert_matches_keras(ours, theirs, batches)
    assert ours.get_config() == theirs.get_config()
