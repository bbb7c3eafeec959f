import numpy as np
import pytest

from layers.convolutional import DepthwiseConv2D
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager)

CASES = [
    ((2, 7, 8, 3), dict(kernel_size=3)),
    ((2, 7, 8, 3), dict(kernel_size=2, depth_multiplier=2, padding="same")),
    ((2, 7, 8, 3), dict(kernel_size=(3, 2), strides=(2, 3), padding="same", activation="relu")),
    ((2, 7, 8, 3), dict(kernel_size=(2, 3), dilation_rate=(2, 1), depth_multiplier=3, use_bias=False)),
    # Keras' depthwise layers (unlike Conv2D) accept strides and dilation together.
    ((2, 7, 8, 3), dict(kernel_size=2, strides=2, dilation_rate=2, padding="same")),
    ((2, 3, 7, 8), dict(kernel_size=3, strides=2, depth_multiplier=2, data_format="channels_first")),
    # A column stride of 1 with a row stride of 2: the windows' rows stay flattened.
    ((2, 7, 8, 3), dict(kernel_size=3, strides=(2, 1), depth_multiplier=2, padding="same")),
    ((1, 5, 7, 3), dict(kernel_size=(3, 5), dilation_rate=(1, 2), padding="same")),
]


@pytest.mark.parametrize("shape, kwargs", CASES)
def test_forward_matches_keras(shape, kwargs, keras_layer, inputs):
    theirs = keras_layer("DepthwiseConv2D", shape, **kwargs)
    out = assert_matches_keras(DepthwiseConv2D(**kwargs), theirs, inputs(shape))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("shape, kwargs", CASES)
def test_gradients(shape, kwargs, random_weights, inputs):
    shape = (2, 3, 6, 5) if kwargs.get("data_format") else (2, 6, 5, 3)
    layer = random_weights(DepthwiseConv2D(**kwargs), shape)
    assert_gradients(layer, inputs(shape, "float64", seed=1))


def test_weight_layout_follows_keras(keras_layer):
    ours, theirs = DepthwiseConv2D((3, 2), depth_multiplier=2), keras_layer("DepthwiseConv2D", (None, 5, 5, 4),
                                                                          (3, 2), depth_multiplier=2)
    ours.build((None, 5, 5, 4))
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights] == [(3, 2, 4, 2), (8,)]


def test_config_round_trip_and_symbolic_shape(inputs):
    clone = assert_config_round_trip(DepthwiseConv2D(3, depth_multiplier=2, padding="same",
                                                     depthwise_regularizer="l2", depthwise_constraint="max_norm"))
    assert clone.depth_multiplier == 2
    assert_symbolic_shape_matches_eager(DepthwiseConv2D(2, strides=2, depth_multiplier=3), inputs((2, 7, 6, 2)))


def test_bad_arguments_and_inputs():
    with pytest.raises(ValueError, match=r"Expected a strictly positive integer. Received depth_multiplier=0"):
        DepthwiseConv2D(3, depth_multiplier=0)
    with pytest.raises(ValueError, match=r"The `padding` argument of DepthwiseConv2D must be one of 'valid', "
                                         r"'same' \('causal' padding exists only for Conv1D\)"):
        DepthwiseConv2D(3, padding="causal")
    with pytest.raises(ValueError, match=r"'depthwise_conv2d' \(DepthwiseConv2D\) received an input of spatial "
                                         r"size \(5, 2\), too small for kernel_size=\(3, 3\)"):
        DepthwiseConv2D(3, name="depthwise_conv2d")(np.ones((1, 5, 2, 3), "float32"))
    with pytest.raises(ValueError, match=r"expected ndim=4, found ndim=3"):
        DepthwiseConv2D(3)(np.ones((1, 5, 3), "float32"))
