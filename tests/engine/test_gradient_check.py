import numpy as np
import pytest

from engine import Input, Layer, Model
from engine.network.gradient_check import gradient_check
from layers import Dense


def test_correct_backward_passes_and_report_names_every_gradient():
    report = gradient_check(Dense(3, activation="tanh", name="d"), np.random.rand(4, 2))
    assert set(report.errors) == {"input 0", "d/kernel", "d/bias"}
    assert report.max_error < 1e-7
    assert "d/kernel" in str(report)


def test_wrong_backward_is_caught():
    class WrongSquare(Layer):
        def call(self, inputs):
            return inputs**2

        def backward(self, cache, grad_outputs):
            return grad_outputs * cache, {}  # missing the factor 2

    report = gradient_check(WrongSquare(), np.random.rand(3, 3) + 0.5)
    assert report.errors["input 0"] == pytest.approx(0.5, abs=1e-6)


def test_weights_are_restored_in_their_dtype():
    layer = Dense(2)
    layer(np.ones((1, 2)))
    before = layer.get_weights()
    gradient_check(layer, np.random.rand(2, 2))
    for variable, value in zip(layer.weights, before):
        assert variable.value.dtype == np.float32
        np.testing.assert_array_equal(variable.value, value)


def test_model_gradients_with_sampling():
    x = Input(shape=(3,))
    model = Model(x, Dense(2)(Dense(4, activation="sigmoid")(x)))
    report = gradient_check(model, np.random.rand(5, 3), samples=5)
    assert len(report.errors) == 5 and report.max_error < 1e-7
