import numpy as np
import pytest

from layers.recurrent import SimpleRNN
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

OPTIONS = [{}, {"return_sequences": True}, {"return_state": True}, {"go_backwards": True},
           {"go_backwards": True, "return_sequences": True}, {"use_bias": False}, {"activation": "sigmoid"}]


def sequences(shape=(3, 5, 4), seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


@pytest.mark.parametrize("options", OPTIONS)
def test_forward_matches_keras(options, random_weights):
    x = sequences()
    theirs = random_weights(keras.layers.SimpleRNN(6, **options), x.shape)
    out = assert_matches_keras(SimpleRNN(6, **options), theirs, x)
    assert all(o.dtype == np.float32 for o in out)


def test_initial_state_matches_keras_in_both_call_forms(random_weights):
    x, h0 = sequences(), sequences((3, 6), seed=1)
    theirs = random_weights(keras.layers.SimpleRNN(6, return_state=True), x.shape)
    ours = SimpleRNN(6, return_state=True)
    assert_matches_keras(ours, theirs, x, call_kwargs={"initial_state": h0})
    for got, want in zip(ours([x, h0]), theirs(x, initial_state=h0)):
        np.testing.assert_allclose(got, np.asarray(want), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("options", OPTIONS)
def test_gradients(options, random_weights):
    layer = random_weights(SimpleRNN(3, **options), (2, 4, 3))
    assert_gradients(layer, sequences((2, 4, 3), seed=3).astype("float64"))


def test_gradients_reach_the_initial_state_in_the_list_form(random_weights):
    layer = random_weights(SimpleRNN(3, return_sequences=True), (2, 4, 3))
    report = assert_gradients(layer, [sequences((2, 4, 3)).astype("float64"), sequences((2, 3), 1).astype("float64")])
    assert "input 1" in report.errors


def test_weights_follow_keras_layout():
    ours, theirs = SimpleRNN(6), keras.layers.SimpleRNN(6)
    ours.build((None, 7, 3))
    theirs.build((None, 7, 3))
    assert [w.name for w in ours.weights] == [w.name for w in theirs.weights] == ["kernel", "recurrent_kernel", "bias"]
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights] == [(3, 6), (6, 6), (6,)]


def test_config_round_trip_and_symbolic_shapes():
    clone = assert_config_round_trip(SimpleRNN(4, activation="relu", unroll=True, kernel_constraint="max_norm"))
    assert clone.unroll and clone.activation.__name__ == "relu"
    assert set(keras.layers.SimpleRNN(4).get_config()) - set(clone.get_config()) == {"activity_regularizer"}
    assert_symbolic_shape_matches_eager(SimpleRNN(4, return_sequences=True, return_state=True), sequences())
