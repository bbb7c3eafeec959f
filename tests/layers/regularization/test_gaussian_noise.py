import numpy as np
import pytest

import engine.keras_random as seed_generator  # where SeedGenerator draws
from engine.utils import set_random_seed
from layers.regularization import GaussianNoise
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 3)])
def test_inference_is_the_identity_as_in_keras(shape):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    np.testing.assert_array_equal(assert_matches_keras(GaussianNoise(0.5), keras.layers.GaussianNoise(0.5), x)[0], x)


def test_training_noise_statistics():
    x = np.full((300, 400), 2.0, "float32")
    out = GaussianNoise(0.3, seed=0)(x, training=True)
    assert out.dtype == np.float32
    noise = (out - x).astype(np.float64)
    assert noise.mean() == pytest.approx(0.0, abs=0.005)
    assert noise.std() == pytest.approx(0.3, rel=0.01)
    theirs = np.asarray(keras.layers.GaussianNoise(0.3, seed=0)(x, training=True)) - x
    assert theirs.std() == pytest.approx(noise.std(), rel=0.02)
    np.testing.assert_array_equal(GaussianNoise(0.0)(x, training=True), x)


def test_seeds():
    x = np.zeros((4, 5), "float32")
    layer = GaussianNoise(0.1, seed=3)
    first = layer(x, training=True)
    np.testing.assert_array_equal(first, GaussianNoise(0.1, seed=3)(x, training=True))
    assert not np.array_equal(first, layer(x, training=True))
    set_random_seed(2)
    unseeded = GaussianNoise(0.1)(x, training=True)
    set_random_seed(2)
    np.testing.assert_array_equal(unseeded, GaussianNoise(0.1)(x, training=True))


def test_gradients(monkeypatch):
    monkeypatch.setattr(seed_generator, "random_generator", lambda seed=None: np.random.default_rng(0))
    x = np.random.default_rng(1).normal(size=(3, 4))
    assert_gradients(GaussianNoise(0.5), x, training=True)
    assert_gradients(GaussianNoise(0.5), x)


def test_config_round_trip_and_symbolic_shape():
    assert_config_round_trip(GaussianNoise(0.2, seed=4, name="noise"))
    assert_symbolic_shape_matches_eager(GaussianNoise(0.2), np.ones((2, 3), "float32"))
    assert GaussianNoise(0.2).supports_masking and keras.layers.GaussianNoise(0.2).supports_masking


def test_errors():
    for stddev in (-0.1, 1.5, None):
        with pytest.raises(ValueError, match=rf"Expected a float value between 0 and 1. Received: stddev={stddev!r}"):
            GaussianNoise(stddev)
    with pytest.raises(ValueError, match="Expected `seed` to be an integer or None"):
        GaussianNoise(0.1, seed=0.5)
