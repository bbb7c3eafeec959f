import math

import numpy as np
import pytest

import engine.keras_random as seed_generator  # where SeedGenerator draws
from layers.regularization import GaussianDropout
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 3)])
def test_inference_is_the_identity_as_in_keras(shape):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    out = assert_matches_keras(GaussianDropout(0.3), keras.layers.GaussianDropout(0.3), x)[0]
    np.testing.assert_array_equal(out, x)


def test_training_noise_statistics():
    x = np.full((300, 400), 2.0, "float32")
    out = GaussianDropout(0.2, seed=0)(x, training=True)
    assert out.dtype == np.float32
    factor = (out / x).astype(np.float64)
    assert factor.mean() == pytest.approx(1.0, abs=0.005)
    assert factor.std() == pytest.approx(math.sqrt(0.2 / 0.8), rel=0.01)
    theirs = np.asarray(keras.layers.GaussianDropout(0.2, seed=0)(x, training=True)) / x
    assert theirs.std() == pytest.approx(factor.std(), rel=0.02)


def test_seeds_and_backward_uses_the_forward_noise():
    x = np.random.default_rng(1).normal(size=(4, 5)).astype("float32")
    layer = GaussianDropout(0.4, seed=3)
    out, cache = layer.forward(x)
    np.testing.assert_array_equal(out, GaussianDropout(0.4, seed=3)(x, training=True))
    assert not np.array_equal(out, layer(x, training=True))
    grad = np.ones_like(x)
    np.testing.assert_allclose(layer.backward(cache, grad)[0], out / x, rtol=1e-5)


def test_gradients(monkeypatch):
    monkeypatch.setattr(seed_generator, "random_generator", lambda seed=None: np.random.default_rng(0))
    x = np.random.default_rng(1).normal(size=(3, 4))
    assert_gradients(GaussianDropout(0.5), x, training=True)
    assert_gradients(GaussianDropout(0.5), x)


def test_config_round_trip_and_symbolic_shape():
    assert_config_round_trip(GaussianDropout(0.2, seed=4, name="gd"))
    assert_symbolic_shape_matches_eager(GaussianDropout(0.2), np.ones((2, 3), "float32"))
    assert GaussianDropout(0.2).supports_masking and keras.layers.GaussianDropout(0.2).supports_masking


def test_errors():
    for rate in (-0.1, 1.0, "0.1"):
        with pytest.raises(ValueError, match=rf"Expected a float value in \[0, 1\). Received: rate={rate!r}"):
            GaussianDropout(rate)
