import numpy as np
import pytest

from engine import Input
from layers.reshaping import ZeroPadding1D, ZeroPadding2D
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


def _x(shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


@pytest.mark.parametrize("padding", [1, (0, 2), (3, 1)])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_zero_padding1d_forward_matches_keras(padding, data_format):
    layers = ZeroPadding1D(padding, data_format), keras.layers.ZeroPadding1D(padding, data_format)
    out = assert_matches_keras(*layers, _x((2, 4, 3)))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("padding", [(1, 1), 2, ((1, 0), (0, 2)), ((0, 0), (3, 1))])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_zero_padding2d_forward_matches_keras(padding, data_format):
    layers = ZeroPadding2D(padding, data_format), keras.layers.ZeroPadding2D(padding, data_format)
    assert_matches_keras(*layers, _x((2, 3, 4, 5)))


def test_gradients():
    assert_gradients(ZeroPadding1D((2, 1)), _x((2, 4, 3), 1, "float64"))
    assert_gradients(ZeroPadding1D((0, 2), "channels_first"), _x((2, 3, 4), 1, "float64"))
    assert_gradients(ZeroPadding2D(((1, 0), (2, 1))), _x((2, 3, 4, 2), 1, "float64"))
    assert_gradients(ZeroPadding2D(((1, 2), (0, 1)), "channels_first"), _x((2, 2, 3, 4), 1, "float64"))


def test_config_round_trip_and_symbolic_shape():
    assert assert_config_round_trip(ZeroPadding1D(2)).padding == (2, 2)
    assert assert_config_round_trip(ZeroPadding2D((1, 2), "channels_first")).padding == ((1, 1), (2, 2))
    assert_symbolic_shape_matches_eager(ZeroPadding1D((1, 2), "channels_first"), _x((2, 4, 3)))
    assert_symbolic_shape_matches_eager(ZeroPadding2D(((1, 0), (0, 2))), _x((2, 3, 4, 5)))
    assert ZeroPadding2D(1)(Input(shape=(None, 5, 3))).shape == (None, None, 7, 3)


def test_bad_config_and_inputs():
    with pytest.raises(ValueError, match=r"The `padding` argument must be a tuple of 2 integers. Received: "
                                         r"padding=\(1, 2.5\)"):
        ZeroPadding1D((1, 2.5))
    with pytest.raises(ValueError, match="do not satisfy `value >= 0`"):
        ZeroPadding2D(((0, -1), (1, 1)))
    with pytest.raises(ValueError, match="`padding` should be either an int, a tuple of 2 ints"):
        ZeroPadding2D("same")
    with pytest.raises(ValueError, match="must be one of {'channels_first', 'channels_last'}"):
        ZeroPadding1D(1, data_format="ncw")
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        ZeroPadding2D(1)(np.ones((2, 6, 3), "float32"))
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=2"):
        ZeroPadding1D(1)(np.ones((2, 6), "float32"))
