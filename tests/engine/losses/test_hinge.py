import numpy as np
import pytest

from engine.training.losses import CategoricalHinge, Hinge, SquaredHinge, categorical_hinge, hinge, squared_hinge
from tests.engine.losses.oracle import assert_gradient_matches_finite_differences, assert_matches_keras, keras

RNG = np.random.default_rng(0)
Y_PRED = RNG.normal(size=(4, 5)).astype("float32")
LABELS = {
    "0/1 labels": RNG.integers(0, 2, size=(4, 5)).astype("float32"),
    "-1/1 labels": RNG.choice([-1.0, 1.0], size=(4, 5)).astype("float32"),
    "one-hot labels": np.eye(5, dtype="float32")[[1, 0, 4, 2]],
}
CASES = [(Hinge, "0/1 labels"), (Hinge, "-1/1 labels"), (SquaredHinge, "0/1 labels"), (SquaredHinge, "-1/1 labels"),
         (CategoricalHinge, "one-hot labels")]
REDUCTIONS = ["sum_over_batch_size", "sum", "mean_with_sample_weight", None]
WEIGHTS = {"no weights": None, "per sample": np.array([0.5, 2.0, 0.0, 1.5], "float32")}


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("cls, labels", CASES, ids=[f"{cls.__name__}-{labels}" for cls, labels in CASES])
def test_value_matches_keras_and_gradient_matches_finite_differences(cls, labels, reduction, weights):
    ours, theirs = cls(reduction=reduction), getattr(keras.losses, cls.__name__)(reduction=reduction)
    assert_matches_keras(ours, theirs, LABELS[labels], Y_PRED, WEIGHTS[weights])
    assert_gradient_matches_finite_differences(ours, LABELS[labels], Y_PRED, WEIGHTS[weights])
    assert ours.get_config() == theirs.get_config()


@pytest.mark.parametrize("ours, theirs, labels", [(hinge, keras.losses.hinge, "0/1 labels"),
                                                  (squared_hinge, keras.losses.squared_hinge, "-1/1 labels"),
                                                  (categorical_hinge, keras.losses.categorical_hinge, "one-hot labels")])
def test_functions_return_keras_per_sample_values(ours, theirs, labels):
    received, expected = ours(LABELS[labels], Y_PRED), np.asarray(theirs(LABELS[labels], Y_PRED))
    assert received.shape == expected.shape and received.dtype == np.float32
    np.testing.assert_allclose(received, expected, rtol=1e-6, atol=1e-7)
