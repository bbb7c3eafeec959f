import numpy as np
import pytest

from engine import Input
from layers.reshaping import RepeatVector
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("n", [1, 3])
def test_forward_matches_keras(n):
    x = np.random.default_rng(0).normal(size=(2, 5)).astype("float32")
    out = assert_matches_keras(RepeatVector(n), keras.layers.RepeatVector(n), x)
    assert out[0].dtype == np.float32


def test_gradients():
    assert_gradients(RepeatVector(3), np.random.default_rng(1).normal(size=(2, 4)))


def test_config_round_trip_and_symbolic_shape():
    assert assert_config_round_trip(RepeatVector(4, name="r")).n == 4
    assert_symbolic_shape_matches_eager(RepeatVector(3), np.ones((2, 5), "float32"))
    assert RepeatVector(2)(Input(shape=(None,))).shape == (None, 2, None)


def test_bad_config_and_inputs():
    with pytest.raises(TypeError, match="Expected an integer value for `n`"):
        RepeatVector(2.0)
    with pytest.raises(ValueError, match="Argument `n` should be a positive integer. Received: n=0"):
        RepeatVector(0)
    with pytest.raises(ValueError, match="expected ndim=2, found ndim=3"):
        RepeatVector(2)(np.ones((2, 3, 4), "float32"))
