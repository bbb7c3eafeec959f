import numpy as np
import pytest

import engine.keras_random as seed_generator  # where SeedGenerator draws
from engine import Input, Model
from engine.utils import set_random_seed
from layers.core import Dropout
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.fixture
def frozen_draws(monkeypatch):
    """Every draw of a layer without a seed starts from the same state, so that the
    finite differences of gradient_check see the same noise in every forward pass."""
    monkeypatch.setattr(seed_generator, "random_generator", lambda seed=None: np.random.default_rng(0))


@pytest.mark.parametrize("shape, rate, noise_shape", [
    ((4, 3), 0.5, None), ((2, 5, 3), 0.5, None), ((2, 5, 3), 0.2, (None, 1, 3)), ((4, 3), 0.0, None),
])
def test_inference_is_the_identity_as_in_keras(shape, rate, noise_shape):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    out = assert_matches_keras(Dropout(rate, noise_shape), keras.layers.Dropout(rate, noise_shape), x)[0]
    np.testing.assert_array_equal(out, x)


def test_training_statistics_and_scaling():
    x = np.ones((200, 500), "float32")
    out = Dropout(0.3, seed=0)(x, training=True)
    assert out.dtype == np.float32
    dropped = out == 0
    assert dropped.mean() == pytest.approx(0.3, abs=0.01)
    np.testing.assert_array_equal(out[~dropped], np.float32(1 / 0.7))
    assert out.mean() == pytest.approx(1.0, abs=0.02)


def test_kept_values_are_scaled_as_keras_scales_them():
    x = np.random.default_rng(1).normal(size=(6, 8)).astype("float32")
    ours = Dropout(0.4, seed=1)(x, training=True)
    theirs = np.asarray(keras.layers.Dropout(0.4, seed=1)(x, training=True))
    for out in (ours, theirs):
        kept = out != 0
        np.testing.assert_allclose(out[kept], x[kept] / 0.6, rtol=1e-6)


def test_same_seed_same_mask_and_successive_masks_differ():
    x = np.ones((8, 16), "float32")
    first, second = Dropout(0.5, seed=3), Dropout(0.5, seed=3)
    a = first(x, training=True)
    np.testing.assert_array_equal(a, second(x, training=True))
    assert not np.array_equal(a, first(x, training=True))
    assert not np.array_equal(a, Dropout(0.5, seed=4)(x, training=True))


def test_global_seed_makes_unseeded_masks_reproducible():
    x = np.ones((8, 16), "float32")
    layer = Dropout(0.5)
    set_random_seed(7)
    a = layer(x, training=True)
    set_random_seed(7)
    np.testing.assert_array_equal(a, layer(x, training=True))


def test_noise_shape_broadcasts_the_mask():
    x = np.ones((4, 6, 5), "float32")
    out = Dropout(0.5, noise_shape=(None, 1, 5), seed=2)(x, training=True)
    np.testing.assert_array_equal(out, np.broadcast_to(out[:, :1, :], x.shape))
    assert 0 < (out == 0).mean() < 1
    out = Dropout(0.5, noise_shape=[4, 6, 1], seed=2)(x, training=True)
    np.testing.assert_array_equal(out, np.broadcast_to(out[:, :, :1], x.shape))


def test_backward_applies_the_forward_mask():
    layer = Dropout(0.25, noise_shape=(None, 1), seed=5)
    x = np.random.default_rng(0).normal(size=(6, 4)).astype("float32")
    out, cache = layer.forward(x, training=True)
    grad = np.random.default_rng(1).normal(size=x.shape).astype("float32")
    grad_x, grad_w = layer.backward(cache, grad)
    assert grad_w == {} and grad_x.dtype == np.float32
    np.testing.assert_allclose(grad_x, np.where(out == 0, 0, grad / 0.75), rtol=1e-6)
    out, cache = layer.forward(x, training=False)
    assert out is x and layer.backward(cache, grad)[0] is grad


@pytest.mark.parametrize("noise_shape", [None, (None, 1, 3)])
def test_gradients(frozen_draws, noise_shape):
    x = np.random.default_rng(1).normal(size=(3, 2, 3))
    assert_gradients(Dropout(0.5, noise_shape), x, training=True)
    assert_gradients(Dropout(0.5, noise_shape), x)


def test_in_a_model_training_and_inference():
    inputs = Input(shape=(10,))
    model = Model(inputs, Dropout(0.5, seed=0)(inputs))
    x = np.ones((4, 10), "float32")
    np.testing.assert_array_equal(model(x), x)
    (out,), tape = model.plan.forward([x], training=True)
    (grad,), _ = model.plan.backward(tape, [np.ones_like(x)])
    np.testing.assert_array_equal(grad, out)  # d(sum(out))/dx is the scaled mask, here equal to out


def test_config_round_trip_and_symbolic_shape():
    clone = assert_config_round_trip(Dropout(0.3, noise_shape=(None, 1, 4), seed=9, name="drop"))
    assert clone.noise_shape == (None, 1, 4) and clone.seed == 9
    assert_symbolic_shape_matches_eager(Dropout(0.3), np.ones((2, 3, 4), "float32"))
    assert Dropout(0.3).supports_masking and keras.layers.Dropout(0.3).supports_masking


def test_errors():
    for rate in (1.0, -0.1, "0.5", None):
        with pytest.raises(ValueError, match=rf"Expected a float value in \[0, 1\). Received: rate={rate!r}"):
            Dropout(rate)
    with pytest.raises(ValueError, match="Invalid value received for argument `noise_shape`.*noise_shape='abc'"):
        Dropout(0.5, noise_shape="abc")
    with pytest.raises(ValueError, match=r"Received: noise_shape=\(0, 2\)"):
        Dropout(0.5, noise_shape=(0, 2))
    with pytest.raises(ValueError, match="Expected `seed` to be an integer or None. Received: seed='x'"):
        Dropout(0.5, seed="x")
    with pytest.raises(ValueError, match=r"noise_shape=\(None, 1\) of rank 2, but received inputs of rank 3"):
        Dropout(0.5, noise_shape=(None, 1))(Input(shape=(2, 3)))
    with pytest.raises(ValueError, match=r"noise_shape=\(None, 2\) does not broadcast to the input shape \(None, 3\)"):
        Dropout(0.5, noise_shape=(None, 2))(Input(shape=(3,)))
