"""A call's arguments bound once, on the Node: per parameter its structure and
tensor slots, read by the plan, the masks, gradient routing and the graph views."""

import numpy as np
import pytest

from engine import ArgumentGradients, GradientTape, Input, Layer, Model, gradient_check
from engine.utils import set_random_seed
from layers import LSTM, Dense, MultiHeadAttention


class Blend(Layer):
    """``inputs["a"] * w + inputs["b"]`` on a dict argument, with a hand-written backward."""

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape["a"][-1],), initializer="ones", name="w")

    def call(self, inputs):
        return inputs["a"] * self.w.value + inputs["b"]

    def forward(self, inputs, training=True):
        return self.call(inputs), inputs["a"]

    def backward(self, cache, grad_outputs):
        return {"a": grad_outputs * self.w.value, "b": grad_outputs}, {self.w: (grad_outputs * cache).sum(axis=0)}


class MisshapedBlend(Blend):
    """Returns the dict argument's gradients as a list."""

    def backward(self, cache, grad_outputs):
        grads, weights = super().backward(cache, grad_outputs)
        return [grads["a"], grads["b"]], weights


class TracedBlend(Layer):
    """The same computation without a hand-written backward: traced."""

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape["a"][-1],), initializer="ones", name="w")

    def call(self, inputs):
        return inputs["a"] * self.w + inputs["b"]


def blend_model(layer):
    a, b = Input((3,), name="a"), Input((3,), name="b")
    source = Dense(3, name="b_source")(b)
    return Model([a, b], Dense(2, name="head")(layer({"a": a, "b": source})))


def test_the_node_binds_the_call_once_per_parameter():
    x, h, c = Input((5, 3)), Input((4,)), Input((4,))
    lstm = LSTM(4)
    lstm(x, initial_state=(h, c))
    bound = lstm.inbound_nodes[0].bound_arguments
    assert bound.first == "inputs" and not bound.single
    assert bound.slots == {"inputs": range(0, 1), "initial_state": range(1, 3)}
    assert bound.tensors == [x, h, c] == lstm.inbound_nodes[0].input_tensors
    assert [bound.argument_of(i) for i in range(3)] == ["inputs", "initial_state[0]", "initial_state[1]"]
    inputs, extra, kwargs = bound.fill_in(["X", "H", "C"], [0, 1, 2])
    assert (inputs, extra, kwargs) == ("X", (), {"initial_state": ("H", "C")})  # the tuple stays a tuple
    positional = LSTM(4)
    positional(x, [h, c])
    assert positional.inbound_nodes[0].bound_arguments.slots == bound.slots


@pytest.mark.parametrize("layer_class", [Blend, TracedBlend])
def test_a_dict_argument_holding_tensors_trains(layer_class):
    report = gradient_check(blend_model(layer_class(name="blend")), [np.ones((4, 3)), np.arange(12.0).reshape(4, 3)])
    assert {"input 0", "input 1", "b_source/kernel", "blend/w"} <= set(report.errors)
    assert report.max_error < 1e-6, str(report)


def test_gradients_in_another_structure_than_the_argument_are_refused_naming_both():
    model = blend_model(MisshapedBlend(name="misshaped"))
    data = [np.ones((4, 3), "float32"), np.ones((4, 3), "float32")]
    with pytest.raises(ValueError) as error:
        with GradientTape() as tape:
            loss = model(data, training=True).sum()
        tape.gradient(loss, model.trainable_weights)
    message = str(error.value)
    assert "layer 'misshaped' (MisshapedBlend)" in message
    assert "its argument 'inputs'" in message
    assert "expected the structure {'a': tensor, 'b': tensor}, received [array, array]" in message


def _lstm_model(form):
    """A sequence and a state source; the LSTM gets its initial states in ``form``."""
    x, s = Input((5, 3), name="x"), Input((2,), name="s")
    h0, c0 = Dense(4, name="h_source")(s), Dense(4, name="c_source")(s)
    lstm = LSTM(4, name="lstm")
    if form == "positional list":
        y = lstm(x, [h0, c0])
    elif form == "keyword tuple":
        y = lstm(x, initial_state=(h0, c0))
    else:
        y = lstm([x, h0, c0])
    return Model([x, s], Dense(1, name="head")(y))


def test_lstm_initial_states_train_whether_listed_positionally_or_a_keyword_tuple():
    rng = np.random.default_rng(0)
    data = [rng.random((6, 5, 3), "float32"), rng.random((6, 2), "float32")]
    target = rng.random((6, 1), "float32")
    results = []
    for form in ("positional list", "keyword tuple", "list form"):
        set_random_seed(3)
        model = _lstm_model(form)
        with GradientTape() as tape:
            loss = ((model(data, training=True) - target) ** 2).mean()
        grads = dict(zip([w.path for w in model.trainable_weights], tape.gradient(loss, model.trainable_weights)))
        assert np.abs(grads["h_source/kernel"]).sum() > 0 and np.abs(grads["c_source/kernel"]).sum() > 0, form
        model.compile(optimizer="sgd", loss="mse")
        history = model.fit(data, target, epochs=2, batch_size=3, verbose=0).history["loss"]
        results.append((grads, history))
    (grads, history), *others = results
    for other_grads, other_history in others:
        for path, grad in grads.items():
            np.testing.assert_allclose(other_grads[path], grad, rtol=1e-5, atol=1e-7)
        assert other_history == pytest.approx(history, rel=1e-5)


def _attention_model(form):
    q, v, k = Input((3, 4), name="q"), Input((5, 2), name="v"), Input((5, 2), name="k")
    value, key = Dense(4, name="value_source")(v), Dense(4, name="key_source")(k)
    mha = MultiHeadAttention(num_heads=2, key_dim=2, name="mha")
    if form == "(q, v)":
        return Model([q, v], mha(q, value))
    if form == "(q, v, k)":
        return Model([q, v, k], mha(q, value, key))
    return Model([q, v, k], mha(q, value, key=key))


@pytest.mark.parametrize("form", ["(q, v)", "(q, v, k)", "key="])
def test_attention_trains_its_value_and_key_sources_however_called(form):
    rng = np.random.default_rng(1)
    model = _attention_model(form)
    data = [rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 2)), rng.normal(size=(2, 5, 2))][:len(model.inputs)]
    report = gradient_check(model, data)
    sources = {"value_source/kernel"} if form == "(q, v)" else {"value_source/kernel", "key_source/kernel"}
    assert sources | {"mha/key/kernel", "mha/value/kernel"} <= set(report.errors)
    assert report.max_error < 1e-6, str(report)


def test_attention_gradients_come_back_in_the_structure_of_the_call():
    rng = np.random.default_rng(2)
    query, value, key = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 4))
    layer = MultiHeadAttention(num_heads=2, key_dim=3)
    grad_out = np.ones((2, 3, 4))
    listed, _ = layer.backward(layer.forward([query, value, key])[1], grad_out)
    by_keyword, _ = layer.backward(layer.forward(query, value, key=key)[1], grad_out)
    without_key, _ = layer.backward(layer.forward(query, value)[1], grad_out)
    assert isinstance(listed, list) and len(listed) == 3
    assert isinstance(by_keyword, ArgumentGradients) and set(by_keyword) == {"query", "value", "key"}
    assert set(without_key) == {"query", "value"}
    # Without a key, the value serves as key too: its gradient is the sum of both.
    _, grad_value, grad_key = layer.backward(layer.forward([query, value, value])[1], grad_out)[0]
    np.testing.assert_allclose(without_key["value"], grad_value + grad_key, rtol=1e-6)
