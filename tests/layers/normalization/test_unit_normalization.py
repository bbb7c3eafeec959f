import numpy as np
import pytest

from layers.normalization import UnitNormalization
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

CASES = [((4, 5), -1), ((2, 3, 4), 1), ((2, 3, 4), [1, 2]), ((2, 3, 4), [0, -1])]


def inputs(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


@pytest.mark.parametrize("shape, axis", CASES)
def test_forward_matches_keras(shape, axis):
    theirs = keras.layers.UnitNormalization(axis=axis)
    out = assert_matches_keras(UnitNormalization(axis=axis), theirs, inputs(shape))
    assert out[0].dtype == np.float32


def test_zero_and_tiny_slices_match_keras():
    x = np.array([[0.0, 0.0, 0.0], [3e-13, 4e-13, 0.0], [3.0, 4.0, 0.0]], "float32")
    out = assert_matches_keras(UnitNormalization(), keras.layers.UnitNormalization(), x)[0]
    np.testing.assert_allclose(out, [[0, 0, 0], [0.3, 0.4, 0], [0.6, 0.8, 0]], rtol=1e-6)


@pytest.mark.parametrize("shape, axis", CASES)
def test_gradients(shape, axis):
    assert_gradients(UnitNormalization(axis=axis), inputs(shape, seed=1).astype("float64"))


def test_gradient_where_the_norm_is_clamped_is_linear():
    layer = UnitNormalization()
    x = np.array([[1e-14, -2e-14], [3.0, 4.0]])
    out, cache = layer.forward(x)
    grad, weights = layer.backward(cache, np.ones_like(x))
    assert weights == {}
    np.testing.assert_allclose(grad[0], [1e12, 1e12])
    np.testing.assert_allclose(grad[1], np.array([1.0, 1.0]) / 5 - out[1] * 1.4 / 5)


def test_config_round_trip_and_symbolic_shape():
    clone = assert_config_round_trip(UnitNormalization(axis=[1, 2], name="unit"))
    assert clone.axis == [1, 2]
    assert_symbolic_shape_matches_eager(UnitNormalization(axis=[1, 2]), inputs((2, 3, 4)))


def test_bad_config_and_input_errors():
    with pytest.raises(TypeError, match="list/tuple of ints for the argument 'axis', but received: 1.5"):
        UnitNormalization(axis=1.5)
    with pytest.raises(ValueError, match=r"Axis 2 is out of bounds for input shape \(2, 3\) of layer 'unit'"):
        UnitNormalization(axis=2, name="unit")(inputs((2, 3)))
    with pytest.raises(ValueError, match=r"Axis -1 is out of bounds for input shape \(\)"):
        UnitNormalization()(np.float32(1.0))
