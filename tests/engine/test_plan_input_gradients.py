"""Backward leaves out the input gradients nobody reads (issue 29): the first layer's in ``fit``."""

import numpy as np

from engine import GradientTape, Input, Model
from layers import BatchNormalization, Conv2D, Dense, Flatten


class RecordingDense(Dense):
    """A Dense that records the ``input_gradient`` each backward receives."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.received = []

    def backward(self, cache, grad_outputs, input_gradient=True):
        self.received.append(input_gradient)
        return super().backward(cache, grad_outputs, input_gradient=input_gradient)


def _model():
    x = Input(shape=(6, 6, 2))
    y = BatchNormalization(name="bn")(Conv2D(3, 3, name="conv")(x))
    first = RecordingDense(4, activation="tanh", name="first")
    second = RecordingDense(2, name="second")
    return Model(x, second(first(Flatten()(y)))), first, second


def _backward(model, data, input_gradients):
    outputs, tape = model.plan.forward([data])
    grad_inputs, grads = model.plan.backward(tape, [np.ones_like(outputs[0])], input_gradients=input_gradients)
    return grad_inputs, {v.path: g for v, g in grads.items()}


def test_the_first_layer_skips_its_input_gradient_and_the_weight_gradients_stay_the_same():
    model, first, second = _model()
    data = np.random.default_rng(0).normal(size=(3, 6, 6, 2)).astype("float32")
    assert model.plan.input_gradients_read(input_gradients=False) == [False, True, True, True, True]
    full_inputs, full = _backward(model, data, input_gradients=True)
    skipped_inputs, skipped = _backward(model, data, input_gradients=False)
    assert full_inputs[0].shape == data.shape and skipped_inputs == [None]
    assert set(full) == set(skipped) == {v.path for v in model.trainable_weights}
    for path, grad in full.items():
        np.testing.assert_allclose(skipped[path], grad, rtol=1e-6, err_msg=path)
    assert first.received == [True, True] and second.received == [True, True]


def test_each_layer_that_can_skip_returns_no_input_gradient_and_the_same_weight_gradients():
    data = np.random.default_rng(1).normal(size=(2, 5, 5, 3)).astype("float32")
    for layer in (Conv2D(4, 3, padding="same"), Dense(3), BatchNormalization()):
        layer(data)  # builds the weights
        outputs, cache = layer.forward(data, training=True)
        grad_outputs = np.random.default_rng(2).normal(size=outputs.shape).astype("float32")
        grad_in, grads = layer.backward(cache, grad_outputs)
        skipped_in, skipped = layer.backward(cache, grad_outputs, input_gradient=False)
        assert grad_in.shape == data.shape and skipped_in is None, layer.name
        assert set(grads) == set(skipped), layer.name
        for variable, grad in grads.items():
            np.testing.assert_array_equal(skipped[variable], grad, err_msg=variable.path)


def test_a_first_dense_is_told_to_skip_in_fit():
    x = Input(shape=(3,))
    first, second = RecordingDense(4, name="first"), RecordingDense(1, name="second")
    model = Model(x, second(first(x)))
    model.compile(optimizer="sgd", loss="mse")
    model.train_on_batch(np.ones((2, 3), "float32"), np.zeros((2, 1), "float32"))
    assert first.received == [False] and second.received == [True]


def test_frozen_layers_whose_input_gradient_nobody_reads_are_left_out_of_backward():
    x = Input(shape=(3,))
    frozen, top = RecordingDense(4, name="frozen"), RecordingDense(1, name="top")
    frozen.trainable = False
    model = Model(x, top(frozen(x)))
    outputs, tape = model.plan.forward([np.ones((2, 3), "float32")])
    _, grads = model.plan.backward(tape, [np.ones_like(outputs[0])], input_gradients=False)
    assert frozen.received == [] and top.received == [False]
    assert set(grads) == set(top.trainable_weights)
    # Asked for the input gradient, the frozen layer computes it.
    outputs, tape = model.plan.forward([np.ones((2, 3), "float32")])
    grad_inputs, _ = model.plan.backward(tape, [np.ones_like(outputs[0])])
    assert frozen.received == [True] and grad_inputs[0].shape == (2, 3)


def test_a_gradient_tape_still_gets_the_gradient_of_a_model_input():
    model, first, _ = _model()
    data = np.random.default_rng(3).normal(size=(2, 6, 6, 2)).astype("float32")
    with GradientTape() as tape:
        watched = tape.watch(data)
        loss = model(watched, training=True).sum()
    grad = tape.gradient(loss, watched)
    expected, _ = _backward(model, data, input_gradients=True)
    assert grad is not None and grad.shape == data.shape
    np.testing.assert_allclose(np.asarray(grad), expected[0], rtol=1e-4, atol=1e-6)
    assert first.received[-1] is True
