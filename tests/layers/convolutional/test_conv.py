import numpy as np
import pytest

from engine import Input
from layers.convolutional import Conv1D, Conv2D, Conv3D
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager)

# Spatial sizes 7 and 8 with strides 2 and 3 leave remainders; even kernels put
# lax's extra "same" pad at the end.
CONV2D_CASES = [
    ((2, 7, 8, 6), dict(kernel_size=3)),
    ((2, 7, 8, 6), dict(kernel_size=2, padding="same")),
    ((2, 7, 8, 6), dict(kernel_size=(4, 3), strides=(2, 3), padding="same")),
    ((2, 7, 8, 6), dict(kernel_size=(3, 2), strides=2)),
    ((2, 7, 8, 6), dict(kernel_size=(2, 3), dilation_rate=(2, 1), padding="same")),
    ((2, 7, 8, 6), dict(kernel_size=(3, 3), dilation_rate=2)),
    ((2, 7, 8, 6), dict(kernel_size=3, groups=2, activation="relu")),
    ((2, 7, 8, 6), dict(kernel_size=1, strides=3, padding="same", use_bias=False)),
    ((2, 6, 7, 8), dict(kernel_size=3, padding="same", data_format="channels_first", activation="tanh")),
    ((2, 6, 7, 8), dict(kernel_size=2, strides=2, groups=3, data_format="channels_first")),
]
CONV1D_CASES = [
    ((2, 9, 4), dict(kernel_size=3)),
    ((2, 9, 4), dict(kernel_size=4, strides=2, padding="same")),
    ((2, 9, 4), dict(kernel_size=3, dilation_rate=2, padding="causal")),
    ((2, 9, 4), dict(kernel_size=2, strides=4, padding="causal", activation="sigmoid")),
    ((2, 9, 4), dict(kernel_size=3, strides=2, groups=2)),
    ((2, 4, 9), dict(kernel_size=2, padding="causal", data_format="channels_first")),
    ((2, 4, 9), dict(kernel_size=5, dilation_rate=2, padding="same", data_format="channels_first")),
]

CONV3D_CASES = [
    ((2, 4, 5, 6, 2), dict(kernel_size=(2, 3, 2), strides=(1, 2, 3), padding="same")),
    ((2, 4, 5, 6, 2), dict(kernel_size=2, dilation_rate=(1, 2, 1), groups=2, activation="relu")),
    ((2, 2, 4, 5, 6), dict(kernel_size=3, padding="same", data_format="channels_first")),
]


@pytest.mark.parametrize("shape, kwargs", CONV2D_CASES)
def test_conv2d_forward_matches_keras(shape, kwargs, keras_layer, inputs):
    theirs = keras_layer("Conv2D", shape, 6, **kwargs)
    out = assert_matches_keras(Conv2D(6, **kwargs), theirs, inputs(shape))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("shape, kwargs", CONV1D_CASES)
def test_conv1d_forward_matches_keras(shape, kwargs, keras_layer, inputs):
    theirs = keras_layer("Conv1D", shape, 4, **kwargs)
    out = assert_matches_keras(Conv1D(4, **kwargs), theirs, inputs(shape))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("shape, kwargs", CONV3D_CASES)
def test_conv3d_forward_matches_keras(shape, kwargs, keras_layer, inputs):
    theirs = keras_layer("Conv3D", shape, 2, **kwargs)
    assert_matches_keras(Conv3D(2, **kwargs), theirs, inputs(shape))


@pytest.mark.parametrize("kwargs", [kwargs for _, kwargs in CONV2D_CASES])
def test_conv2d_gradients(kwargs, random_weights, inputs):
    shape = (2, 6, 5, 6)  # 6 channels in either data format
    layer = random_weights(Conv2D(6, **kwargs), shape)
    assert_gradients(layer, inputs(shape, "float64", seed=1))


@pytest.mark.parametrize("shape, kwargs", CONV1D_CASES)
def test_conv1d_gradients(shape, kwargs, random_weights, inputs):
    layer = random_weights(Conv1D(4, **kwargs), shape)
    assert_gradients(layer, inputs(shape, "float64", seed=1), training=True)


@pytest.mark.parametrize("shape, kwargs", CONV3D_CASES)
def test_conv3d_gradients(shape, kwargs, random_weights, inputs):
    layer = random_weights(Conv3D(2, **kwargs), shape)
    assert_gradients(layer, inputs(shape, "float64", seed=1), samples=60)


def test_float32_stays_float32_in_backward(inputs):
    layer = Conv2D(3, 2, strides=2, padding="same", groups=3, activation="relu")
    x = inputs((2, 5, 5, 3))
    layer(x)
    outputs, cache = layer.forward(x)
    grad_x, grad_w = layer.backward(cache, np.ones_like(outputs))
    assert outputs.dtype == grad_x.dtype == np.float32
    assert all(g.dtype == np.float32 for g in grad_w.values())


def test_training_forward_equals_call(inputs):
    layer = Conv1D(3, 3, padding="causal", activation="relu")
    x = inputs((2, 6, 2))
    np.testing.assert_array_equal(layer(x), layer.forward(x)[0])


def test_weight_layout_follows_keras(keras_layer):
    ours, theirs = Conv2D(8, (3, 2), groups=2), keras_layer("Conv2D", (None, 5, 5, 4), 8, (3, 2), groups=2)
    ours.build((None, 5, 5, 4))
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights] == [(3, 2, 2, 8), (8,)]
    assert [w.path for w in ours.weights] == [f"{ours.name}/kernel", f"{ours.name}/bias"]


def test_config_round_trip_and_symbolic_shape(inputs):
    layer = Conv2D(4, (3, 2), strides=(2, 1), padding="same", data_format="channels_first", groups=2,
                   activation="relu", use_bias=False, kernel_initializer="he_normal", kernel_regularizer="l2",
                   bias_constraint="non_neg", name="c")
    clone = assert_config_round_trip(layer)
    assert clone.kernel_size == (3, 2) and clone.groups == 2 and clone.data_format == "channels_first"
    assert_config_round_trip(Conv1D(2, 3, padding="causal", dilation_rate=2))
    assert assert_config_round_trip(Conv3D(2, (1, 2, 3))).kernel_size == (1, 2, 3)
    assert_symbolic_shape_matches_eager(Conv2D(4, 3, strides=2, padding="same"), inputs((2, 7, 8, 3)))
    assert_symbolic_shape_matches_eager(Conv1D(4, 3, strides=2, data_format="channels_first"), inputs((2, 3, 9)))
    assert_symbolic_shape_matches_eager(Conv1D(4, 3, padding="causal"), inputs((2, 9, 3)))
    assert_symbolic_shape_matches_eager(Conv3D(2, 2, strides=2), inputs((2, 5, 4, 3, 2)))
    assert Conv2D(4, 3)(Input(shape=(None, 9, 3))).shape == (None, None, 7, 4)


def test_input_too_small_for_kernel():
    with pytest.raises(ValueError, match=r"Layer 'c' \(Conv2D\) received an input of spatial size \(4, 6\), too "
                                         r"small for kernel_size=\(3, 3\) with dilation_rate=\(2, 2\) \(spanning "
                                         r"\(5, 5\)\) and padding='valid'"):
        Conv2D(2, 3, dilation_rate=2, name="c")(np.ones((1, 4, 6, 2), "float32"))
    with pytest.raises(ValueError, match=r"spatial size \(2,\), too small for kernel_size=\(3,\)"):
        Conv1D(2, 3)(Input(shape=(2, 5)))
    layer = Conv1D(2, 3)
    layer(np.ones((1, 5, 2), "float32"))
    with pytest.raises(ValueError, match=r"spatial size \(1,\), too small"):
        layer(np.ones((1, 1, 2), "float32"))
    assert Conv2D(2, 3, dilation_rate=2, padding="same")(np.ones((1, 2, 2, 1), "float32")).shape == (1, 2, 2, 2)


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"The `padding` argument of Conv2D must be one of 'valid', 'same'. "
                                         r"Received: padding='full'"):
        Conv2D(2, 3, padding="full")
    with pytest.raises(ValueError, match=r"'causal' padding exists only for Conv1D"):
        Conv2D(2, 3, padding="causal")
    with pytest.raises(ValueError, match=r"number of filters must be evenly divisible by the number of groups. "
                                         r"Received: groups=4, filters=6"):
        Conv2D(6, 3, groups=4)
    with pytest.raises(ValueError, match=r"Expected a strictly positive integer. Received filters=0"):
        Conv1D(0, 3)
    with pytest.raises(ValueError, match=r"Received groups=0"):
        Conv1D(2, 3, groups=0)
    with pytest.raises(ValueError, match=r"`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                                         r"Received: strides=\(2, 1\) and dilation_rate=\(1, 2\)"):
        Conv2D(2, 3, strides=(2, 1), dilation_rate=(1, 2))
    with pytest.raises(ValueError, match=r"The `kernel_size` argument must be a tuple of 2 integers"):
        Conv2D(2, (3, 3, 3))
    with pytest.raises(ValueError, match=r"The `strides` argument must be a tuple of 1 integers.*`value > 0`"):
        Conv1D(2, 3, strides=0)
    with pytest.raises(ValueError, match=r"must be one of {'channels_first', 'channels_last'}"):
        Conv2D(2, 3, data_format="NHWC")
    with pytest.raises(ValueError, match=r"Unknown activation: 'rellu'"):
        Conv2D(2, 3, activation="rellu")


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"number of input channels must be evenly divisible by the number of groups. "
                                         r"Received groups=2, but the input has 3 channels"):
        Conv2D(4, 3, groups=2)(np.ones((1, 5, 5, 3), "float32"))
    with pytest.raises(ValueError, match=r"expected ndim=4, found ndim=3"):
        Conv2D(2, 3)(np.ones((1, 5, 3), "float32"))
    with pytest.raises(ValueError, match=r"expected ndim=3, found ndim=4"):
        Conv1D(2, 3)(np.ones((1, 5, 5, 3), "float32"))
    with pytest.raises(ValueError, match=r"needs a known channels axis \(channels_first\)"):
        Conv1D(2, 3, data_format="channels_first")(Input(shape=(None, 5)))
    layer = Conv2D(2, 3)
    layer(np.ones((1, 5, 5, 3), "float32"))
    with pytest.raises(ValueError, match=r"expected axis -1 of input shape to have value 3"):
        layer(np.ones((1, 5, 5, 4), "float32"))


# conv picks, per product, the smaller intermediate: at stride 1 fewer filters than input
# channels run the forward and kernel gradient in the flipped-kernel (col2im) form, and more
# filters run the input gradient by col2im instead of the flipped kernel's im2col (except 1x1).
CHANNEL_RATIO_CASES = [
    (Conv2D, (2, 7, 8, 6), 2, dict(kernel_size=3)),
    (Conv2D, (2, 7, 8, 6), 2, dict(kernel_size=(2, 4), padding="same", activation="relu")),
    (Conv2D, (1, 5, 6, 6), 1, dict(kernel_size=3, dilation_rate=(2, 1), padding="same")),
    (Conv2D, (2, 6, 7, 6), 2, dict(kernel_size=2, padding="same", data_format="channels_first")),
    (Conv2D, (2, 7, 8, 2), 8, dict(kernel_size=3, padding="same")),
    (Conv1D, (2, 9, 4), 2, dict(kernel_size=3, dilation_rate=2, padding="causal")),
    (Conv1D, (1, 9, 2), 5, dict(kernel_size=4, padding="same")),
    (Conv2D, (2, 5, 6, 3), 7, dict(kernel_size=1)),  # 1x1: no im2col copy, input gradient by one matmul
    (Conv2D, (2, 5, 6, 7), 3, dict(kernel_size=1, padding="same", use_bias=False)),
    # 16 channels at a stride: by strided strips, forward and both gradients
    (Conv2D, (2, 7, 8, 16), 5, dict(kernel_size=3, strides=2, padding="same")),
    (Conv2D, (2, 9, 7, 16), 3, dict(kernel_size=(3, 2), strides=(2, 3))),
    (Conv2D, (2, 16, 8, 5), 4, dict(kernel_size=3, strides=(3, 2), padding="same", data_format="channels_first")),
]


@pytest.mark.parametrize("cls, shape, filters, kwargs", CHANNEL_RATIO_CASES)
def test_fewer_or_more_filters_than_channels(cls, shape, filters, kwargs, keras_layer, random_weights, inputs):
    theirs = keras_layer(cls.__name__, shape, filters, **kwargs)
    assert_matches_keras(cls(filters, **kwargs), theirs, inputs(shape))
    assert_gradients(random_weights(cls(filters, **kwargs), shape), inputs(shape, "float64", seed=1),
                     training=True)


@pytest.mark.parametrize("activation, keeps_z", [("relu", False), ("tanh", False), ("elu", True)])
def test_backward_keeps_the_pre_activation_only_where_its_gradient_reads_it(activation, keeps_z):
    layer = Conv2D(2, 3, activation=activation)
    x = np.random.default_rng(0).normal(size=(2, 5, 5, 3)).astype("float32")
    layer.build(x.shape)
    y, cache = layer.forward(x)
    assert (cache[3] is not None) is keeps_z  # (spatial, pads, saved columns, z, outputs)
    grad_x, grads = layer.backward(cache, np.ones_like(y))
    assert grad_x.shape == x.shape and grads[layer.kernel].shape == (3, 3, 3, 2)
