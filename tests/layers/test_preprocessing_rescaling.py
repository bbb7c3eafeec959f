"""Rescaling against Keras 3, finite differences and the traced gradient of its own call."""

import numpy as np
import pytest

from engine import Input, Model, load_model
from layers import Rescaling
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)
from tests.layers.preprocessing_checks import assert_traced_gradients_match


def _x(shape=(2, 4, 5, 3), seed=0, dtype="float32"):
    return (np.random.default_rng(seed).normal(size=shape) * 50).astype(dtype)


@pytest.mark.parametrize("scale, offset", [(1 / 255.0, 0.0), (1 / 127.5, -1.0), ([0.5, 2.0, -1.0], [1.0, 0.0, 3.0])])
def test_forward_matches_keras(scale, offset):
    out = assert_matches_keras(Rescaling(scale, offset), keras.layers.Rescaling(np.array(scale), np.array(offset)),
                               _x(), atol=0, rtol=0)
    assert out[0].dtype == np.float32


def test_integer_images_give_floats_as_in_keras():
    pixels = np.random.default_rng(1).integers(0, 256, size=(2, 3, 3, 3)).astype("uint8")
    out = Rescaling(1 / 255.0)(pixels)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.asarray(keras.layers.Rescaling(1 / 255.0)(pixels)))
    assert Rescaling(2.0)(Input(shape=(3,), dtype="uint8")).dtype == "float32"


@pytest.mark.parametrize("scale, offset", [(0.25, -3.0), ([0.5, 2.0, -1.0], 1.0)])
def test_gradients(scale, offset):
    assert_gradients(Rescaling(scale, offset), _x((2, 3, 3), 2, "float64"))
    assert_traced_gradients_match(Rescaling(scale, offset), _x((2, 3, 3), 3, "float64"))


def test_config_keys_are_keras_and_round_trip():
    config = assert_config_round_trip(Rescaling([0.5, 2.0], offset=1.0)).get_config()
    keras_config = keras.layers.Rescaling(0.5, offset=1.0).get_config()
    assert set(config) == set(keras_config)
    assert config["scale"] == [0.5, 2.0] and config["offset"] == 1.0
    assert Rescaling(1 / 255.0).get_config()["scale"] == keras.layers.Rescaling(1 / 255.0).get_config()["scale"]


def test_keras_numpy_config_values_load():
    keras_config = keras.layers.Rescaling(np.array([1.0, 2.0]), 0.5).get_config()
    assert keras_config["scale"]["class_name"] == "__numpy__"
    layer = Rescaling.from_config({k: v for k, v in keras_config.items() if k != "dtype"})
    assert layer.scale == [1.0, 2.0]
    np.testing.assert_array_equal(layer(np.ones((1, 2), "float32")), [[1.5, 2.5]])


def test_in_a_saved_model(tmp_path):
    x = Input(shape=(4, 5, 3))
    model = Model(x, Rescaling(1 / 127.5, -1.0)(x))
    assert_symbolic_shape_matches_eager(Rescaling(2.0), _x())
    model.save(tmp_path / "m.nw")
    np.testing.assert_array_equal(load_model(tmp_path / "m.nw")(_x()), model(_x()))


def test_bad_scale():
    with pytest.raises(ValueError, match="Rescaling expects `scale` and `offset` to be numbers"):
        Rescaling("half")


def test_flops_by_hand():
    assert Rescaling(0.5).flops([(2, 4, 5, 3)], [(2, 4, 5, 3)]) == 2 * 2 * 4 * 5 * 3
