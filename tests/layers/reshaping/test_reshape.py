import numpy as np
import pytest

from engine import Input
from layers.reshaping import Reshape
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("shape, target", [((2, 12), (3, 4)), ((2, 3, 4), (-1,)), ((2, 3, 4), (2, -1, 3)),
                                           ((2, 6), (6, 1)), ((2, 2, 3), (1, 6, 1))])
def test_forward_matches_keras(shape, target):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    out = assert_matches_keras(Reshape(target), keras.layers.Reshape(target), x)
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("target", [(4, 3), (-1, 2)])
def test_gradients(target):
    assert_gradients(Reshape(target), np.random.default_rng(1).normal(size=(2, 3, 4)))


def test_config_round_trip_and_symbolic_shape():
    assert assert_config_round_trip(Reshape([2, -1])).target_shape == (2, -1)
    assert_symbolic_shape_matches_eager(Reshape((2, -1)), np.ones((2, 3, 4), "float32"))
    assert Reshape((2, -1))(Input(shape=(None, 4))).shape == (None, 2, None)
    assert Reshape((-1, 4))(Input(shape=(3, 4))).shape == (None, 3, 4)


def test_bad_config_and_inputs():
    with pytest.raises(ValueError, match=r"non-negative integer, or `-1`.*Received: target_shape=\(2, -2\)"):
        Reshape((2, -2))
    with pytest.raises(ValueError, match=r"at most one unknown dimension \(-1\)"):
        Reshape((-1, -1))
    with pytest.raises(ValueError, match="should be a tuple of integers. Received: target_shape=3"):
        Reshape(3)
    with pytest.raises(ValueError, match=r"total size of the tensor must be unchanged. "
                                         r"Received: input_shape=\(3, 4\), target_shape=\(5, 2\)"):
        Reshape((5, 2))(np.ones((2, 3, 4), "float32"))
    with pytest.raises(ValueError, match="input size cannot be divided"):
        Reshape((5, -1))(Input(shape=(3, 4)))
