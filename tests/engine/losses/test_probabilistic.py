import jax
import numpy as np
import pytest

from engine.training.losses import (BinaryCrossentropy, CategoricalCrossentropy, KLDivergence, Poisson,
                                    SparseCategoricalCrossentropy, binary_crossentropy, categorical_crossentropy,
                                    kl_divergence, poisson, sparse_categorical_crossentropy)
from tests.engine.losses.oracle import assert_gradient_matches_finite_differences, assert_matches_keras, keras

REDUCTIONS = ["sum_over_batch_size", "sum", "mean_with_sample_weight", None]
WEIGHTS = {
    "no weights": None,
    "per sample": np.array([0.5, 2.0, 0.0, 1.5], "float32"),
    "per sample, trailing axis": np.array([[0.5], [2.0], [0.0], [1.5]], "float32"),
    "scalar": 2.0,
}
FLAVOURS = [{}, {"from_logits": True}, {"label_smoothing": 0.2}, {"from_logits": True, "label_smoothing": 0.2}]
SPARSE_FLAVOURS = [{}, {"from_logits": True}, {"ignore_class": 1}, {"ignore_class": 1, "from_logits": True}]
CASES = ([(BinaryCrossentropy, f) for f in FLAVOURS] + [(CategoricalCrossentropy, f) for f in FLAVOURS]
         + [(SparseCategoricalCrossentropy, f) for f in SPARSE_FLAVOURS] + [(KLDivergence, {}), (Poisson, {})])


def data(cls, from_logits=False, shape=(4, 5), seed=0, **_):
    """Labels and predictions of the kind ``cls`` expects: probabilities kept
    away from the clipping bounds (unnormalized for the categorical losses), or logits."""
    rng = np.random.default_rng(seed)
    if from_logits:
        y_pred = rng.normal(scale=2.0, size=shape)
    elif cls is BinaryCrossentropy:
        y_pred = rng.uniform(0.05, 0.95, size=shape)
    else:
        y_pred = rng.uniform(0.1, 1.0, size=shape)
    if cls is SparseCategoricalCrossentropy:
        y_true = np.resize([1, 0, 4, 1, 2, 3], shape[:-1])
    elif cls is CategoricalCrossentropy:
        y_true = np.eye(shape[-1])[np.resize([1, 0, 4, 2], shape[:-1])]
    elif cls is KLDivergence:
        y_true = rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])
        y_pred = y_pred / y_pred.sum(axis=-1, keepdims=True)
    elif cls is Poisson:
        y_true = rng.poisson(2.0, size=shape)
    else:
        y_true = rng.integers(0, 2, size=shape)
    return y_true.astype("float32"), y_pred.astype("float32")


def name(case):
    cls, kwargs = case
    return cls.__name__ + "".join(f"-{k}={v}" for k, v in kwargs.items())


@pytest.mark.parametrize("weights", WEIGHTS, ids=list(WEIGHTS))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("cls, kwargs", CASES, ids=[name(c) for c in CASES])
def test_value_matches_keras_and_gradient_matches_finite_differences(cls, kwargs, reduction, weights):
    y_true, y_pred = data(cls, **kwargs)
    ours = cls(reduction=reduction, **kwargs)
    theirs = getattr(keras.losses, cls.__name__)(reduction=reduction, **kwargs)
    assert_matches_keras(ours, theirs, y_true, y_pred, WEIGHTS[weights])
    assert_gradient_matches_finite_differences(ours, y_true, y_pred, WEIGHTS[weights])


@pytest.mark.parametrize("cls, kwargs", CASES[1::2], ids=[name(c) for c in CASES[1::2]])
def test_gradient_matches_jax_gradient_of_the_keras_loss(cls, kwargs):
    y_true, y_pred = data(cls, **kwargs)
    weights = WEIGHTS["per sample"]
    theirs = getattr(keras.losses, cls.__name__)(**kwargs)
    expected = jax.grad(lambda p: theirs(y_true, p, sample_weight=weights))(y_pred)
    received = cls(**kwargs).gradient(y_true, y_pred, weights)
    assert received.dtype == np.float32
    np.testing.assert_allclose(received, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("cls", [BinaryCrossentropy, CategoricalCrossentropy, KLDivergence])
def test_probabilities_at_0_and_1_are_clipped_as_keras_clips_them(cls):
    y_true = np.array([[1, 0, 0], [0, 1, 0]], "float32")
    y_pred = np.array([[0.0, 1.0, 0.0], [1e-9, 1.0, 0.3]], "float32")
    assert_matches_keras(cls(reduction=None), getattr(keras.losses, cls.__name__)(reduction=None), y_true, y_pred)
    expected = jax.grad(lambda p: getattr(keras.losses, cls.__name__)()(y_true, p))(y_pred)
    np.testing.assert_allclose(cls().gradient(y_true, y_pred), expected, rtol=1e-5)


@pytest.mark.parametrize("cls", [BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy])
def test_extreme_logits_are_stable_and_gradients_are_activation_minus_labels(cls):
    y_pred = np.array([[100.0, -100.0, 0.0], [-80.0, 90.0, 3.0]], "float32")
    y_true = np.array([1, 0], "float32") if cls is SparseCategoricalCrossentropy else np.eye(3, dtype="float32")[[1, 0]]
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        value = cls(from_logits=True, reduction=None)(y_true, y_pred)
        gradient = cls(from_logits=True, reduction="sum").gradient(y_true, y_pred)
    expected = np.asarray(getattr(keras.losses, cls.__name__)(from_logits=True, reduction=None)(y_true, y_pred))
    np.testing.assert_allclose(value, expected, rtol=1e-6)
    one_hot = np.eye(3, dtype="float32")[[1, 0]]
    if cls is BinaryCrossentropy:
        np.testing.assert_allclose(gradient, (1 / (1 + np.exp(-y_pred.astype("float64"))) - one_hot) / 3, atol=1e-7)
    else:
        softmax = np.exp(y_pred - y_pred.max(-1, keepdims=True))
        np.testing.assert_allclose(gradient, softmax / softmax.sum(-1, keepdims=True) - one_hot, atol=1e-7)


@pytest.mark.parametrize("cls", [BinaryCrossentropy, CategoricalCrossentropy])
def test_axis_argument(cls):
    y_pred = np.random.default_rng(3).uniform(0.1, 0.9, size=(3, 4, 2)).astype("float32")
    y_true = np.moveaxis(np.eye(4, dtype="float32")[[[0, 3], [1, 1], [2, 0]]], -1, 1)
    ours, theirs = cls(axis=1, reduction=None), getattr(keras.losses, cls.__name__)(axis=1, reduction=None)
    assert_matches_keras(ours, theirs, y_true, y_pred)
    assert_gradient_matches_finite_differences(cls(axis=1), y_true, y_pred)


@pytest.mark.parametrize("labels", [np.array([1, 0, 4, 1]), np.array([[1], [0], [4], [1]]),
                                    np.array([1.0, 0.0, 4.0, 1.0])], ids=["int", "trailing axis", "float"])
def test_sparse_labels_of_any_shape_and_dtype(labels):
    _, y_pred = data(SparseCategoricalCrossentropy)
    ours, theirs = SparseCategoricalCrossentropy(), keras.losses.SparseCategoricalCrossentropy()
    assert_matches_keras(ours, theirs, labels, y_pred)
    assert_gradient_matches_finite_differences(ours, labels, y_pred)


@pytest.mark.parametrize("reduction", REDUCTIONS + ["mean", "none"])
def test_ignore_class_on_sequences_with_weights(reduction):
    """The masked losses weigh 0 and the averages run over the others only."""
    y_true, y_pred = data(SparseCategoricalCrossentropy, from_logits=True, shape=(2, 3, 5))
    weights = np.array([[2.0], [0.5]], "float32")
    ours = SparseCategoricalCrossentropy(from_logits=True, ignore_class=1, reduction=reduction)
    theirs = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=1, reduction=reduction)
    for sample_weight in (None, weights):
        assert_matches_keras(ours, theirs, y_true, y_pred, sample_weight)
        assert_gradient_matches_finite_differences(ours, y_true, y_pred, sample_weight)


def test_out_of_range_sparse_labels_raise_naming_the_label_and_the_range():
    _, y_pred = data(SparseCategoricalCrossentropy)
    with pytest.raises(ValueError, match=r"received the label 5, outside the range \[0, 5\) of the 5 classes"):
        SparseCategoricalCrossentropy()(np.array([0, 5, 1, 2]), y_pred)
    with pytest.raises(ValueError, match=r"received the label -1, outside the range \[0, 5\)"):
        SparseCategoricalCrossentropy().gradient(np.array([0, -1, 1, 2]), y_pred)
    value = SparseCategoricalCrossentropy(ignore_class=-1)(np.array([0, -1, 1, 2]), y_pred)
    assert np.isfinite(value)


def test_label_shape_errors_point_to_the_right_loss():
    y_true, y_pred = data(CategoricalCrossentropy)
    with pytest.raises(ValueError, match=r"expects integer labels of shape y_pred.shape\[:-1\].*y_true.shape=\(4, 5\)"
                                         r".*use categorical_crossentropy"):
        SparseCategoricalCrossentropy()(y_true, y_pred)
    with pytest.raises(ValueError, match=r"same shape \(one-hot labels\), received y_true.shape=\(4,\) and "
                                         r"y_pred.shape=\(4, 5\).*use sparse_categorical_crossentropy"):
        CategoricalCrossentropy()(np.array([1, 0, 4, 2]), y_pred)


@pytest.mark.parametrize("ours, theirs, kwargs, cls", [
    (binary_crossentropy, keras.losses.binary_crossentropy, {"from_logits": True, "label_smoothing": 0.1},
     BinaryCrossentropy),
    (categorical_crossentropy, keras.losses.categorical_crossentropy, {"label_smoothing": 0.1},
     CategoricalCrossentropy),
    (sparse_categorical_crossentropy, keras.losses.sparse_categorical_crossentropy, {"ignore_class": 1},
     SparseCategoricalCrossentropy),
    (kl_divergence, keras.losses.kl_divergence, {}, KLDivergence),
    (poisson, keras.losses.poisson, {}, Poisson),
])
def test_functions_return_keras_per_sample_values(ours, theirs, kwargs, cls):
    y_true, y_pred = data(cls, shape=(2, 3, 5), **kwargs)
    received = ours(y_true, y_pred, **kwargs)
    expected = np.asarray(theirs(y_true, y_pred, **kwargs))
    assert received.shape == expected.shape and received.dtype == np.float32
    np.testing.assert_allclose(received, expected, rtol=1e-6, atol=1e-7)
