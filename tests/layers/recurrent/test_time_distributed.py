import numpy as np
import pytest

from engine import Input, Model
from layers import Dense
from layers.embedding import Embedding
from layers.normalization import LayerNormalization
from layers.recurrent import LSTM, TimeDistributed
from layers.reshaping import Flatten
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


def sequences(shape=(3, 5, 4), seed=0, dtype="float32"):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


@pytest.mark.parametrize("shape", [(3, 5, 4), (2, 3, 2, 4)])
def test_dense_matches_keras(shape, random_weights):
    theirs = random_weights(keras.layers.TimeDistributed(keras.layers.Dense(3, activation="tanh")), shape)
    out = assert_matches_keras(TimeDistributed(Dense(3, activation="tanh")), theirs, sequences(shape))[0]
    assert out.shape == shape[:-1] + (3,)


def test_layer_normalization_and_flatten_match_keras(random_weights):
    x = sequences((2, 3, 4, 5))
    theirs = random_weights(keras.layers.TimeDistributed(keras.layers.LayerNormalization(axis=[-2, -1])), x.shape)
    assert_matches_keras(TimeDistributed(LayerNormalization(axis=[-2, -1])), theirs, x)
    flat = assert_matches_keras(TimeDistributed(Flatten()), keras.layers.TimeDistributed(keras.layers.Flatten()), x)
    assert flat[0].shape == (2, 3, 20)


def test_weights_are_the_wrapped_layers_as_in_keras():
    ours, theirs = TimeDistributed(Dense(3)), keras.layers.TimeDistributed(keras.layers.Dense(3))
    ours.build((None, 5, 4))
    theirs.build((None, 5, 4))
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights] == [(4, 3), (3,)]
    assert ours.weights == ours.layer.weights


@pytest.mark.parametrize("layer", [lambda: Dense(3, activation="tanh"), lambda: LayerNormalization(axis=[-2, -1])])
def test_gradients(layer, random_weights):
    wrapped = random_weights(TimeDistributed(layer()), (2, 3, 2, 4))
    report = assert_gradients(wrapped, sequences((2, 3, 2, 4), seed=1, dtype="float64"))
    assert "input 0" in report.errors and len(report.errors) == 3


def test_masks_pass_through_to_the_next_recurrent_layer_as_in_keras():
    tokens = np.array([[1, 2, 0, 0], [3, 0, 0, 0]], "int32")
    k_tokens = keras.Input((4,), dtype="int32")
    k_out = keras.layers.LSTM(2)(keras.layers.TimeDistributed(keras.layers.Dense(3))(
        keras.layers.Embedding(6, 4, mask_zero=True)(k_tokens)))
    theirs = keras.Model(k_tokens, k_out)
    rng = np.random.default_rng(0)
    theirs.set_weights([rng.uniform(-0.5, 0.5, np.shape(w)).astype("float32") for w in theirs.get_weights()])
    ids = Input((4,), dtype="int32")
    ours = Model(ids, LSTM(2)(TimeDistributed(Dense(3))(Embedding(6, 4, mask_zero=True)(ids))))
    ours.set_weights(theirs.get_weights())
    np.testing.assert_allclose(ours(tokens), np.asarray(theirs(tokens)), atol=1e-5, rtol=1e-5)
    mask = tokens != 0
    assert TimeDistributed(Dense(3)).compute_mask(sequences((2, 4, 4)), mask) is mask


def test_a_wrapped_layer_that_takes_a_mask_gets_it_folded(random_weights):
    x = sequences((2, 3, 4, 2))
    mask = np.array([[[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 1]], [[0, 1, 1, 1], [1, 1, 1, 0], [1, 0, 1, 0]]], bool)
    inner = random_weights(LSTM(3), (6, 4, 2))
    expected = inner(x.reshape(6, 4, 2), mask=mask.reshape(6, 4)).reshape(2, 3, 3)
    np.testing.assert_allclose(TimeDistributed(inner)(x, mask=mask), expected, rtol=1e-6)


def test_config_round_trip_and_symbolic_shape():
    clone = assert_config_round_trip(TimeDistributed(Dense(3, activation="relu", name="proj"), name="td"))
    assert isinstance(clone.layer, Dense) and clone.layer.name == "proj" and clone.layer.units == 3
    assert_symbolic_shape_matches_eager(TimeDistributed(Dense(2)), sequences())
    assert TimeDistributed(Flatten())(Input((None, 3, 2))).shape == (None, None, 6)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="with a `Layer` instance. Received: 'dense'"):
        TimeDistributed("dense")
    with pytest.raises(ValueError, match=r"'td' \(TimeDistributed\) expects inputs with at least 3 dim.*\(3, 4\)"):
        TimeDistributed(Dense(2), name="td")(np.ones((3, 4), "float32"))
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        TimeDistributed(Dense(2))(Input((4,)))
