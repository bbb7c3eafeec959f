import numpy as np
import pytest

from engine import Input
from layers.activation import PReLU
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("shape, shared_axes", [
    ((4, 3), None), ((2, 3, 5), None), ((2, 3, 5), [1]), ((2, 3, 5), 2), ((2, 4, 4, 3), [1, 2]),
])
def test_forward_and_weight_layout_match_keras(shape, shared_axes):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    theirs = keras.layers.PReLU(alpha_initializer=keras.initializers.RandomUniform(0.1, 0.9), shared_axes=shared_axes)
    ours = PReLU(shared_axes=shared_axes)
    assert_matches_keras(ours, theirs, x)
    assert ours.alpha.shape == tuple(theirs.alpha.shape)
    assert [w.path for w in ours.weights] == [f"{ours.name}/alpha"]
    assert ours.count_params() == theirs.count_params()


@pytest.mark.parametrize("shape, shared_axes", [((3, 4), None), ((2, 3, 4), [1]), ((2, 3, 3, 2), [1, 2])])
def test_gradients(shape, shared_axes):
    x = np.random.default_rng(1).normal(size=shape)
    assert_gradients(PReLU(alpha_initializer="random_uniform", shared_axes=shared_axes), x)


def test_regularizer_constraint_and_config():
    layer = PReLU(alpha_initializer="ones", alpha_regularizer="l2", alpha_constraint="non_neg",
                  shared_axes=(1,), name="p")
    layer.build((None, 3, 2))
    assert layer.alpha.constraint is layer.alpha_constraint
    assert layer.losses == [pytest.approx(0.01 * 2)]
    clone = assert_config_round_trip(layer)
    assert clone.shared_axes == [1]
    assert PReLU().get_config()["alpha_initializer"]["class_name"] == "Zeros"
    assert_symbolic_shape_matches_eager(PReLU(), np.ones((2, 3, 4), "float32"))
    assert PReLU().supports_masking and keras.layers.PReLU().supports_masking


def test_errors():
    with pytest.raises(ValueError, match=r"`shared_axes` to be None, a positive integer.*Received: shared_axes=\[0\]"):
        PReLU(shared_axes=0)
    with pytest.raises(ValueError, match=r"has shared_axes=\[3\], but its input shape \(None, 2, 3\) has axes 1 to 2"):
        PReLU(shared_axes=3)(Input(shape=(2, 3)))
    with pytest.raises(ValueError, match=r"needs known sizes on its unshared axes.*\(None, None, 3\)"):
        PReLU()(Input(shape=(None, 3)))
    assert PReLU(shared_axes=1)(Input(shape=(None, 3))).shape == (None, None, 3)
    layer = PReLU()
    layer(np.ones((2, 3), "float32"))
    with pytest.raises(ValueError, match="expected axis 1 of input shape to have value 3"):
        layer(np.ones((2, 4), "float32"))
