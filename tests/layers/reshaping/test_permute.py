import numpy as np
import pytest

from engine import Input
from layers.reshaping import Permute
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("dims, shape", [((2, 1), (2, 3, 4)), ((1, 2), (2, 3, 4)), ((3, 1, 2), (2, 3, 4, 5)),
                                         ((2, 3, 1), (2, 3, 4, 5))])
def test_forward_matches_keras(dims, shape):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    out = assert_matches_keras(Permute(dims), keras.layers.Permute(dims), x)
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("dims", [(3, 1, 2), (2, 3, 1)])
def test_gradients(dims):
    assert_gradients(Permute(dims), np.random.default_rng(1).normal(size=(2, 3, 4, 5)))


def test_config_round_trip_and_symbolic_shape():
    assert assert_config_round_trip(Permute([3, 1, 2])).dims == (3, 1, 2)
    assert_symbolic_shape_matches_eager(Permute((3, 1, 2)), np.ones((2, 3, 4, 5), "float32"))
    assert Permute((2, 1))(Input(shape=(None, 4))).shape == (None, 4, None)


def test_bad_config_and_inputs():
    with pytest.raises(ValueError, match=r"must be consecutive and start from 1. Received dims=\(0, 1\)"):
        Permute((0, 1))
    with pytest.raises(ValueError, match="must be consecutive"):
        Permute((1, 1))
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=4"):
        Permute((2, 1))(np.ones((2, 3, 4, 5), "float32"))
