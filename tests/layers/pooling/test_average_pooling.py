import numpy as np
import pytest

from layers.pooling import AveragePooling1D, AveragePooling2D
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

CASES_2D = [
    ((2, 7, 6, 3), dict(pool_size=2)),
    ((2, 7, 6, 3), dict(pool_size=3, strides=2)),
    ((2, 7, 6, 3), dict(pool_size=(3, 2), strides=(2, 1), padding="same")),
    ((2, 7, 6, 3), dict(pool_size=(2, 4), strides=3, padding="same")),
    ((2, 3, 7, 6), dict(pool_size=4, strides=3, padding="same", data_format="channels_first")),
]
CASES_1D = [
    ((2, 9, 3), dict(pool_size=2)),
    ((2, 9, 3), dict(pool_size=4, strides=3, padding="same")),
    ((2, 9, 3), dict(pool_size=3, strides=1, padding="same")),
    ((2, 3, 9), dict(pool_size=2, strides=2, padding="same", data_format="channels_first")),
]


def _x(shape, dtype="float32"):
    return np.random.default_rng(0).normal(size=shape).astype(dtype)


@pytest.mark.parametrize("shape, kwargs", CASES_2D)
def test_average_pooling2d_matches_keras(shape, kwargs):
    out = assert_matches_keras(AveragePooling2D(**kwargs), keras.layers.AveragePooling2D(**kwargs), _x(shape))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("shape, kwargs", CASES_1D)
def test_average_pooling1d_matches_keras(shape, kwargs):
    assert_matches_keras(AveragePooling1D(**kwargs), keras.layers.AveragePooling1D(**kwargs), _x(shape))


def test_same_padding_divides_by_the_real_inputs_only():
    x = np.arange(1.0, 5.0, dtype="float32").reshape(1, 2, 2, 1)
    pooled = AveragePooling2D(2, strides=1, padding="same")(x)[0, :, :, 0]
    np.testing.assert_allclose(pooled, [[2.5, 3.0], [3.5, 4.0]])


@pytest.mark.parametrize("layer, shape", [(AveragePooling2D(**kwargs), shape) for shape, kwargs in CASES_2D]
                         + [(AveragePooling1D(**kwargs), shape) for shape, kwargs in CASES_1D])
def test_gradients(layer, shape):
    assert_gradients(layer, _x(shape, "float64"))


def test_config_round_trip_and_symbolic_shape():
    clone = assert_config_round_trip(AveragePooling2D((3, 2), strides=1, padding="same"))
    assert clone.pool_size == (3, 2) and clone.strides == (1, 1)
    assert_symbolic_shape_matches_eager(AveragePooling2D(3, strides=2, padding="same"), _x((2, 7, 6, 3)))
    assert_symbolic_shape_matches_eager(AveragePooling1D(4, strides=3), _x((2, 9, 3)))


def test_bad_arguments_and_inputs():
    with pytest.raises(ValueError, match=r"The `padding` argument of AveragePooling1D must be one of"):
        AveragePooling1D(2, padding="causal")
    with pytest.raises(ValueError, match=r"The `pool_size` argument must be a tuple of 1 integers.*`value > 0`"):
        AveragePooling1D(0)
    with pytest.raises(ValueError, match=r"received an input of spatial size \(5, 2\), too small for "
                                         r"pool_size=\(3, 3\)"):
        AveragePooling2D(3)(np.ones((1, 5, 2, 2), "float32"))
    with pytest.raises(ValueError, match=r"expected ndim=4, found ndim=3"):
        AveragePooling2D(2)(np.ones((1, 4, 4), "float32"))
