import numpy as np
import pytest

from engine import metrics
from tests.engine.metrics.oracle import assert_matches_keras, keras


@pytest.mark.parametrize("name", ["MeanSquaredError", "MeanAbsoluteError", "MeanAbsolutePercentageError",
                                  "MeanSquaredLogarithmicError", "RootMeanSquaredError", "CosineSimilarity"])
def test_result_after_weighted_updates_matches_keras(name):
    rng = np.random.default_rng(0)
    y_true, y_pred = rng.normal(size=(2, 5, 3)).astype("float32")
    weights = np.array([1.0, 0.0, 2.5, 0.5, 1.0], "float32")
    batches = [(y_true, y_pred, None), (y_pred, y_true[::-1], weights), (y_true[:, :1], y_pred[:, 0], None)]
    ours, theirs = getattr(metrics, name)(), getattr(keras.metrics, name)()
    assert_matches_keras(ours, theirs, batches)
    assert ours.get_config().items() >= theirs.get_config().items()  # CosineSimilarity keeps its axis too


@pytest.mark.parametrize("name, kwargs, labels", [
    ("BinaryCrossentropy", {"from_logits": True, "label_smoothing": 0.1}, "binary"),
    ("BinaryCrossentropy", {}, "binary"),
    ("CategoricalCrossentropy", {"label_smoothing": 0.2}, "one-hot"),
    ("SparseCategoricalCrossentropy", {"from_logits": True}, "sparse"),
    ("KLDivergence", {}, "one-hot"),
])
def test_probabilistic_metrics_match_keras(name, kwargs, labels):
    rng = np.random.default_rng(1)
    y_pred = rng.uniform(0.05, 1, size=(6, 3)).astype("float32")
    y_true = {"binary": rng.integers(0, 2, (6, 3)), "one-hot": np.eye(3)[rng.integers(0, 3, 6)],
              "sparse": rng.integers(0, 3, 6)}[labels].astype("float32")
    weights = rng.uniform(size=6).astype("float32")
    ours, theirs = getattr(metrics, name)(**kwargs), getattr(keras.metrics, name)(**kwargs)
    assert_matches_keras(ours, theirs, [(y_true, y_pred, None), (y_true, y_pred[::-1], weights)], rtol=1e-5)
    assert metrics.get(metrics.serialize(ours)).get_config() == ours.get_config()
