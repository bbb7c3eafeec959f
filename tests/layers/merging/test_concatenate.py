import numpy as np
import pytest

from engine import Input
from layers.merging import Concatenate, concatenate
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


def _inputs(shapes, seed=0, dtype="float32"):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(dtype) for shape in shapes]


@pytest.mark.parametrize("axis, shapes", [
    (-1, [(2, 3), (2, 4)]),
    (1, [(2, 1, 4), (2, 3, 4), (2, 2, 4)]),
    (-2, [(2, 3, 4), (2, 5, 4)]),
    (2, [(2, 3, 2, 1), (2, 3, 4, 1)]),
    (0, [(2, 3), (1, 3)]),
])
def test_forward_matches_keras(axis, shapes):
    out = assert_matches_keras(Concatenate(axis=axis), keras.layers.Concatenate(axis=axis), _inputs(shapes))
    assert out[0].dtype == np.float32


def test_functional_helper():
    x = _inputs([(2, 3, 1), (2, 3, 2)])
    np.testing.assert_array_equal(concatenate(x), np.asarray(keras.layers.concatenate(x)))
    y = concatenate([Input(shape=(3, 1)), Input(shape=(2, 1))], axis=1, name="joined")
    assert y.shape == (None, 5, 1)


@pytest.mark.parametrize("axis, shapes", [(-1, [(2, 3), (2, 4), (2, 1)]), (1, [(2, 1, 4), (2, 3, 4)])])
def test_gradients(axis, shapes):
    assert_gradients(Concatenate(axis=axis), _inputs(shapes, seed=1, dtype="float64"))


def test_config_round_trip_and_symbolic_shape():
    clone = assert_config_round_trip(Concatenate(axis=1, name="c"))
    assert clone.axis == 1
    assert_symbolic_shape_matches_eager(Concatenate(axis=1), _inputs([(2, 3, 4), (2, 2, 4)]))


def test_symbolic_shape_with_unknown_sizes():
    assert Concatenate(axis=1)([Input(shape=(None, 3)), Input(shape=(4, 3))]).shape == (None, None, 3)
    assert Concatenate()([Input(shape=(None, 2)), Input(shape=(4, 3))]).shape == (None, 4, 5)


def test_bad_config_and_inputs():
    with pytest.raises(ValueError, match="expected an integer. Received: axis=1.5"):
        Concatenate(axis=1.5)
    x = np.ones((2, 3), "float32")
    with pytest.raises(ValueError, match=r"requires inputs with matching shapes except for the concatenation "
                                         r"axis. Received: input_shape=\[\(2, 3\), \(2, 4, 1\)\]"):
        Concatenate()([x, np.ones((2, 4, 1), "float32")])
    with pytest.raises(ValueError, match="requires inputs with matching shapes"):
        Concatenate(axis=1)([x, np.ones((3, 3), "float32")])
    with pytest.raises(ValueError, match="requires inputs with matching shapes"):
        Concatenate()([Input(shape=(3, 2)), Input(shape=(4, 2))])
    with pytest.raises(ValueError, match="received axis=2, which is out of range for inputs of rank 2"):
        Concatenate(axis=2)([x, x])
    with pytest.raises(ValueError, match="expects at least 2 inputs"):
        Concatenate()([x])
