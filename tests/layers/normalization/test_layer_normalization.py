import numpy as np
import pytest

from layers.normalization import LayerNormalization
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

# Keras 3 warns that rms_scaling is deprecated; we keep it, with the same numerics.
pytestmark = pytest.mark.filterwarnings("ignore:You passed `rms_scaling=True`")

CASES = [((4, 5), -1, {}), ((2, 3, 4), [1, 2], {}), ((2, 3, 4), 1, {}), ((2, 3, 4), [-2, -1], {}),
         ((3, 6), -1, {"center": False}), ((3, 6), -1, {"scale": False, "epsilon": 0.1}),
         ((2, 3, 4), -1, {"rms_scaling": True}), ((2, 3, 4), [0, 2], {"rms_scaling": True})]


def inputs(shape, seed=0):
    return np.random.default_rng(seed).normal(1.0, 2.0, size=shape).astype("float32")


@pytest.mark.parametrize("shape, axis, kwargs", CASES)
def test_forward_matches_keras(shape, axis, kwargs, random_weights):
    theirs = random_weights(keras.layers.LayerNormalization(axis=axis, **kwargs), shape)
    ours = LayerNormalization(axis=axis, **kwargs)
    out = assert_matches_keras(ours, theirs, inputs(shape))[0]
    assert out.dtype == np.float32
    assert [w.name for w in ours.weights] == [w.name for w in theirs.weights]


@pytest.mark.parametrize("shape, axis, kwargs", CASES)
def test_gradients(shape, axis, kwargs, random_weights):
    layer = random_weights(LayerNormalization(axis=axis, **kwargs), shape)
    assert_gradients(layer, inputs(shape, seed=1).astype("float64"))


def test_weights_follow_keras_layout():
    for kwargs, names in (({}, ["gamma", "beta"]), ({"rms_scaling": True, "scale": False}, ["gamma"]),
                          ({"center": False}, ["gamma"])):
        ours = LayerNormalization(axis=[1, 2], **kwargs)
        theirs = keras.layers.LayerNormalization(axis=[1, 2], **kwargs)
        ours.build((None, 3, 4))
        theirs.build((None, 3, 4))
        assert [w.name for w in ours.weights] == [w.name for w in theirs.weights] == names
        assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]


def test_config_round_trip_and_symbolic_shape():
    layer = LayerNormalization(axis=[1, 2], epsilon=1e-5, rms_scaling=True, beta_initializer="ones",
                               gamma_regularizer="l1", beta_constraint="max_norm", name="ln")
    clone = assert_config_round_trip(layer)
    assert clone.axis == [1, 2] and clone.rms_scaling and clone.epsilon == 1e-5
    assert_symbolic_shape_matches_eager(LayerNormalization(axis=[-2, -1]), inputs((2, 3, 4)))


def test_bad_config_and_input_errors():
    with pytest.raises(TypeError, match=r"list/tuple of ints for the argument 'axis', but received: \[\]"):
        LayerNormalization(axis=[])
    with pytest.raises(ValueError, match="expected a bool. Received: rms_scaling='yes'"):
        LayerNormalization(rms_scaling="yes")
    with pytest.raises(ValueError, match=r"Axis -3 is out of bounds for input shape \(2, 3\)"):
        LayerNormalization(axis=[-3, -1])(inputs((2, 3)))
    layer = LayerNormalization()
    layer(inputs((2, 3)))
    with pytest.raises(ValueError, match=r"expected axis 1 of input shape to have value 3 but received .*\(2, 5\)"):
        layer(inputs((2, 5)))
    with pytest.raises(ValueError, match="expected ndim=2, found ndim=1"):
        layer(inputs((3,)))
