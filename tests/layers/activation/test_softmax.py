import numpy as np
import pytest

from engine import Input, Model
from layers.activation import Softmax
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


def _x(shape=(2, 3, 4), dtype="float32"):
    return (np.random.default_rng(0).normal(size=shape) * 2).astype(dtype)


@pytest.mark.parametrize("axis", [-1, 1, 0, [1, 2], (0, 2)])
def test_forward_matches_keras(axis):
    out = assert_matches_keras(Softmax(axis), keras.layers.Softmax(axis), _x())[0]
    assert out.dtype == np.float32


@pytest.mark.parametrize("mask", [
    np.random.default_rng(1).random((2, 3, 4)) > 0.4,          # full-shape boolean mask
    (np.random.default_rng(2).random((2, 1, 4)) > 0.4),        # broadcast over axis 1
    np.random.default_rng(3).random((3, 4)).astype("float32"),  # numeric: kept where > 0.5
    np.array([[[True, True, True, True]], [[False, False, False, False]]]),  # a fully masked sample
])
def test_mask_matches_keras(mask):
    out = assert_matches_keras(Softmax(), keras.layers.Softmax(), _x(), call_kwargs={"mask": mask})[0]
    keep = mask if mask.dtype == bool else mask > 0.5
    assert (np.broadcast_to(out, (2, 3, 4))[~np.broadcast_to(keep, (2, 3, 4))] == 0).all()


@pytest.mark.parametrize("axis", [-1, 1, [1, 2]])
def test_gradients(axis):
    assert_gradients(Softmax(axis), _x(dtype="float64"))


def test_gradients_with_a_symbolic_mask():
    x, m = Input(shape=(3, 4)), Input(shape=(1, 4), dtype="bool")
    model = Model([x, m], Softmax()(x, mask=m))
    mask = np.array([[[True, False, True, True]], [[False, False, False, False]]])
    assert_gradients(model, [_x(dtype="float64"), mask])
    np.testing.assert_array_equal(model([_x(), mask])[1], 0)


def test_config_round_trip_and_symbolic_shape():
    assert assert_config_round_trip(Softmax(axis=[1, 2], name="s")).axis == [1, 2]
    assert_symbolic_shape_matches_eager(Softmax(), _x())
    assert Softmax().supports_masking and keras.layers.Softmax().supports_masking


def test_errors():
    with pytest.raises(ValueError, match="`axis` to be an integer or a list of integers. Received: axis='last'"):
        Softmax("last")
    with pytest.raises(ValueError, match=r"has axis=2, out of range for its input of rank 2 \(shape \(None, 3\)\)"):
        Softmax(2)(Input(shape=(3,)))
    with pytest.raises(ValueError, match=r"broadcastable to `inputs`.*inputs.shape=\(2, 3, 4\), mask.shape=\(2, 3\)"):
        Softmax()(_x(), mask=np.ones((2, 3), bool))
    with pytest.raises(ValueError, match=r"mask.shape=\(1, 2, 3, 4\)"):
        Softmax()(_x(), mask=np.ones((1, 2, 3, 4), bool))
    with pytest.raises(ValueError, match=r"inputs.shape=\(None, 3, 4\), mask.shape=\(None, 2, 4\)"):
        Softmax()(Input(shape=(3, 4)), mask=Input(shape=(2, 4)))


def test_mask_propagated_from_an_embedding_broadcasts_from_the_right_as_in_keras():
    # The (batch, timesteps) mask an Embedding makes reaches Softmax's mask= argument, and is
    # aligned with the last axes of the (batch, timesteps, features) logits: Keras 3 raises
    # the same error (only a batch of 1 with timesteps == features would broadcast).
    from layers.embedding import Embedding

    ids = np.array([[1, 0, 2], [0, 3, 4]])
    inputs = Input(shape=(3,), dtype="int32")
    model = Model(inputs, Softmax()(Embedding(10, 3, mask_zero=True)(inputs)))
    keras_inputs = keras.Input(shape=(3,), dtype="int32")
    keras_outputs = keras.layers.Softmax()(keras.layers.Embedding(10, 3, mask_zero=True)(keras_inputs))
    message = r"inputs.shape=\(2, 3, 3\), mask.shape=\(2, 3\)"
    with pytest.raises(ValueError, match=message):
        model(ids)
    with pytest.raises(ValueError, match=message):
        keras.Model(keras_inputs, keras_outputs)(ids)
