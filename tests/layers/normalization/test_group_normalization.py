import numpy as np
import pytest

from layers.normalization import GroupNormalization
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

CASES = [((2, 4, 6), 3, -1, {}), ((2, 6, 3, 3), 2, 1, {}), ((3, 4, 2, 4), -1, -1, {}), ((2, 5, 4), 1, -1, {}),
         ((2, 3, 6, 2), 2, -2, {}), ((2, 3, 4), 2, -1, {"center": False}),
         ((2, 3, 4), 4, -1, {"scale": False, "epsilon": 0.1})]


def inputs(shape, seed=0):
    return np.random.default_rng(seed).normal(1.0, 2.0, size=shape).astype("float32")


@pytest.mark.parametrize("shape, groups, axis, kwargs", CASES)
def test_forward_matches_keras(shape, groups, axis, kwargs, random_weights):
    theirs = random_weights(keras.layers.GroupNormalization(groups=groups, axis=axis, **kwargs), shape)
    ours = GroupNormalization(groups=groups, axis=axis, **kwargs)
    out = assert_matches_keras(ours, theirs, inputs(shape))[0]
    assert out.dtype == np.float32
    assert [w.name for w in ours.weights] == [w.name for w in theirs.weights]


@pytest.mark.parametrize("shape, groups, axis, kwargs", CASES)
def test_gradients(shape, groups, axis, kwargs, random_weights):
    layer = random_weights(GroupNormalization(groups=groups, axis=axis, **kwargs), shape)
    assert_gradients(layer, inputs(shape, seed=1).astype("float64"))


def test_config_round_trip_and_symbolic_shape():
    layer = GroupNormalization(groups=-1, axis=1, epsilon=1e-5, gamma_initializer="zeros",
                               beta_regularizer="l2", name="gn")
    clone = assert_config_round_trip(layer)
    assert clone.groups == -1 and clone.axis == 1
    assert_symbolic_shape_matches_eager(GroupNormalization(groups=2, axis=1), inputs((2, 4, 3)))


def test_bad_config_and_input_errors():
    with pytest.raises(ValueError, match=r"expected a positive integer \(or `-1` for instance normalization\). "
                                         "Received: groups=0"):
        GroupNormalization(groups=0)
    with pytest.raises(ValueError, match=r"expected an int. Received: axis=\[1, 2\]"):
        GroupNormalization(axis=[1, 2])
    with pytest.raises(ValueError, match=r"Number of channels \(6\) must be a multiple of the number of groups \(4\)"):
        GroupNormalization(groups=4)(inputs((2, 6)))
    with pytest.raises(ValueError, match=r"Number of groups \(8\) cannot be more than the number of channels \(6\)"):
        GroupNormalization(groups=8)(inputs((2, 6)))
    with pytest.raises(ValueError, match="received axis=0, the batch axis"):
        GroupNormalization(groups=2, axis=0)(inputs((4, 6)))
    with pytest.raises(ValueError, match=r"Axis 2 is out of bounds for input shape \(2, 6\)"):
        GroupNormalization(groups=2, axis=2)(inputs((2, 6)))
    layer = GroupNormalization(groups=2)
    layer(inputs((2, 6)))
    with pytest.raises(ValueError, match=r"expected axis 1 of input shape to have value 6 but received .*\(2, 4\)"):
        layer(inputs((2, 4)))
    with pytest.raises(ValueError, match="expected ndim=2, found ndim=3"):
        layer(inputs((2, 3, 6)))
