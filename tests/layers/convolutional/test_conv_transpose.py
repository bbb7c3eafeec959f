import numpy as np
import pytest

from engine import Input
from layers.convolutional import Conv1DTranspose, Conv2DTranspose
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager)

# Strides larger than the kernel, even kernels, output_padding and dilation: the
# cases where Keras' pads on jax differ (negative crops, the odd pad at the end).
CONV2D_CASES = [
    ((2, 5, 4, 3), dict(kernel_size=3)),
    ((2, 5, 4, 3), dict(kernel_size=3, strides=2, padding="same")),
    ((2, 5, 4, 3), dict(kernel_size=(2, 4), strides=(3, 2), padding="same")),
    ((2, 5, 4, 3), dict(kernel_size=(1, 2), strides=(4, 3))),
    ((2, 5, 4, 3), dict(kernel_size=(3, 2), strides=(2, 3), output_padding=1)),
    ((2, 5, 4, 3), dict(kernel_size=(2, 4), strides=(3, 2), padding="same", output_padding=(2, 0))),
    ((2, 5, 4, 3), dict(kernel_size=(3, 2), dilation_rate=(2, 3), padding="same", activation="relu")),
    ((2, 3, 5, 4), dict(kernel_size=2, strides=2, data_format="channels_first", use_bias=False)),
    ((2, 3, 5, 4), dict(kernel_size=3, strides=(1, 2), padding="same", output_padding=(0, 1),
                        data_format="channels_first", activation="tanh")),
]
CONV1D_CASES = [
    ((2, 6, 3), dict(kernel_size=3, strides=2)),
    ((2, 6, 3), dict(kernel_size=4, strides=3, padding="same")),
    ((2, 6, 3), dict(kernel_size=2, strides=5, output_padding=4)),
    ((2, 6, 3), dict(kernel_size=3, dilation_rate=2, padding="same", output_padding=0)),
    ((2, 3, 6), dict(kernel_size=3, strides=2, padding="same", data_format="channels_first")),
]


@pytest.mark.parametrize("shape, kwargs", CONV2D_CASES)
def test_conv2d_transpose_forward_matches_keras(shape, kwargs, keras_layer, inputs):
    theirs = keras_layer("Conv2DTranspose", shape, 4, **kwargs)
    out = assert_matches_keras(Conv2DTranspose(4, **kwargs), theirs, inputs(shape))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("shape, kwargs", CONV1D_CASES)
def test_conv1d_transpose_forward_matches_keras(shape, kwargs, keras_layer, inputs):
    theirs = keras_layer("Conv1DTranspose", shape, 2, **kwargs)
    assert_matches_keras(Conv1DTranspose(2, **kwargs), theirs, inputs(shape))


@pytest.mark.parametrize("shape, kwargs", CONV2D_CASES)
def test_conv2d_transpose_gradients(shape, kwargs, random_weights, inputs):
    layer = random_weights(Conv2DTranspose(2, **kwargs), shape)
    assert_gradients(layer, inputs(shape, "float64", seed=1))


@pytest.mark.parametrize("shape, kwargs", CONV1D_CASES)
def test_conv1d_transpose_gradients(shape, kwargs, random_weights, inputs):
    layer = random_weights(Conv1DTranspose(2, **kwargs), shape)
    assert_gradients(layer, inputs(shape, "float64", seed=1), training=True)


def test_weight_layout_follows_keras(keras_layer):
    ours, theirs = Conv2DTranspose(5, (3, 2)), keras_layer("Conv2DTranspose", (None, 4, 4, 3), 5, (3, 2))
    ours.build((None, 4, 4, 3))
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights] == [(3, 2, 5, 3), (5,)]


def test_config_round_trip_and_symbolic_shape(inputs):
    clone = assert_config_round_trip(Conv2DTranspose(3, 3, strides=2, padding="same", output_padding=(1, 0),
                                                     kernel_regularizer="l1", activation="relu"))
    assert clone.output_padding == (1, 0)
    assert assert_config_round_trip(Conv1DTranspose(2, 3)).output_padding is None
    assert_symbolic_shape_matches_eager(Conv2DTranspose(3, (2, 3), strides=(3, 2), output_padding=1),
                                        inputs((2, 4, 5, 3)))
    assert_symbolic_shape_matches_eager(Conv1DTranspose(3, 4, strides=2, padding="same",
                                                        data_format="channels_first"), inputs((2, 3, 5)))
    assert Conv2DTranspose(2, 3, strides=2)(Input(shape=(None, 4, 3))).shape == (None, None, 9, 2)


def test_bad_arguments_and_inputs():
    with pytest.raises(ValueError, match=r"`output_padding` must be strictly less than `strides` for all "
                                         r"dimensions. At dimension 1, `output_padding` is 2 but `strides` is 2"):
        Conv2DTranspose(2, 3, strides=(3, 2), output_padding=2)
    with pytest.raises(ValueError, match=r"`strides > 1` not supported in conjunction with `dilation_rate > 1`"):
        Conv1DTranspose(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match=r"'causal' padding exists only for Conv1D"):
        Conv1DTranspose(2, 3, padding="causal")
    with pytest.raises(ValueError, match=r"Expected a strictly positive integer. Received filters=-1"):
        Conv2DTranspose(-1, 3)
    with pytest.raises(ValueError, match=r"The `output_padding` argument must be a tuple of 2 integers"):
        Conv2DTranspose(2, 3, output_padding=(1, 1, 1))
    with pytest.raises(ValueError, match=r"expected ndim=4, found ndim=5"):
        Conv2DTranspose(2, 3)(np.ones((1, 2, 2, 2, 2), "float32"))


@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=4, strides=2, padding="same"),  # the GAN generator's
    dict(kernel_size=(3, 2), strides=(2, 3), output_padding=1),  # crops past the end
])
def test_sixteen_filters_at_a_stride_run_by_col2im_runs_and_strided_strips(kwargs, keras_layer, random_weights, inputs,
                                                                           monkeypatch):
    # The forward by col2im a sample at a time, the backward's convolution by strided strips.
    from layers.convolutional import _im2col

    shape, calls = (2, 5, 4, 3), []
    real = _im2col.strided_strip_conv
    monkeypatch.setattr(_im2col, "strided_strip_conv", lambda *args: calls.append(1) or real(*args))
    monkeypatch.setattr(_im2col, "STRIDED_IM2COL_BYTES", 0)
    monkeypatch.setattr(_im2col, "COL2IM_RUN_BYTES", 1)
    theirs = keras_layer("Conv2DTranspose", shape, 16, **kwargs)
    assert_matches_keras(Conv2DTranspose(16, **kwargs), theirs, inputs(shape))
    assert_gradients(random_weights(Conv2DTranspose(16, **kwargs), shape), inputs(shape, "float64", seed=1))
    assert calls
