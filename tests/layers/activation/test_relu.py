import numpy as np
import pytest

from layers.activation import ReLU
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

ARGUMENTS = [{}, {"max_value": 1.0}, {"negative_slope": 0.1}, {"threshold": 0.5},
             {"max_value": 6.0, "negative_slope": 0.2, "threshold": 0.3}]


@pytest.mark.parametrize("kwargs", ARGUMENTS)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_forward_matches_keras(kwargs, shape):
    x = (np.random.default_rng(0).normal(size=shape) * 3).astype("float32")
    out = assert_matches_keras(ReLU(**kwargs), keras.layers.ReLU(**kwargs), x)[0]
    assert out.dtype == np.float32


@pytest.mark.parametrize("kwargs", ARGUMENTS)
def test_gradients(kwargs):
    assert_gradients(ReLU(**kwargs), np.random.default_rng(1).normal(size=(3, 2, 4)) * 3)


def test_config_round_trip_and_symbolic_shape():
    assert_config_round_trip(ReLU(max_value=2.0, negative_slope=0.1, threshold=0.2, name="r"))
    assert_symbolic_shape_matches_eager(ReLU(), np.ones((2, 3, 4), "float32"))
    assert ReLU().supports_masking and keras.layers.ReLU().supports_masking


def test_errors():
    with pytest.raises(ValueError, match="ReLU layer cannot be a negative value. Received: max_value=-1"):
        ReLU(max_value=-1)
    with pytest.raises(ValueError, match="negative_slope of a ReLU layer cannot be None or a negative value. "
                                         "Received: negative_slope=None"):
        ReLU(negative_slope=None)
    with pytest.raises(ValueError, match="threshold of a ReLU layer cannot be None or a negative value. "
                                         "Received: threshold=-0.5"):
        ReLU(threshold=-0.5)
