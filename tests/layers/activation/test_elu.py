import numpy as np
import pytest

from layers.activation import ELU
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.0])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_forward_matches_keras(alpha, shape):
    x = (np.random.default_rng(0).normal(size=shape) * 2).astype("float32")
    assert_matches_keras(ELU(alpha), keras.layers.ELU(alpha), x)


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_gradients(alpha):
    assert_gradients(ELU(alpha), np.random.default_rng(1).normal(size=(3, 2, 4)) * 2)


def test_config_round_trip_and_symbolic_shape():
    assert assert_config_round_trip(ELU(0.7, name="elu_layer")).alpha == 0.7
    assert_symbolic_shape_matches_eager(ELU(), np.ones((2, 3), "float32"))
    assert ELU().supports_masking and keras.layers.ELU().supports_masking


def test_errors():
    with pytest.raises(ValueError, match="ELU expects `alpha` to be a number. Received: alpha='1'"):
        ELU("1")
