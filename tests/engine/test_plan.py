"""Backward over the execution plan: fan-out, shared layers, nesting, freezing."""

import numpy as np
import pytest

from engine import Input, Layer, Model
from engine.network.gradient_check import gradient_check
from layers import Dense


def test_gradients_sum_at_fan_out_and_across_shared_layer_calls():
    a = Input(shape=(3,), name="a")
    b = Input(shape=(3,), name="b")
    shared = Dense(3, activation="tanh", name="shared")
    h = shared(a)
    fan = Dense(2, name="left")(h) * Dense(2, name="right")(h)   # h feeds two layers
    out = fan + Dense(2, name="from_b")(shared(b))               # shared called twice
    model = Model([a, b], [out, h[:, :1]])
    report = gradient_check(model, [np.random.rand(4, 3), np.random.rand(4, 3)])
    assert "shared/kernel" in report.errors
    assert report.max_error < 1e-6, str(report)


def test_nested_models_take_part_like_any_layer():
    x = Input(shape=(3,))
    inner = Model(x, Dense(3, activation="sigmoid", name="inner_dense")(x), name="inner")
    z = Input(shape=(3,))
    y = inner(z)
    outer = Model(z, Dense(1, name="top")(inner(y) - y))
    report = gradient_check(outer, np.random.rand(2, 3))
    assert set(report.errors) == {"input 0", "inner_dense/kernel", "inner_dense/bias", "top/kernel", "top/bias"}
    assert report.max_error < 1e-6, str(report)


def _weight_grads(model, data):
    outputs, tape = model.plan.forward([data])
    _, grads = model.plan.backward(tape, [np.ones_like(outputs[0])])
    return {v.path: g for v, g in grads.items()}


def test_frozen_layers_and_non_trainable_weights_get_no_gradient():
    class Scaled(Layer):
        def build(self, input_shape):
            self.scale = self.add_weight(shape=(), initializer="ones", trainable=False, name="scale")

        def compute_output_shape(self, input_shape):
            return input_shape

        def call(self, inputs):
            return inputs * self.scale.value

        def backward(self, cache, grad_outputs):
            return grad_outputs * self.scale.value, {self.scale: np.sum(grad_outputs * cache)}

    x = Input(shape=(2,))
    frozen = Dense(2, name="frozen")
    model = Model(x, Dense(1, name="head")(Scaled(name="scaled")(frozen(x))))
    data = np.random.rand(3, 2).astype("float32")
    assert set(_weight_grads(model, data)) == {"frozen/kernel", "frozen/bias", "head/kernel", "head/bias"}
    frozen.trainable = False
    assert set(_weight_grads(model, data)) == {"head/kernel", "head/bias"}


def test_a_layer_without_backward_is_traced_and_an_untraceable_one_says_why():
    class Square(Layer):
        def call(self, inputs):
            return inputs**2

    class Sorted(Layer):
        def call(self, inputs):
            return np.sort(inputs, axis=-1)

    x = Input(shape=(2,))
    model = Model(x, Dense(1, name="head")(Square()(x)))
    data = np.array([[1.0, -2.0]], "float32")
    outputs, tape = model.plan.forward([data])
    grads, _ = model.plan.backward(tape, [np.ones((1, 1), "float32")])
    np.testing.assert_allclose(grads[0], 2 * data * model.get_layer("head").kernel.value[:, 0], rtol=1e-6)
    sorting = Model(x, Sorted()(x))
    assert sorting(data).tolist() == [[-2.0, 1.0]]
    with pytest.raises(NotImplementedError, match=r"numpy.sort cannot be traced in layer 'sorted' \(Sorted\): it "
                                                  r"has no derivative rule.*hand-written `forward`/`backward`"):
        sorting.plan.forward([data])


def test_unused_output_of_a_step_gets_zero_gradient():
    class Split(Layer):
        def compute_output_shape(self, input_shape):
            return [input_shape, input_shape]

        def call(self, inputs):
            return [inputs * 2.0, inputs * 3.0]

        def backward(self, cache, grad_outputs):
            return 2.0 * grad_outputs[0] + 3.0 * grad_outputs[1], {}

    x = Input(shape=(2,))
    doubled, _ = Split()(x)
    model = Model(x, doubled)
    outputs, tape = model.plan.forward([np.ones((1, 2))])
    grads, _ = model.plan.backward(tape, [np.ones((1, 2))])
    np.testing.assert_array_equal(grads[0], [[2.0, 2.0]])


def test_masks_flow_from_the_layer_that_makes_them_to_the_layers_that_take_them():
    from layers.embedding import Embedding

    seen = []

    class PassThrough(Layer):
        supports_masking = True

        def compute_output_shape(self, input_shape):
            return input_shape

        def call(self, inputs):
            return inputs

    class MaskedMean(Layer):
        def compute_output_shape(self, input_shape):
            return (input_shape[0], input_shape[2])

        def call(self, inputs, mask=None):
            seen.append(mask)
            weights = mask[..., None].astype(inputs.dtype)
            return (inputs * weights).sum(axis=1) / weights.sum(axis=1)

    ids = Input(shape=(4,), dtype="int32")
    model = Model(ids, MaskedMean()(PassThrough()(Embedding(10, 3, mask_zero=True)(ids))))
    assert model.plan.uses_masks
    tokens = np.array([[1, 2, 0, 0], [3, 0, 0, 0]], "int32")
    out = model(tokens)
    np.testing.assert_array_equal(seen[0], tokens != 0)
    table = model.layers[1].embeddings.value
    np.testing.assert_allclose(out[1], table[3], rtol=1e-6)
    model.plan.forward([tokens])  # the training path passes masks too
    np.testing.assert_array_equal(seen[1], tokens != 0)


def test_models_without_mask_makers_skip_mask_bookkeeping():
    x = Input(shape=(2,))
    assert not Model(x, Dense(1)(x)).plan.uses_masks


def test_a_training_pass_on_an_empty_batch_has_no_activity_penalty():
    from layers import Dense

    x = Input(shape=(3,))
    model = Model(x, Dense(2, activity_regularizer="l2")(x))
    outputs, tape = model.plan.forward([np.zeros((0, 3), "float32")])
    assert outputs[0].shape == (0, 2) and tape.activity_loss == 0.0
    _, weight_grads = model.plan.backward(tape, [np.zeros((0, 2), "float32")])
    assert all(np.all(grad == 0) for grad in weight_grads.values())


def test_steps_and_plans_print_as_calls_reading_and_making_tensors():
    a, b = Input(shape=(3,), name="a"), Input(shape=(3,), name="b")
    shared = Dense(2, name="shared")
    plan = Model([a, b], shared(a) + shared(b)).plan
    assert repr(plan.steps[1]) == "shared[1]: (b[0][0]) -> (shared[1][0])"
    lines = repr(plan).split("\n")
    assert lines[0].startswith("ExecutionPlan of 3 steps, inputs (a[0][0], b[0][0]) -> outputs (")
    assert lines[1:3] == ["  shared[0]: (a[0][0]) -> (shared[0][0])", "  shared[1]: (b[0][0]) -> (shared[1][0])"]


def test_a_big_plan_prints_its_first_and_last_steps():
    x = h = Input(shape=(3,), name="x")
    for index in range(50):
        h = Dense(3, name=f"d{index}")(h)
    lines = repr(Model(x, h).plan).split("\n")
    assert len(lines) == 22 and lines[11] == "  ... 30 more steps ..."
    assert lines[1] == "  d0[0]: (x[0][0]) -> (d0[0][0])" and lines[-1] == "  d49[0]: (d48[0][0]) -> (d49[0][0])"
