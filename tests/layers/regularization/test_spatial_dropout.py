import numpy as np
import pytest

import engine.keras_random as seed_generator  # where SeedGenerator draws
from engine import Input
from layers.regularization import SpatialDropout1D, SpatialDropout2D
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


def test_inference_is_the_identity_as_in_keras():
    x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
    assert_matches_keras(SpatialDropout1D(0.5), keras.layers.SpatialDropout1D(0.5), x)
    x = np.random.default_rng(0).normal(size=(2, 4, 4, 3)).astype("float32")
    for data_format in ("channels_last", "channels_first"):
        assert_matches_keras(SpatialDropout2D(0.5, data_format), keras.layers.SpatialDropout2D(0.5, data_format), x)


def _assert_whole_maps_dropped(out, x, channel_axis, rate):
    kept = out != 0
    other_axes = tuple(a for a in range(1, x.ndim) if a != channel_axis)
    per_map = kept.all(axis=other_axes) | (~kept).all(axis=other_axes)
    assert per_map.all()  # each (sample, channel) map is kept or dropped as a whole
    np.testing.assert_allclose(out[kept], x[kept] / (1 - rate), rtol=1e-6)


def test_drops_whole_channels():
    x = np.random.default_rng(1).uniform(1, 2, size=(50, 6, 8)).astype("float32")
    out = SpatialDropout1D(0.4, seed=0)(x, training=True)
    _assert_whole_maps_dropped(out, x, 2, 0.4)
    assert (out == 0).mean() == pytest.approx(0.4, abs=0.05)
    x = np.random.default_rng(1).uniform(1, 2, size=(50, 3, 3, 8)).astype("float32")
    _assert_whole_maps_dropped(SpatialDropout2D(0.4, seed=0)(x, training=True), x, 3, 0.4)
    _assert_whole_maps_dropped(SpatialDropout2D(0.4, "channels_first", seed=0)(x, training=True), x, 1, 0.4)


def test_seeds():
    x = np.ones((4, 3, 5), "float32")
    a = SpatialDropout1D(0.5, seed=2)(x, training=True)
    np.testing.assert_array_equal(a, SpatialDropout1D(0.5, seed=2)(x, training=True))


def test_gradients(monkeypatch):
    monkeypatch.setattr(seed_generator, "random_generator", lambda seed=None: np.random.default_rng(0))
    rng = np.random.default_rng(1)
    assert_gradients(SpatialDropout1D(0.5), rng.normal(size=(3, 2, 4)), training=True)
    assert_gradients(SpatialDropout2D(0.5, "channels_first"), rng.normal(size=(2, 3, 2, 2)), training=True)
    assert_gradients(SpatialDropout2D(0.5), rng.normal(size=(2, 2, 2, 3)))


def test_config_round_trip_and_symbolic_shape():
    config = assert_config_round_trip(SpatialDropout1D(0.3, seed=1, name="sd1")).get_config()
    assert "noise_shape" not in config
    clone = assert_config_round_trip(SpatialDropout2D(0.3, "channels_first", seed=1))
    assert clone.data_format == "channels_first"
    assert SpatialDropout2D(0.3).get_config()["data_format"] == "channels_last"
    assert_symbolic_shape_matches_eager(SpatialDropout1D(0.3), np.ones((2, 3, 4), "float32"))
    assert_symbolic_shape_matches_eager(SpatialDropout2D(0.3), np.ones((2, 3, 4, 5), "float32"))
    assert SpatialDropout1D(0.3).supports_masking and keras.layers.SpatialDropout1D(0.3).supports_masking


def test_errors():
    with pytest.raises(ValueError, match=r"Expected a float value in \[0, 1\). Received: rate=1.5"):
        SpatialDropout1D(1.5)
    with pytest.raises(ValueError, match="`data_format` argument must be one of .*Received: data_format='channels'"):
        SpatialDropout2D(0.5, data_format="channels")
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=2"):
        SpatialDropout1D(0.5)(Input(shape=(4,)))
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        SpatialDropout2D(0.5)(np.ones((2, 3, 4), "float32"))
