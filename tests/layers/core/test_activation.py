import numpy as np
import pytest

from engine import Input
from layers.core import Activation
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

NAMES = ["relu", "gelu", "selu", "sigmoid", "tanh", "softmax", "log_softmax", "swish", "linear"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_forward_matches_keras(name, shape):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    assert_matches_keras(Activation(name), keras.layers.Activation(name), x)


@pytest.mark.parametrize("name", NAMES)
def test_gradients(name):
    assert_gradients(Activation(name), np.random.default_rng(1).normal(size=(3, 2, 4)))


def test_config_round_trip_and_symbolic_shape():
    clone = assert_config_round_trip(Activation("swish", name="act"))
    assert clone.get_config()["activation"] == "silu"
    assert_symbolic_shape_matches_eager(Activation("tanh"), np.ones((2, 3), "float32"))
    assert Activation("tanh").supports_masking and keras.layers.Activation("tanh").supports_masking
    assert Activation("relu")(Input(shape=(None, 7))).shape == (None, None, 7)


def test_errors():
    with pytest.raises(ValueError, match="Unknown activation: 'tanhh'"):
        Activation("tanhh")
    with pytest.raises(TypeError, match="Could not interpret activation"):
        Activation(np.tanh)
