import numpy as np
import pytest

from engine import Input
from layers.pooling import MaxPooling1D, MaxPooling2D
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

# Sizes 7 and 6 with strides 2 and 3 leave remainders; "same" with even pools
# puts the odd pad at the end.
CASES_2D = [
    ((2, 7, 6, 3), dict()),
    ((2, 7, 6, 3), dict(pool_size=3, strides=2)),
    ((2, 7, 6, 3), dict(pool_size=(3, 2), strides=(2, 1), padding="same")),
    ((2, 7, 6, 3), dict(pool_size=(2, 4), strides=3, padding="same")),
    ((2, 3, 7, 6), dict(pool_size=2, padding="same", data_format="channels_first")),
]
CASES_1D = [
    ((2, 9, 3), dict()),
    ((2, 9, 3), dict(pool_size=4, strides=3, padding="same")),
    ((2, 9, 3), dict(pool_size=3, strides=1)),
    ((2, 3, 9), dict(pool_size=2, strides=2, padding="same", data_format="channels_first")),
]


@pytest.mark.parametrize("shape, kwargs", CASES_2D)
def test_max_pooling2d_matches_keras(shape, kwargs, distinct_inputs):
    out = assert_matches_keras(MaxPooling2D(**kwargs), keras.layers.MaxPooling2D(**kwargs), distinct_inputs(shape))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("shape, kwargs", CASES_1D)
def test_max_pooling1d_matches_keras(shape, kwargs, distinct_inputs):
    assert_matches_keras(MaxPooling1D(**kwargs), keras.layers.MaxPooling1D(**kwargs), distinct_inputs(shape))


@pytest.mark.parametrize("layer, shape", [(MaxPooling2D(**kwargs), shape) for shape, kwargs in CASES_2D]
                         + [(MaxPooling1D(**kwargs), shape) for shape, kwargs in CASES_1D])
def test_gradients_and_training_forward(layer, shape, distinct_inputs):
    assert_gradients(layer, distinct_inputs(shape, "float64"), training=True)
    x = distinct_inputs(shape)
    np.testing.assert_array_equal(layer.forward(x)[0], layer(x))


def test_gradient_goes_to_the_maximum_only():
    x = np.array([[[1.0], [5.0], [2.0], [3.0], [0.0]]], "float32")
    layer = MaxPooling1D(2, strides=1)
    outputs, cache = layer.forward(x)
    grad, weights = layer.backward(cache, np.ones_like(outputs))
    np.testing.assert_array_equal(grad[0, :, 0], [0.0, 2.0, 0.0, 2.0, 0.0])
    assert grad.dtype == np.float32 and weights == {}


def test_config_round_trip_and_symbolic_shape(distinct_inputs):
    clone = assert_config_round_trip(MaxPooling2D((3, 2), padding="same", data_format="channels_first"))
    assert clone.strides == (3, 2)
    assert assert_config_round_trip(MaxPooling1D(3, strides=1)).strides == (1,)
    assert_symbolic_shape_matches_eager(MaxPooling2D(3, strides=2, padding="same"), distinct_inputs((2, 7, 6, 3)))
    assert_symbolic_shape_matches_eager(MaxPooling1D(2, data_format="channels_first"), distinct_inputs((2, 3, 9)))
    assert MaxPooling2D()(Input(shape=(None, 7, 3))).shape == (None, None, 3, 3)


def test_bad_arguments_and_inputs():
    with pytest.raises(ValueError, match=r"The `padding` argument of MaxPooling2D must be one of 'valid', 'same'. "
                                         r"Received: padding='full'"):
        MaxPooling2D(padding="full")
    with pytest.raises(ValueError, match=r"'causal' padding exists only for Conv1D"):
        MaxPooling1D(padding="causal")
    with pytest.raises(ValueError, match=r"The `pool_size` argument must be a tuple of 2 integers"):
        MaxPooling2D((2, 2, 2))
    with pytest.raises(ValueError, match=r"The `strides` argument must be a tuple of 1 integers.*`value > 0`"):
        MaxPooling1D(2, strides=0)
    with pytest.raises(ValueError, match=r"Layer 'p' \(MaxPooling2D\) received an input of spatial size \(1, 4\), "
                                         r"too small for pool_size=\(2, 2\) and padding='valid'"):
        MaxPooling2D(name="p")(np.ones((1, 1, 4, 2), "float32"))
    with pytest.raises(ValueError, match=r"expected ndim=3, found ndim=4"):
        MaxPooling1D()(np.ones((1, 4, 4, 2), "float32"))


@pytest.mark.parametrize("kwargs", [dict(pool_size=2), dict(pool_size=3, strides=2, padding="same"),
                                    dict(pool_size=(3, 2), strides=(1, 2)), dict(pool_size=2, strides=3)])
def test_ties_send_the_gradient_where_keras_does(kwargs):
    # Values from {0, 1, 2}: most windows hold several maxima. The first in row-major
    # order gets the gradient, as in Keras on jax (XLA's select-and-scatter) and PyTorch.
    import jax

    x = np.random.default_rng(4).integers(0, 3, size=(2, 7, 9, 3)).astype("float32")
    layer, theirs = MaxPooling2D(**kwargs), keras.layers.MaxPooling2D(**kwargs)
    outputs, cache = layer.forward(x)
    g = np.random.default_rng(5).normal(size=outputs.shape).astype("float32")
    want = jax.grad(lambda t: (theirs(t) * g).sum())(x)
    np.testing.assert_allclose(layer.backward(cache, g)[0], np.asarray(want), rtol=1e-5, atol=1e-6)


def test_tied_window_gives_its_gradient_to_the_first_maximum_in_row_major_order():
    x = np.array([[0.0, 5.0], [5.0, 5.0]], "float32").reshape(1, 2, 2, 1)
    outputs, cache = MaxPooling2D(2).forward(x)
    grad = MaxPooling2D(2).backward(cache, np.ones_like(outputs))[0]
    np.testing.assert_array_equal(grad[0, :, :, 0], [[0.0, 1.0], [0.0, 0.0]])
