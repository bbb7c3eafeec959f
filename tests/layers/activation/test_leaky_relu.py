import numpy as np
import pytest

from layers.activation import LeakyReLU
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("negative_slope", [0.3, 0.0, 0.01, 1.5])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_forward_matches_keras(negative_slope, shape):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    assert_matches_keras(LeakyReLU(negative_slope), keras.layers.LeakyReLU(negative_slope), x)


@pytest.mark.parametrize("negative_slope", [0.3, 0.0])
def test_gradients(negative_slope):
    assert_gradients(LeakyReLU(negative_slope), np.random.default_rng(1).normal(size=(3, 2, 4)))


def test_config_round_trip_and_symbolic_shape():
    clone = assert_config_round_trip(LeakyReLU(0.2, name="leaky"))
    assert clone.negative_slope == 0.2
    assert LeakyReLU().get_config()["negative_slope"] == keras.layers.LeakyReLU().get_config()["negative_slope"]
    assert_symbolic_shape_matches_eager(LeakyReLU(), np.ones((2, 3), "float32"))
    assert LeakyReLU().supports_masking and keras.layers.LeakyReLU().supports_masking


def test_errors():
    with pytest.raises(ValueError, match="negative value. Expected a float. Received: negative_slope=-0.1"):
        LeakyReLU(-0.1)
    with pytest.raises(ValueError, match="Received: negative_slope=None"):
        LeakyReLU(None)
