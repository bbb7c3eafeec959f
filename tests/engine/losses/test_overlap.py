import numpy as np
import pytest

from engine.training.losses import Dice, Tversky, dice, tversky
from tests.engine.losses.oracle import assert_gradient_matches_finite_differences, assert_matches_keras, keras

RNG = np.random.default_rng(0)
Y_TRUE = RNG.integers(0, 2, size=(4, 3, 5)).astype("float32")
Y_PRED = RNG.uniform(size=(4, 3, 5)).astype("float32")
CASES = [(Dice, {}), (Dice, {"axis": -1}), (Dice, {"axis": (1, 2)}), (Tversky, {}),
         (Tversky, {"alpha": 0.2, "beta": 0.8, "axis": (1, 2)})]
REDUCTIONS = ["sum_over_batch_size", "sum", "mean_with_sample_weight", None]
WEIGHTS = {"no weights": None, "per sample": np.array([0.5, 2.0, 0.0, 1.5], "float32")}


# Only one loss per sample (axis=(1, 2)) takes per-sample weights.
WEIGHTED_CASES = [(cls, kwargs, weights) for cls, kwargs in CASES for weights in WEIGHTS
                  if weights == "no weights" or kwargs.get("axis") == (1, 2)]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("cls, kwargs, weights", WEIGHTED_CASES,
                         ids=[f"{cls.__name__}{kwargs}-{weights}" for cls, kwargs, weights in WEIGHTED_CASES])
def test_value_matches_keras_and_gradient_matches_finite_differences(cls, kwargs, weights, reduction):
    ours = cls(reduction=reduction, **kwargs)
    theirs = getattr(keras.losses, cls.__name__)(reduction=reduction, **kwargs)
    assert_matches_keras(ours, theirs, Y_TRUE, Y_PRED, WEIGHTS[weights])
    assert_gradient_matches_finite_differences(ours, Y_TRUE, Y_PRED, WEIGHTS[weights])
    assert ours.get_config() == theirs.get_config()


@pytest.mark.parametrize("ours, theirs, kwargs", [(dice, keras.losses.dice, {"axis": -1}),
                                                  (tversky, keras.losses.tversky, {"alpha": 0.7, "beta": 0.3})])
def test_functions_return_keras_values(ours, theirs, kwargs):
    received, expected = ours(Y_TRUE, Y_PRED, **kwargs), np.asarray(theirs(Y_TRUE, Y_PRED, **kwargs))
    assert received.shape == expected.shape and received.dtype == np.float32
    np.testing.assert_allclose(received, expected, rtol=1e-6, atol=1e-7)
