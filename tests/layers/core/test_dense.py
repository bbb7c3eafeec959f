import numpy as np
import pytest

from engine import Input
from layers import Dense
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 3), (2, 2, 2, 3)])
@pytest.mark.parametrize("activation", [None, "relu", "sigmoid", "tanh", "softmax"])
def test_forward_matches_keras(shape, activation):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    assert_matches_keras(Dense(4, activation=activation), keras.layers.Dense(4, activation=activation), x)


@pytest.mark.parametrize("use_bias", [True, False])
@pytest.mark.parametrize("activation", ["linear", "relu", "softmax"])
def test_gradients(use_bias, activation):
    x = np.random.default_rng(1).normal(size=(3, 2, 4))
    assert_gradients(Dense(3, activation=activation, use_bias=use_bias), x)


def test_weight_layout_and_count_follow_keras():
    ours, theirs = Dense(5), keras.layers.Dense(5)
    ours.build((None, 3))
    theirs.build((None, 3))
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    assert [w.path for w in ours.weights] == [f"{ours.name}/kernel", f"{ours.name}/bias"]
    assert ours.count_params() == theirs.count_params()


def test_config_round_trip_and_symbolic_shape():
    layer = Dense(3, activation="relu", kernel_initializer="he_normal", kernel_regularizer="l2",
                  bias_constraint="non_neg", name="d")
    clone = assert_config_round_trip(layer)
    assert clone.kernel_regularizer.l2 == pytest.approx(0.01)
    assert_symbolic_shape_matches_eager(Dense(3), np.ones((2, 4, 5), "float32"))


def test_bad_config_and_input_errors():
    with pytest.raises(ValueError, match="expected a positive integer. Received: units=0"):
        Dense(0)
    with pytest.raises(ValueError, match="Unknown activation: 'relux'"):
        Dense(2, activation="relux")
    with pytest.raises(ValueError, match="needs a known last axis"):
        Dense(2)(Input(shape=(None,)))


def test_weight_regularizer_losses():
    layer = Dense(2, kernel_regularizer="l2", bias_regularizer=keras_l1())
    layer.build((None, 3))
    layer.set_weights([np.ones((3, 2)), np.full(2, -2.0)])
    assert layer.losses == [pytest.approx(0.01 * 6), pytest.approx(0.01 * 4)]


def keras_l1():
    from engine.training.regularizers import L1

    return L1(0.01)


def test_activation_set_after_construction_is_read_as_the_constructor_reads_it():
    layer = Dense(2, activation="relu", use_bias=False)
    layer.build((1, 2))
    layer.set_weights([np.array([[1.0, -2.0], [3.0, -4.0]])])
    np.testing.assert_allclose(layer(np.array([[-1.0, 2.0]])), [[5.0, 0.0]])
    layer.activation = None
    np.testing.assert_allclose(layer(np.array([[-1.0, 2.0]])), [[5.0, -6.0]])
    layer.activation = "sigmoid"
    assert layer.get_config()["activation"] == "sigmoid"


@pytest.mark.parametrize("activation, keeps_z", [("relu", False), ("linear", False), ("gelu", True)])
def test_backward_keeps_the_pre_activation_only_where_its_gradient_reads_it(activation, keeps_z):
    layer = Dense(3, activation=activation)
    x = np.random.default_rng(0).normal(size=(4, 5)).astype("float32")
    layer.build(x.shape)
    y, cache = layer.forward(x)
    assert (cache[1] is not None) is keeps_z
    grad_x, grads = layer.backward(cache, np.ones_like(y))
    assert grad_x.shape == x.shape and grads[layer.kernel].shape == (5, 3)
