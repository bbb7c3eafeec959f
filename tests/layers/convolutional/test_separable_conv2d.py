import numpy as np
import pytest

from layers.convolutional import SeparableConv2D
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager)

CASES = [
    ((2, 7, 8, 3), dict(kernel_size=3)),
    ((2, 7, 8, 3), dict(kernel_size=2, depth_multiplier=2, padding="same", activation="tanh")),
    ((2, 7, 8, 3), dict(kernel_size=(3, 2), strides=(2, 3), padding="same", use_bias=False)),
    ((2, 7, 8, 3), dict(kernel_size=2, dilation_rate=(2, 3), depth_multiplier=2)),
    ((2, 3, 7, 8), dict(kernel_size=3, strides=2, padding="same", data_format="channels_first")),
]


@pytest.mark.parametrize("shape, kwargs", CASES)
def test_forward_matches_keras(shape, kwargs, keras_layer, inputs):
    theirs = keras_layer("SeparableConv2D", shape, 4, **kwargs)
    out = assert_matches_keras(SeparableConv2D(4, **kwargs), theirs, inputs(shape))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("shape, kwargs", CASES)
def test_gradients(shape, kwargs, random_weights, inputs):
    shape = (2, 3, 6, 5) if kwargs.get("data_format") else (2, 6, 5, 3)
    layer = random_weights(SeparableConv2D(4, **kwargs), shape)
    assert_gradients(layer, inputs(shape, "float64", seed=1))


def test_weight_layout_follows_keras(keras_layer):
    ours = SeparableConv2D(5, (3, 2), depth_multiplier=2)
    theirs = keras_layer("SeparableConv2D", (None, 5, 5, 4), 5, (3, 2), depth_multiplier=2)
    ours.build((None, 5, 5, 4))
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    assert [w.shape for w in ours.weights] == [(3, 2, 4, 2), (1, 1, 8, 5), (5,)]
    assert [w.path for w in ours.weights] == [f"{ours.name}/{n}" for n in ("depthwise_kernel", "pointwise_kernel",
                                                                           "bias")]


def test_config_round_trip_and_symbolic_shape(inputs):
    clone = assert_config_round_trip(SeparableConv2D(4, 3, depth_multiplier=2, pointwise_regularizer="l2",
                                                     depthwise_initializer="he_uniform"))
    assert clone.filters == 4 and clone.depth_multiplier == 2
    assert_symbolic_shape_matches_eager(SeparableConv2D(4, 3, strides=2, padding="same",
                                                        data_format="channels_first"), inputs((2, 3, 7, 6)))


def test_bad_arguments_and_inputs():
    with pytest.raises(ValueError, match=r"Expected a strictly positive integer. Received filters=0"):
        SeparableConv2D(0, 3)
    with pytest.raises(ValueError, match=r"Received depth_multiplier=2.5"):
        SeparableConv2D(2, 3, depth_multiplier=2.5)
    with pytest.raises(ValueError, match=r"too small for kernel_size=\(3, 3\) with dilation_rate=\(2, 2\)"):
        SeparableConv2D(2, 3, dilation_rate=2)(np.ones((1, 4, 9, 3), "float32"))
    with pytest.raises(ValueError, match=r"expected ndim=4, found ndim=2"):
        SeparableConv2D(2, 3)(np.ones((1, 5), "float32"))
