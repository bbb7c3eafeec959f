import numpy as np
import pytest

from engine import Input
from layers.reshaping import Flatten
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("shape", [(3,), (3, 4), (2, 3, 4), (2, 3, 4, 5)])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_forward_matches_keras(shape, data_format):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    out = assert_matches_keras(Flatten(data_format), keras.layers.Flatten(data_format), x)
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3,)])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_gradients(shape, data_format):
    assert_gradients(Flatten(data_format), np.random.default_rng(1).normal(size=shape))


def test_config_round_trip_and_symbolic_shape():
    assert assert_config_round_trip(Flatten(data_format="Channels_First")).data_format == "channels_first"
    assert_symbolic_shape_matches_eager(Flatten(), np.ones((2, 3, 4), "float32"))
    assert Flatten()(Input(shape=(None, 4))).shape == (None, None)


def test_bad_config_and_inputs():
    with pytest.raises(ValueError, match="must be one of {'channels_first', 'channels_last'}. "
                                         "Received: data_format='nhwc'"):
        Flatten(data_format="nhwc")
    with pytest.raises(ValueError, match="expected min_ndim=1, found ndim=0"):
        Flatten()(np.float32(1.0))
