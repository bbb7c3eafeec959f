import jax
import numpy as np
import pytest

from engine.training.losses import (CosineSimilarity, Huber, LogCosh, MeanAbsoluteError, MeanAbsolutePercentageError,
                                    MeanSquaredError, MeanSquaredLogarithmicError, cosine_similarity, huber, log_cosh,
                                    mean_absolute_error, mean_squared_error)
from tests.engine.losses.oracle import assert_gradient_matches_finite_differences, assert_matches_keras, keras

CASES = [(MeanSquaredError, {}), (MeanAbsoluteError, {}), (Huber, {}), (Huber, {"delta": 0.3}),
         (CosineSimilarity, {}), (MeanAbsolutePercentageError, {}), (MeanSquaredLogarithmicError, {}), (LogCosh, {})]
REDUCTIONS = ["sum_over_batch_size", "sum", "mean_with_sample_weight", None]
WEIGHTS = {
    "no weights": None,
    "per sample": np.array([0.5, 2.0, 0.0, 1.5], "float32"),
    "per sample, trailing axis": np.array([[0.5], [2.0], [0.0], [1.5]], "float32"),
    "scalar": 2.0,
}


def data(shape=(4, 3), seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape).astype("float32"), rng.normal(size=shape).astype("float32")


@pytest.mark.parametrize("weights", WEIGHTS, ids=list(WEIGHTS))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("cls, kwargs", CASES, ids=[f"{c.__name__}{k}" for c, k in CASES])
def test_value_matches_keras_and_gradient_matches_finite_differences(cls, kwargs, reduction, weights):
    y_true, y_pred = data()
    ours = cls(reduction=reduction, **kwargs)
    theirs = getattr(keras.losses, cls.__name__)(reduction=reduction, **kwargs)
    assert_matches_keras(ours, theirs, y_true, y_pred, WEIGHTS[weights])
    assert_gradient_matches_finite_differences(ours, y_true.astype("float64"), y_pred, WEIGHTS[weights])


@pytest.mark.parametrize("cls", [MeanSquaredError, MeanAbsoluteError, Huber, CosineSimilarity, LogCosh])
@pytest.mark.parametrize("true_shape, pred_shape", [((4,), (4, 1)), ((4, 1), (4,)), ((2, 3), (2, 3, 1))])
def test_ranks_are_aligned_as_keras_does_and_gradient_keeps_the_prediction_shape(cls, true_shape, pred_shape):
    y_true, y_pred = data(true_shape)[0], data(pred_shape, seed=1)[1]
    assert_matches_keras(cls(), getattr(keras.losses, cls.__name__)(), y_true, y_pred)
    gradient = cls().gradient(y_true, y_pred)
    assert gradient.shape == pred_shape and gradient.dtype == np.float32
    assert_gradient_matches_finite_differences(cls(), y_true, y_pred)


@pytest.mark.parametrize("weights", [np.array([[1.0, 0.0, 2.0], [0.5, 1.0, 3.0]], "float32"),
                                     np.array([[2.0], [0.5]], "float32")], ids=["per step", "per sample"])
@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "mean_with_sample_weight", None])
def test_sequence_losses_weighted_per_step_or_per_sample(weights, reduction):
    y_true, y_pred = data((2, 3, 4))
    ours, theirs = MeanSquaredError(reduction=reduction), keras.losses.MeanSquaredError(reduction=reduction)
    assert_matches_keras(ours, theirs, y_true, y_pred, weights)
    assert_gradient_matches_finite_differences(ours, y_true, y_pred, weights)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cosine_similarity_along_any_axis(axis):
    y_true, y_pred = data((2, 3, 4))
    ours, theirs = CosineSimilarity(axis=axis, reduction=None), keras.losses.CosineSimilarity(axis=axis, reduction=None)
    assert_matches_keras(ours, theirs, y_true, y_pred)
    assert_gradient_matches_finite_differences(CosineSimilarity(axis=axis), y_true, y_pred)


def test_cosine_similarity_of_a_zero_vector_is_zero_with_a_finite_gradient():
    """Below norm 1e-7 the prediction is divided by 1e-7, so the loss is linear
    there: our gradient is that slope, where jax's gradient of Keras is NaN."""
    y_true, y_pred = data((2, 3))
    y_pred[0] = 0.0
    ours, theirs = CosineSimilarity(reduction=None), keras.losses.CosineSimilarity(reduction=None)
    assert_matches_keras(ours, theirs, y_true, y_pred)
    gradient = CosineSimilarity().gradient(y_true, y_pred)
    unit_true = y_true[0] / np.linalg.norm(y_true[0])
    np.testing.assert_allclose(gradient[0], -unit_true / 1e-7 / 2, rtol=1e-5)
    expected = jax.grad(lambda p: keras.losses.CosineSimilarity()(y_true, p))(y_pred)
    assert np.isnan(expected[0]).all()
    np.testing.assert_allclose(gradient[1], expected[1], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("cls, kwargs", [(Huber, {"delta": 0.3}), (CosineSimilarity, {})], ids=["Huber", "Cosine"])
def test_gradient_matches_jax_gradient_of_the_keras_loss(cls, kwargs):
    y_true, y_pred = data()
    weights = WEIGHTS["per sample"]
    theirs = getattr(keras.losses, cls.__name__)(**kwargs)
    expected = jax.grad(lambda p: theirs(y_true, p, sample_weight=weights))(y_pred)
    received = cls(**kwargs).gradient(y_true, y_pred, weights)
    assert received.dtype == np.float32
    np.testing.assert_allclose(received, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("ours, theirs, kwargs", [
    (mean_squared_error, keras.losses.mean_squared_error, {}),
    (mean_absolute_error, keras.losses.mean_absolute_error, {}),
    (huber, keras.losses.huber, {"delta": 0.5}),
    (cosine_similarity, keras.losses.cosine_similarity, {"axis": 0}),
    (log_cosh, keras.losses.log_cosh, {}),
])
def test_functions_return_keras_per_sample_values(ours, theirs, kwargs):
    y_true, y_pred = data((2, 3, 4))
    received = ours(y_true, y_pred, **kwargs)
    expected = np.asarray(theirs(y_true, y_pred, **kwargs))
    assert received.shape == expected.shape and received.dtype == np.float32
    np.testing.assert_allclose(received, expected, rtol=1e-6, atol=1e-7)


def test_integer_inputs_compute_in_float32():
    y_true, y_pred = np.array([[1, 2], [3, 4]]), np.array([[2, 2], [1, 4]])
    assert MeanSquaredError()(y_true, y_pred) == np.float32(1.25)
    assert MeanSquaredError()(y_true, y_pred).dtype == np.float32
    assert mean_absolute_error(y_true, y_pred).dtype == np.float32
