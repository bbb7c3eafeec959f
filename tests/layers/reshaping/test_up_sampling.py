import numpy as np
import pytest

from engine import Input
from layers.reshaping import UpSampling1D, UpSampling2D
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


def _x(shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


@pytest.mark.parametrize("size", [1, 2, 3])
def test_up_sampling1d_forward_matches_keras(size):
    out = assert_matches_keras(UpSampling1D(size), keras.layers.UpSampling1D(size), _x((2, 4, 3)))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
@pytest.mark.parametrize("size", [2, (3, 1), (1, 4), (2, 3)])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_up_sampling2d_forward_matches_keras(size, data_format, interpolation):
    ours = UpSampling2D(size, data_format, interpolation)
    theirs = keras.layers.UpSampling2D(size, data_format, interpolation)
    out = assert_matches_keras(ours, theirs, _x((2, 3, 5, 2)))
    assert out[0].dtype == np.float32


def test_bilinear_interpolates_between_pixel_centers_and_clamps_at_edges():
    out = UpSampling2D((1, 2), interpolation="BILINEAR")(np.array([[[[0.0], [4.0]]]]))
    np.testing.assert_allclose(out[0, 0, :, 0], [0.0, 1.0, 3.0, 4.0])


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_up_sampling2d_gradients(data_format, interpolation):
    assert_gradients(UpSampling2D((2, 3), data_format, interpolation), _x((2, 3, 4, 2), 1, "float64"))


def test_up_sampling1d_gradients():
    assert_gradients(UpSampling1D(3), _x((2, 4, 3), 1, "float64"))


def test_config_round_trip_and_symbolic_shape():
    assert assert_config_round_trip(UpSampling1D(3)).size == 3
    clone = assert_config_round_trip(UpSampling2D(2, "channels_first", "Bilinear"))
    assert (clone.size, clone.interpolation) == ((2, 2), "bilinear")
    assert_symbolic_shape_matches_eager(UpSampling1D(3), _x((2, 4, 3)))
    assert_symbolic_shape_matches_eager(UpSampling2D((2, 3), "channels_first", "bilinear"), _x((2, 3, 4, 5)))
    assert UpSampling2D((2, 3))(Input(shape=(None, 5, 3))).shape == (None, None, 15, 3)


def test_bad_config_and_inputs():
    with pytest.raises(TypeError, match="Expected an integer value for `size`"):
        UpSampling1D(2.0)
    with pytest.raises(ValueError, match="Argument `size` should be a positive integer. Received: size=0"):
        UpSampling1D(0)
    with pytest.raises(ValueError, match=r"The `size` argument must be a tuple of 2 integers. "
                                         r"Received: size=\(2, 0\), including values that do not satisfy "
                                         r"`value > 0`"):
        UpSampling2D((2, 0))
    with pytest.raises(ValueError, match="must be a tuple of 2 integers. Received: size=\\(2, 2, 2\\)"):
        UpSampling2D((2, 2, 2))
    with pytest.raises(ValueError, match=r"expected one of \('nearest', 'bilinear'\).*"
                                         r"Received: interpolation='bicubic'"):
        UpSampling2D(interpolation="bicubic")
    with pytest.raises(ValueError, match="must be one of {'channels_first', 'channels_last'}"):
        UpSampling2D(data_format="nchw")
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        UpSampling2D()(np.ones((2, 6, 3), "float32"))
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=4"):
        UpSampling1D()(np.ones((2, 6, 3, 1), "float32"))
