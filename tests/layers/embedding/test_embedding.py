import numpy as np
import pytest

from engine import Input, Model
from engine.network.gradient_check import gradient_check
from engine.network.initializers import RandomUniform
from layers.embedding import Embedding
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


def indices(shape, input_dim=7, seed=0):
    return np.random.default_rng(seed).integers(0, input_dim, size=shape).astype("int32")


@pytest.mark.parametrize("shape", [(5,), (2, 4), (2, 3, 2)])
def test_forward_matches_keras(shape):
    out = assert_matches_keras(Embedding(7, 3), keras.layers.Embedding(7, 3), indices(shape))[0]
    assert out.shape == shape + (3,) and out.dtype == np.float32


def test_float_and_int64_indices_are_cast_like_keras():
    x = indices((3, 4))
    for cast in (x.astype("float32"), x.astype("int64"), x.astype("uint8")):
        assert_matches_keras(Embedding(7, 2), keras.layers.Embedding(7, 2), cast)


def test_compute_mask_matches_keras():
    x = indices((3, 4))
    ours, theirs = Embedding(7, 2, mask_zero=True), keras.layers.Embedding(7, 2, mask_zero=True)
    np.testing.assert_array_equal(ours.compute_mask(x), np.asarray(theirs.compute_mask(x)))
    assert Embedding(7, 2).compute_mask(x) is None


@pytest.mark.parametrize("shape", [(6,), (2, 5), (2, 3, 2)])
def test_gradients(shape):
    report = assert_gradients(Embedding(4, 3), indices(shape, input_dim=4))
    assert list(report.errors) == ["embedding/embeddings"]


def test_backward_scatter_adds_repeated_indices():
    layer = Embedding(4, 2)
    layer.build((1, 3))
    _, cache = layer.forward(np.array([[1, 3, 1]]))
    grad_inputs, grads = layer.backward(cache, np.array([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]], "float32"))
    assert grad_inputs is None
    np.testing.assert_array_equal(grads[layer.embeddings], [[0, 0], [6, 8], [0, 0], [3, 4]])


def test_trains_inside_a_model_with_integer_inputs():
    tokens = Input(shape=(3,), dtype="int32")
    model = Model(tokens, Embedding(5, 2)(tokens))
    report = gradient_check(model, indices((2, 3), input_dim=5))
    assert list(report.errors) == ["embedding/embeddings"] and report.max_error < 1e-6


def test_uniform_initializer_is_keras_random_uniform():
    layer = Embedding(50, 8)
    layer.build((None,))
    assert isinstance(layer.embeddings_initializer, RandomUniform)
    values = layer.embeddings.value
    assert values.shape == (50, 8) and values.dtype == np.float32
    assert -0.05 <= values.min() < -0.04 and 0.04 < values.max() <= 0.05


def test_weights_follow_keras_layout():
    ours, theirs = Embedding(6, 3), keras.layers.Embedding(6, 3)
    ours.build((None, 2))
    theirs.build((None, 2))
    assert [w.path for w in ours.weights] == ["embedding/embeddings"]
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]


def test_config_round_trip_and_symbolic_shape():
    layer = Embedding(10, 4, embeddings_regularizer="l2", embeddings_constraint="unit_norm", mask_zero=True,
                      name="emb")
    clone = assert_config_round_trip(layer)
    assert clone.mask_zero and clone.input_dim == 10 and isinstance(clone.embeddings_initializer, RandomUniform)
    assert_symbolic_shape_matches_eager(Embedding(10, 4), indices((2, 3, 2)))


def test_bad_config_and_input_errors():
    with pytest.raises(ValueError, match=r"`input_dim` must be a positive integer. "
                                         r"Received: input_dim=0 \(of type int\)"):
        Embedding(0, 2)
    with pytest.raises(ValueError, match="`output_dim` must be a positive integer. Received: output_dim=True"):
        Embedding(3, True)
    layer = Embedding(5, 2, name="tokens")
    with pytest.raises(ValueError, match=r"Layer 'tokens' \(Embedding\) received index -1, outside its valid "
                                         r"range \[0, 4\] \(input_dim=5\)"):
        layer(np.array([[0, -1, 2]]))
    with pytest.raises(ValueError, match=r"received index 5, outside its valid range \[0, 4\]"):
        layer(np.array([[0, 5, 2]]))
    with pytest.raises(ValueError, match="received index 9"):
        layer.forward(np.array([9]))
    with pytest.raises(TypeError, match="expects integer indices, received an array of dtype str"):
        layer(np.array(["a"]))
