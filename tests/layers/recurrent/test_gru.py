import numpy as np
import pytest

from layers.recurrent import GRU
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

OPTIONS = [{}, {"return_sequences": True}, {"return_state": True}, {"go_backwards": True, "return_sequences": True},
           {"use_bias": False}, {"activation": "softsign", "recurrent_activation": "hard_sigmoid"}]


def sequences(shape=(3, 5, 4), seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("options", OPTIONS)
def test_forward_matches_keras(options, reset_after, random_weights):
    x = sequences()
    theirs = random_weights(keras.layers.GRU(6, reset_after=reset_after, **options), x.shape)
    out = assert_matches_keras(GRU(6, reset_after=reset_after, **options), theirs, x)
    assert all(o.dtype == np.float32 for o in out)


@pytest.mark.parametrize("reset_after", [True, False])
def test_initial_state_matches_keras_in_both_call_forms(reset_after, random_weights):
    x, h0 = sequences(), sequences((3, 6), seed=1)
    theirs = random_weights(keras.layers.GRU(6, reset_after=reset_after, return_sequences=True), x.shape)
    ours = GRU(6, reset_after=reset_after, return_sequences=True)
    assert_matches_keras(ours, theirs, x, call_kwargs={"initial_state": [h0]})
    np.testing.assert_allclose(ours([x, h0]), np.asarray(theirs(x, initial_state=h0)), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("options", OPTIONS)
def test_gradients(options, reset_after, random_weights):
    layer = random_weights(GRU(3, reset_after=reset_after, **options), (2, 4, 3))
    assert_gradients(layer, sequences((2, 4, 3), seed=3).astype("float64"))


@pytest.mark.parametrize("reset_after", [True, False])
def test_gradients_reach_the_initial_state_in_the_list_form(reset_after, random_weights):
    layer = random_weights(GRU(3, reset_after=reset_after, return_state=True), (2, 4, 3))
    report = assert_gradients(layer, [sequences((2, 4, 3)).astype("float64"), sequences((2, 3), 1).astype("float64")])
    assert "input 1" in report.errors


@pytest.mark.parametrize("reset_after, bias_shape", [(True, (2, 18)), (False, (18,))])
def test_weights_follow_keras_layout(reset_after, bias_shape):
    ours, theirs = GRU(6, reset_after=reset_after), keras.layers.GRU(6, reset_after=reset_after)
    ours.build((None, 7, 3))
    theirs.build((None, 7, 3))
    assert [w.name for w in ours.weights] == [w.name for w in theirs.weights] == ["kernel", "recurrent_kernel", "bias"]
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    assert ours.bias.shape == bias_shape


def test_config_round_trip_and_symbolic_shapes():
    clone = assert_config_round_trip(GRU(4, reset_after=False, recurrent_dropout=0.5, return_state=True, seed=1))
    assert clone.reset_after is False and clone.recurrent_dropout == 0.5
    assert set(keras.layers.GRU(4).get_config()) - set(clone.get_config()) == {"activity_regularizer"}
    assert_symbolic_shape_matches_eager(GRU(4, return_sequences=True, return_state=True), sequences())
    assert_symbolic_shape_matches_eager(GRU(4, reset_after=False), [sequences(), sequences((3, 4))])
