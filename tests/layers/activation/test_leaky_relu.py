import numpy as np
import pytest

from layers import activations
from layers.activation import LeakyReLU
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


@pytest.mark.parametrize("negative_slope", [0.3, 0.0, 0.01, 1.5])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_forward_matches_keras(negative_slope, shape):
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    assert_matches_keras(LeakyReLU(negative_slope), keras.layers.LeakyReLU(negative_slope), x)


@pytest.mark.parametrize("negative_slope", [0.3, 0.0])
def test_gradients(negative_slope):
    assert_gradients(LeakyReLU(negative_slope), np.random.default_rng(1).normal(size=(3, 2, 4)))


def test_config_round_trip_and_symbolic_shape():
    clone = assert_config_round_trip(LeakyReLU(0.2, name="leaky"))
    assert clone.negative_slope == 0.2
    assert LeakyReLU().get_config()["negative_slope"] == keras.layers.LeakyReLU().get_config()["negative_slope"]
    assert_symbolic_shape_matches_eager(LeakyReLU(), np.ones((2, 3), "float32"))
    assert LeakyReLU().supports_masking and keras.layers.LeakyReLU().supports_masking


def test_errors():
    with pytest.raises(ValueError, match="negative value. Expected a float. Received: negative_slope=-0.1"):
        LeakyReLU(-0.1)
    with pytest.raises(ValueError, match="Received: negative_slope=None"):
        LeakyReLU(None)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("negative_slope", [0.0, 0.2, 1.0, 2.5])
def test_values_and_gradient_are_keras_formula_bit_for_bit(monkeypatch, dtype, negative_slope):
    # Keras 3's formula, where(x >= 0, x, slope * x), against the two-pass max (min above slope 1) and the
    # gradient's slope picked by its bits; special values included, split between two threads.
    from layers.convolutional import _runs

    monkeypatch.setattr(_runs, "num_threads", lambda: 2)
    monkeypatch.setattr(_runs, "SHARE_ELEMENTS", 1000)
    rng = np.random.default_rng(2)
    x, grad = rng.normal(size=(2, 3000)).astype(dtype), rng.normal(size=(2, 3000)).astype(dtype)
    x[0, :6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -1e-30]
    with np.errstate(invalid="ignore"):
        expected = np.where(x >= 0, x, negative_slope * x).astype(dtype)
        outputs = activations.leaky_relu(x, negative_slope=negative_slope)
    assert outputs.dtype == dtype
    np.testing.assert_array_equal(outputs.view(f"u{x.itemsize}"), expected.view(f"u{x.itemsize}"))
    gradient = activations.leaky_relu.gradient(x, outputs, grad, negative_slope=negative_slope)
    assert gradient.dtype == dtype
    np.testing.assert_array_equal(gradient, grad * np.where(x >= 0, 1.0, negative_slope).astype(dtype))
