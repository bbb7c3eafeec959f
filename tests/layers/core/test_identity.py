import numpy as np
import pytest

from engine import Input
from layers.core import Identity
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 3)])
def test_forward_matches_keras(shape):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    assert_matches_keras(Identity(), keras.layers.Identity(), x)


def test_gradients_single_and_list_inputs():
    rng = np.random.default_rng(1)
    assert_gradients(Identity(), rng.normal(size=(3, 4)))
    assert_gradients(Identity(), [rng.normal(size=(3, 4)), rng.normal(size=(3, 2))])


def test_symbolic_outputs_keep_structure_shape_and_dtype():
    assert_symbolic_shape_matches_eager(Identity(), np.ones((2, 3, 4), "float32"))
    ints, floats = Input(shape=(3,), dtype="int32"), Input(shape=(2, 2))
    out = Identity()([ints, floats])
    assert [(t.shape, t.dtype) for t in out] == [((None, 3), "int32"), ((None, 2, 2), "float32")]


def test_config_round_trip():
    assert_config_round_trip(Identity(name="placeholder", trainable=False))
    assert Identity().supports_masking and keras.layers.Identity().supports_masking
