import numpy as np
import pytest

from engine import Input
from layers.reshaping import Cropping1D, Cropping2D
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


def _x(shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


@pytest.mark.parametrize("cropping", [(1, 1), 2, (0, 3), (2, 0)])
def test_cropping1d_forward_matches_keras(cropping):
    out = assert_matches_keras(Cropping1D(cropping), keras.layers.Cropping1D(cropping), _x((2, 6, 3)))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("cropping", [((0, 0), (0, 0)), 1, (1, 2), ((1, 0), (0, 2)), ((0, 2), (3, 1))])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_cropping2d_forward_matches_keras(cropping, data_format):
    x = _x((2, 5, 6, 7))
    assert_matches_keras(Cropping2D(cropping, data_format), keras.layers.Cropping2D(cropping, data_format), x)


def test_gradients():
    assert_gradients(Cropping1D((2, 1)), _x((2, 6, 3), 1, "float64"))
    assert_gradients(Cropping2D(((1, 0), (2, 1))), _x((2, 4, 5, 3), 1, "float64"))
    assert_gradients(Cropping2D(((1, 2), (0, 1)), "channels_first"), _x((2, 3, 5, 4), 1, "float64"))


def test_config_round_trip_and_symbolic_shape():
    assert assert_config_round_trip(Cropping1D(2)).cropping == (2, 2)
    assert assert_config_round_trip(Cropping2D((1, 2), "channels_first")).cropping == ((1, 1), (2, 2))
    assert_symbolic_shape_matches_eager(Cropping1D((1, 2)), _x((2, 6, 3)))
    assert_symbolic_shape_matches_eager(Cropping2D(((1, 0), (0, 2)), "channels_first"), _x((2, 3, 4, 5)))
    assert Cropping2D(1)(Input(shape=(None, 5, 3))).shape == (None, None, 3, 3)


def test_bad_config():
    with pytest.raises(ValueError, match=r"The `cropping` argument must be a tuple of 2 integers. Received: "
                                         r"cropping=\(1, 2, 3\)"):
        Cropping1D((1, 2, 3))
    with pytest.raises(ValueError, match="do not satisfy `value >= 0`"):
        Cropping1D(-1)
    with pytest.raises(ValueError, match="`cropping` should be either an int, a tuple of 2 ints"):
        Cropping2D((1, 2, 3))
    with pytest.raises(ValueError, match="The `1st entry of cropping` argument must be a tuple of 2 integers"):
        Cropping2D(((1, 2, 3), 1))
    with pytest.raises(ValueError, match="do not satisfy `value >= 0`"):
        Cropping2D(-1)
    with pytest.raises(ValueError, match="must be one of {'channels_first', 'channels_last'}"):
        Cropping2D(1, data_format="channels_middle")


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"Layer 'crop' \(Cropping2D\) cannot crop \(\(2, 2\), \(0, 0\)\) "
                                         r"from an input of shape \(1, 4, 5, 3\): values in `cropping` "
                                         r"should be smaller"):
        Cropping2D(((2, 2), (0, 0)), name="crop")(np.ones((1, 4, 5, 3), "float32"))
    with pytest.raises(ValueError, match=r"\(Cropping2D\) cannot crop"):
        Cropping2D(((0, 0), (2, 3)), "channels_first")(Input(shape=(3, 4, 5)))
    with pytest.raises(ValueError, match=r"\(Cropping1D\) cannot crop \(3, 3\) from an input of shape"):
        Cropping1D(3)(np.ones((2, 6, 3), "float32"))
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        Cropping2D(1)(np.ones((2, 6, 3), "float32"))
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=4"):
        Cropping1D(1)(np.ones((2, 6, 3, 1), "float32"))
