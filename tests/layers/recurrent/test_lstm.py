import numpy as np
import pytest

from engine import Input
from layers.recurrent import LSTM
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

OPTIONS = [{}, {"return_sequences": True}, {"return_state": True}, {"go_backwards": True},
           {"go_backwards": True, "return_sequences": True, "return_state": True}, {"use_bias": False},
           {"activation": "relu", "recurrent_activation": "hard_sigmoid", "return_sequences": True}]


def sequences(shape=(3, 5, 4), seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


@pytest.mark.parametrize("options", OPTIONS)
def test_forward_matches_keras(options, random_weights):
    x = sequences()
    theirs = random_weights(keras.layers.LSTM(6, **options), x.shape)
    out = assert_matches_keras(LSTM(6, **options), theirs, x)
    assert all(o.dtype == np.float32 for o in out)


def test_initial_state_matches_keras_in_both_call_forms(random_weights):
    x = sequences()
    h0, c0 = sequences((3, 6), seed=1), sequences((3, 6), seed=2)
    theirs = random_weights(keras.layers.LSTM(6, return_sequences=True, return_state=True), x.shape)
    ours = LSTM(6, return_sequences=True, return_state=True)
    assert_matches_keras(ours, theirs, x, call_kwargs={"initial_state": [h0, c0]})
    expected = theirs(x, initial_state=[h0, c0])
    for got, want in zip(ours([x, h0, c0]), expected):
        np.testing.assert_allclose(got, np.asarray(want), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("options", OPTIONS)
def test_gradients(options, random_weights):
    layer = random_weights(LSTM(3, **options), (2, 4, 3))
    assert_gradients(layer, sequences((2, 4, 3), seed=3).astype("float64"))


def test_gradients_reach_the_initial_states_in_the_list_form(random_weights):
    layer = random_weights(LSTM(3, return_sequences=True, return_state=True), (2, 4, 3))
    x, h0, c0 = (sequences(shape, seed) for seed, shape in enumerate([(2, 4, 3), (2, 3), (2, 3)]))
    report = assert_gradients(layer, [x.astype("float64"), h0.astype("float64"), c0.astype("float64")])
    assert set(report.errors) >= {"input 0", "input 1", "input 2"}


def test_weights_follow_keras_layout_and_forget_bias():
    ours, theirs = LSTM(5), keras.layers.LSTM(5)
    ours.build((None, 7, 3))
    theirs.build((None, 7, 3))
    assert [w.name for w in ours.weights] == [w.name for w in theirs.weights] == ["kernel", "recurrent_kernel", "bias"]
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights] == [(3, 20), (5, 20), (20,)]
    np.testing.assert_array_equal(ours.bias.value, np.asarray(theirs.cell.bias))
    assert ours.bias.value[5:10].tolist() == [1.0] * 5
    plain = LSTM(5, unit_forget_bias=False)
    plain.build((None, 7, 3))
    assert not plain.bias.value.any()


def test_config_round_trip_and_symbolic_shapes():
    layer = LSTM(4, recurrent_activation="hard_sigmoid", unit_forget_bias=False, dropout=0.25, seed=3,
                 recurrent_regularizer="l2", go_backwards=True, return_state=True, name="enc")
    clone = assert_config_round_trip(layer)
    assert clone.recurrent_activation.__name__ == "hard_sigmoid" and clone.go_backwards and clone.seed == 3
    # Every Keras config key is kept (activity_regularizer only when set).
    assert set(keras.layers.LSTM(4).get_config()) - set(layer.get_config()) == {"activity_regularizer"}
    assert_symbolic_shape_matches_eager(LSTM(4, return_sequences=True, return_state=True), sequences())
    assert_symbolic_shape_matches_eager(LSTM(4), [sequences(), sequences((3, 4)), sequences((3, 4))])
    assert LSTM(4, return_state=True)(Input((None, 3)))[2].shape == (None, 4)
