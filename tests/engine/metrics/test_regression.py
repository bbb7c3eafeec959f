import numpy as np
import pytest

from engine.training import metrics
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
    ("Poisson", {}, "binary"),
    ("Hinge", {}, "binary"),
    ("SquaredHinge", {}, "binary"),
    ("CategoricalHinge", {}, "one-hot"),
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


@pytest.mark.parametrize("name, kwargs", [("LogCoshError", {}), ("PearsonCorrelation", {}),
                                          ("ConcordanceCorrelation", {}), ("PearsonCorrelation", {"axis": 0}),
                                          ("ConcordanceCorrelation", {"axis": 0})])
def test_per_sample_regression_metrics_match_keras(name, kwargs):
    rng = np.random.default_rng(2)
    y_true, y_pred = rng.normal(size=(2, 3, 5, 4)).astype("float32")
    weights = rng.uniform(size=4 if kwargs else 5).astype("float32")
    batches = [(y_true[0], y_pred[0], None), (y_true[1], y_pred[1] + y_true[1], weights)]
    ours, theirs = getattr(metrics, name)(**kwargs), getattr(keras.metrics, name)(**kwargs)
    assert_matches_keras(ours, theirs, batches, rtol=1e-5)
    assert ours.get_config() == theirs.get_config()


@pytest.mark.parametrize("kwargs", [{}, {"class_aggregation": None}, {"class_aggregation": "variance_weighted_average"},
                                    {"num_regressors": 3}])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_r2_score_matches_keras(kwargs, weighted):
    rng = np.random.default_rng(3)
    y_true = rng.normal(size=(3, 6, 2)).astype("float32")
    y_pred = (y_true + rng.normal(scale=0.5, size=(3, 6, 2))).astype("float32")
    weights = rng.uniform(size=(3, 6)).astype("float32") if weighted else [None] * 3
    ours, theirs = metrics.R2Score(**kwargs), keras.metrics.R2Score(**kwargs)
    for y_t, y_p, w in zip(y_true, y_pred, weights):
        ours.update_state(y_t, y_p, sample_weight=w)
        theirs.update_state(y_t, y_p, sample_weight=w)
        np.testing.assert_allclose(ours.result(), theirs.result(), rtol=1e-5)
    ours.reset_state()
    ours.update_state(y_true[0], y_pred[0])
    theirs.reset_state()
    theirs.update_state(y_true[0], y_pred[0])
    np.testing.assert_allclose(ours.result(), theirs.result(), rtol=1e-5)
    assert ours.get_config() == theirs.get_config()


def test_r2_score_falls_back_to_plain_r2_with_too_many_regressors():
    y_true, y_pred = np.array([[1.0], [4.0], [3.0]]), np.array([[2.0], [4.0], [4.0]])
    adjusted = metrics.R2Score(num_regressors=5)
    adjusted.update_state(y_true, y_pred)
    with pytest.warns(UserWarning, match="R2Score: more independent predictors"):
        assert adjusted.result() == metrics.R2Score()(y_true, y_pred)
    with pytest.raises(ValueError, match=r"R2Score expects 2D inputs with shape \(batch_size, output_dim\)"):
        metrics.R2Score().update_state(np.zeros((2, 2, 2)), np.zeros((2, 2, 2)))


def test_sparse_categorical_crossentropy_takes_the_class_axis_as_keras():
    """Keras takes ``axis`` but needs labels of ``y_pred.shape[:-1]``, so only
    the last axis, however it is named, works there; ours also takes others."""
    rng = np.random.default_rng(4)
    y_pred = rng.uniform(0.1, 1, size=(6, 3)).astype("float32")
    labels = rng.integers(0, 3, size=6)
    ours = metrics.SparseCategoricalCrossentropy(axis=1, from_logits=True)
    theirs = keras.metrics.SparseCategoricalCrossentropy(axis=1, from_logits=True)
    assert_matches_keras(ours, theirs, [(labels, y_pred, None), (labels[::-1], y_pred, labels / 2)], rtol=1e-5)
    assert ours.get_config() == theirs.get_config()
    channels_first = metrics.SparseCategoricalCrossentropy(axis=1)(labels.reshape(2, 3), y_pred.reshape(2, 3, 3))
    expected = metrics.SparseCategoricalCrossentropy()(labels.reshape(2, 3), y_pred.reshape(2, 3, 3).transpose(0, 2, 1))
    assert channels_first == pytest.approx(expected)
