import numpy as np
import pytest

from engine.training.losses import (BinaryFocalCrossentropy, CategoricalFocalCrossentropy,
                                    CategoricalGeneralizedCrossEntropy, binary_focal_crossentropy,
                                    categorical_focal_crossentropy, categorical_generalized_cross_entropy)
from tests.engine.losses.oracle import assert_gradient_matches_finite_differences, assert_matches_keras, keras

RNG = np.random.default_rng(0)
BINARY = RNG.integers(0, 2, size=(4, 5)).astype("float32")
ONE_HOT = np.eye(5, dtype="float32")[[1, 0, 4, 2]]
SPARSE = np.array([1, 0, 4, 2])
PROBABILITIES = RNG.uniform(0.05, 0.95, size=(4, 5)).astype("float32")
LOGITS = RNG.normal(scale=2.0, size=(4, 5)).astype("float32")
SOFTMAX = (np.exp(LOGITS) / np.exp(LOGITS).sum(axis=-1, keepdims=True)).astype("float32")
CASES = [
    (BinaryFocalCrossentropy, {}, BINARY, PROBABILITIES),
    (BinaryFocalCrossentropy, {"apply_class_balancing": True, "alpha": 0.4, "gamma": 1.5, "label_smoothing": 0.1},
     BINARY, PROBABILITIES),
    (BinaryFocalCrossentropy, {"from_logits": True, "gamma": 3.0}, BINARY, LOGITS),
    (CategoricalFocalCrossentropy, {}, ONE_HOT, PROBABILITIES),
    (CategoricalFocalCrossentropy, {"alpha": 0.5, "gamma": 1.0, "label_smoothing": 0.2}, ONE_HOT, PROBABILITIES),
    (CategoricalFocalCrossentropy, {"from_logits": True}, ONE_HOT, LOGITS),
    (CategoricalGeneralizedCrossEntropy, {}, SPARSE, SOFTMAX),
    (CategoricalGeneralizedCrossEntropy, {"q": 0.2}, SPARSE, SOFTMAX),
]
REDUCTIONS = ["sum_over_batch_size", "sum", "mean_with_sample_weight", None]
WEIGHTS = {"no weights": None, "per sample": np.array([0.5, 2.0, 0.0, 1.5], "float32")}


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("cls, kwargs, y_true, y_pred", CASES, ids=[f"{c[0].__name__}{c[1]}" for c in CASES])
def test_value_matches_keras_and_gradient_matches_finite_differences(cls, kwargs, y_true, y_pred, reduction,
                                                                     weights):
    ours = cls(reduction=reduction, **kwargs)
    theirs = getattr(keras.losses, cls.__name__)(reduction=reduction, **kwargs)
    assert_matches_keras(ours, theirs, y_true, y_pred, WEIGHTS[weights])
    assert_gradient_matches_finite_differences(ours, y_true, y_pred, WEIGHTS[weights])
    assert ours.get_config() == theirs.get_config()


@pytest.mark.parametrize("ours, theirs, y_true, y_pred, kwargs", [
    (binary_focal_crossentropy, keras.losses.binary_focal_crossentropy, BINARY, LOGITS, {"from_logits": True}),
    (categorical_focal_crossentropy, keras.losses.categorical_focal_crossentropy, ONE_HOT, PROBABILITIES,
     {"gamma": 1.0}),
    (categorical_generalized_cross_entropy, keras.losses.categorical_generalized_cross_entropy, SPARSE, SOFTMAX,
     {"q": 0.7}),
], ids=["binary focal", "categorical focal", "generalized"])
def test_functions_return_keras_per_sample_values(ours, theirs, y_true, y_pred, kwargs):
    received, expected = ours(y_true, y_pred, **kwargs), np.asarray(theirs(y_true, y_pred, **kwargs))
    assert received.shape == expected.shape and received.dtype == np.float32
    np.testing.assert_allclose(received, expected, rtol=1e-6, atol=1e-7)


def test_generalized_cross_entropy_needs_q_between_0_and_1():
    with pytest.raises(ValueError, match=r"CategoricalGeneralizedCrossEntropy expects q in the interval \(0, 1\). "
                                         "Received: q=1.5"):
        CategoricalGeneralizedCrossEntropy(q=1.5)
