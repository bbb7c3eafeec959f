"""hard_sigmoid, hard_silu and its alias hard_swish: Keras 3's formulas (relu6(x + 3) / 6),
values equal to Keras' bit for bit, gradients against finite differences and jax's autodiff."""

import jax
import numpy as np
import pytest

from engine import Input, Model
from layers import Activation, Dense, activations
from tests.layers.oracle import assert_gradients, keras

NAMES = ["hard_sigmoid", "hard_silu", "hard_swish"]


def _x(dtype="float32"):
    # Both kinks (-3 and 3) and values on either side of them, and a spread of others.
    grid = np.array([-7.0, -3.0, -2.999, -1.5, 0.0, 0.25, 2.999, 3.0, 3.001, 8.0])
    return np.concatenate([grid, np.random.default_rng(0).normal(scale=3.0, size=30)]).astype(dtype)


@pytest.mark.parametrize("name", NAMES)
def test_values_equal_keras_exactly(name):
    x = _x()
    ours = getattr(activations, name)(x)
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours, np.asarray(keras.activations.get(name)(x)))


def test_hard_swish_is_hard_silu_and_serializes_as_keras_does():
    assert activations.get("hard_swish") is activations.hard_silu is activations.hard_swish
    assert activations.serialize(activations.get("hard_swish")) == keras.activations.serialize(
        keras.activations.get("hard_swish"))
    assert activations.get(activations.serialize(activations.hard_sigmoid)) is activations.hard_sigmoid


@pytest.mark.parametrize("name", NAMES)
def test_gradient_equals_jax_autodiff_including_the_kinks(name):
    x = _x()
    g = np.random.default_rng(1).normal(size=x.shape).astype("float32")
    function = getattr(activations, name)
    theirs = jax.vjp(getattr(jax.nn, name), x)[1](g)[0]
    np.testing.assert_allclose(function.gradient(x, function(x), g), np.asarray(theirs), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["hard_sigmoid", "hard_silu"])
def test_gradient_matches_finite_differences_in_a_layer(name):
    x = np.random.default_rng(2).normal(scale=3.0, size=(4, 5))
    x = x[np.abs(np.abs(x) - 3.0) > 1e-3].reshape(-1, 1)  # away from the kinks, where the slope jumps
    assert_gradients(Dense(3, activation=name), x)
    assert_gradients(Activation(name), x)


def test_a_model_with_hard_swish_matches_keras():
    x = Input(shape=(3,))
    ours = Model(x, Activation("hard_swish")(Dense(4)(x)))
    k_in = keras.Input(shape=(3,))
    theirs = keras.Model(k_in, keras.layers.Activation("hard_swish")(keras.layers.Dense(4)(k_in)))
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    data = np.random.default_rng(3).normal(scale=3.0, size=(6, 3)).astype("float32")
    np.testing.assert_allclose(ours.predict(data, verbose=0), np.asarray(theirs(data)), rtol=1e-6, atol=1e-6)
    assert ours.layers[-1].get_config()["activation"] == "hard_silu"


def test_a_typo_suggests_the_hard_activation():
    with pytest.raises(ValueError, match="Did you mean 'hard_silu'"):
        activations.get("hard_slu")


def test_flops_one_per_element():
    assert activations.hard_silu.flops(10) == 10 and activations.hard_sigmoid.flops(10) == 10
