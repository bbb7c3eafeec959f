import math

import numpy as np
import pytest

from layers import activations
from layers.activations import _erf
from tests.layers.oracle import keras

NAMES = ["relu", "leaky_relu", "elu", "selu", "gelu", "sigmoid", "hard_sigmoid", "tanh", "softmax",
         "log_softmax", "softplus", "softsign", "swish", "silu", "linear"]

# (name, keyword arguments) beyond the defaults.
VARIANTS = [
    ("relu", {"negative_slope": 0.1}),
    ("relu", {"max_value": 1.5}),
    ("relu", {"max_value": 6}),
    ("relu", {"threshold": 0.7}),
    ("relu", {"threshold": -1.0, "max_value": 2.0}),
    ("relu", {"negative_slope": 0.2, "threshold": 0.5, "max_value": 2.0}),
    ("leaky_relu", {"negative_slope": 0.05}),
    ("elu", {"alpha": 0.5}),
    ("gelu", {"approximate": True}),
    ("softmax", {"axis": 0}),
    ("softmax", {"axis": 1}),
    ("log_softmax", {"axis": 0}),
]


def _inputs(shape=(3, 4, 5), dtype="float32", seed=0):
    return (np.random.default_rng(seed).normal(size=shape) * 2.5).astype(dtype)


@pytest.mark.parametrize("name", NAMES)
def test_forward_matches_keras(name):
    x = _inputs()
    ours = getattr(activations, name)(x)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, np.asarray(getattr(keras.activations, name)(x)), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name, kwargs", VARIANTS)
def test_forward_with_arguments_matches_keras(name, kwargs):
    x = _inputs()
    ours = getattr(activations, name)(x, **kwargs)
    assert ours.dtype == np.float32
    theirs = np.asarray(getattr(keras.activations, name)(x, **kwargs))
    np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=1e-5)


def _numeric_gradient(function, x, projection, h=1e-6):
    grad = np.empty_like(x)
    for index in np.ndindex(x.shape):
        upper, lower = x.copy(), x.copy()
        upper[index] += h
        lower[index] -= h
        grad[index] = (np.sum(function(upper) * projection) - np.sum(function(lower) * projection)) / (2 * h)
    return grad


@pytest.mark.parametrize("name, kwargs", [(name, {}) for name in NAMES] + VARIANTS)
def test_gradient_matches_central_differences(name, kwargs):
    function = getattr(activations, name)
    x = _inputs(shape=(2, 3, 4), dtype="float64", seed=1)
    projection = np.random.default_rng(2).normal(size=x.shape)
    y = function(x, **kwargs)
    assert y.dtype == np.float64
    analytic = function.gradient(x, y, projection, **kwargs)
    numeric = _numeric_gradient(lambda v: function(v, **kwargs), x, projection)
    error = np.linalg.norm(analytic - numeric) / np.linalg.norm(numeric)
    assert error < 1e-6, error


def test_gradients_keep_float32():
    x = _inputs()
    for name in NAMES:
        function = getattr(activations, name)
        assert function.gradient(x, function(x), np.ones_like(x)).dtype == np.float32, name


def test_erf_is_accurate_against_math_erf():
    x = np.concatenate([np.linspace(-30.0, 30.0, 60001), np.geomspace(1e-300, 1.0, 500),
                        -np.geomspace(1e-300, 1.0, 500), [0.0, 0.46875, -0.46875, 4.0, -4.0]])
    expected = np.array([math.erf(v) for v in x])
    received = _erf(x)
    assert np.max(np.abs(received - expected)) < 1e-15
    nonzero = expected != 0
    assert np.max(np.abs(received - expected)[nonzero] / np.abs(expected[nonzero])) < 1e-14
    np.testing.assert_array_equal(_erf(np.array([np.inf, -np.inf, 0.0])), [1.0, -1.0, 0.0])
    assert np.isnan(_erf(np.array([np.nan]))[0])
    assert _erf(np.ones((2, 2), "float32")).dtype == np.float32


def test_gelu_tails_are_finite_and_exact():
    x = np.array([-40.0, -10.0, 10.0, 40.0])
    np.testing.assert_allclose(activations.gelu(x), [0.0, 0.0, 10.0, 40.0], atol=1e-20)
    np.testing.assert_allclose(activations.gelu.gradient(x, activations.gelu(x), np.ones(4)), [0, 0, 1, 1], atol=1e-20)


def test_softmax_over_several_axes_matches_keras():
    x = _inputs()
    np.testing.assert_allclose(activations.softmax(x, axis=(1, 2)),
                               np.asarray(keras.activations.softmax(x, axis=(1, 2))), atol=1e-6)


def test_get_and_serialize():
    assert activations.get("swish") is activations.silu
    assert activations.get(None) is activations.linear
    assert activations.get(activations.tanh) is activations.tanh
    for name in NAMES:
        function = activations.get(name)
        assert activations.get(activations.serialize(function)) is function
    assert activations.serialize(activations.swish) == keras.activations.serialize(keras.activations.swish)


def test_get_errors():
    with pytest.raises(ValueError, match="Unknown activation: 'rleu'. Did you mean 'relu'\\? Known activations: .*relu"):
        activations.get("rleu")
    with pytest.raises(TypeError, match="a plain callable has no backward"):
        activations.get(np.tanh)


@pytest.mark.parametrize("size", [3, 300_000])  # below and above the size split between threads
def test_the_plain_relu_is_differentiated_by_a_tape_as_by_hand(size):
    from engine import GradientTape, Variable

    x = Variable((np.arange(size) % 5 - 2.5).astype("float32"))  # no zeros, where np.maximum splits a tie
    with GradientTape() as tape:
        loss = np.sum(activations.relu(x) * 3.0)
    np.testing.assert_array_equal(tape.gradient(loss, x), np.where(x.numpy() > 0, 3.0, 0.0))


@pytest.mark.parametrize("name, kwargs, from_output", [
    ("relu", {}, True), ("relu", {"negative_slope": 0.1}, False), ("relu", {"threshold": 0.5}, False),
    ("sigmoid", {}, True), ("tanh", {}, True), ("linear", {}, True), ("gelu", {}, False), ("elu", {}, False)])
def test_where_the_output_determines_the_gradient_the_input_is_not_needed(name, kwargs, from_output):
    function = activations.get(name)
    assert function.gradient_reads_input(**kwargs) is not from_output
    if from_output:  # the gradient from the output alone is the derivative at the input (away from relu's kink)
        x = np.array([-2.0, -0.5, -0.1, 0.25, 1.5])
        g, step = np.linspace(1.0, 2.0, x.size), 1e-6
        slopes = (function(x + step, **kwargs) - function(x - step, **kwargs)) / (2 * step)
        np.testing.assert_allclose(function.gradient(None, function(x, **kwargs), g, **kwargs), g * slopes, atol=1e-6)


def test_a_relu_layer_keeps_only_its_output_for_backward():
    from layers import Activation, LeakyReLU

    x = np.random.default_rng(0).normal(size=(4, 6)).astype("float32")
    outputs, cache = Activation("relu").forward(x)
    assert cache[0] is None and cache[1] is outputs
    assert LeakyReLU(negative_slope=0.1).forward(x)[1][0] is x  # its gradient reads the input
