"""backward's input gradients follow the structure of the call's arguments:
the first argument's structure, or ArgumentGradients keyed by parameter name."""

import numpy as np
import pytest

from engine import ArgumentGradients, GradientTape, Input, Layer, Model, gradient_check
from engine.utils import set_random_seed
from layers import Dense, MultiHeadAttention


class Gate(Layer):
    """``x * sigmoid(gate) + bias`` with a hand-written backward; the gate is a keyword argument."""

    def build(self, input_shape):
        self.bias = self.add_weight(shape=(input_shape[-1],), initializer="ones")

    def call(self, x, gate=None):
        return x / (1 + np.exp(-gate)) + self.bias.value

    def forward(self, x, gate=None, training=True):
        s = 1 / (1 + np.exp(-gate))
        return x * s + self.bias.value, (x, s)

    def backward(self, cache, grad_outputs):
        x, s = cache
        grads = ArgumentGradients(x=grad_outputs * s, gate=grad_outputs * x * s * (1 - s))
        return grads, {self.bias: grad_outputs.sum(axis=0)}


class TracedGate(Layer):
    """The same computation in plain NumPy, traced."""

    def build(self, input_shape):
        self.bias = self.add_weight(shape=(input_shape[-1],), initializer="ones")

    def call(self, x, gate=None):
        return x / (1 + np.exp(-gate)) + self.bias


class Swapped(Gate):
    """Names a gradient for an argument its call does not have."""

    def backward(self, cache, grad_outputs):
        grads, weights = super().backward(cache, grad_outputs)
        return ArgumentGradients(x=grads["x"], gates=grads["gate"]), weights


class Miscounted(Gate):
    """Returns two gradients for the one tensor of ``x``."""

    def backward(self, cache, grad_outputs):
        grads, weights = super().backward(cache, grad_outputs)
        return ArgumentGradients(x=[grads["x"], grads["x"]], gate=grads["gate"]), weights


def gated_model(gate_layer):
    a, b = Input((3,), name="a"), Input((3,), name="b")
    gate = Dense(3, activation="tanh", name="gate_source")(b)
    return Model([a, b], Dense(2, name="head")(gate_layer(a, gate=gate)))


def data(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(4, 3)), rng.normal(size=(4, 3))]


@pytest.mark.parametrize("gate_layer", [Gate, TracedGate])
def test_gradients_reach_a_tensor_given_by_keyword(gate_layer):
    report = gradient_check(gated_model(gate_layer()), data())
    # The gate's source layer trains only if the keyword argument's gradient is routed.
    assert {"input 0", "input 1", "gate_source/kernel"} <= set(report.errors)
    assert report.max_error < 1e-6, str(report)


def test_traced_and_hand_written_backward_agree_by_argument():
    x, gate = data(1)
    hand, traced = Gate(), TracedGate()
    hand(x, gate=gate), traced(x, gate=gate)
    hand_grads, _ = hand.backward(hand.forward(x, gate=gate)[1], np.ones((4, 3)))
    traced_grads, _ = traced.backward(traced.forward(x, gate=gate)[1], np.ones((4, 3)))
    assert isinstance(traced_grads, ArgumentGradients) and set(traced_grads) == {"x", "gate"}
    for name in ("x", "gate"):
        np.testing.assert_allclose(traced_grads[name], hand_grads[name], rtol=1e-12)


def test_traced_backward_keeps_the_first_arguments_structure_when_only_it_takes_gradients():
    layer = TracedGate()
    x, gate = data(2)
    gate = gate.astype("int64")  # integers take no gradient
    layer(x, gate=gate)
    grads, _ = layer.backward(layer.forward(x, gate=gate)[1], np.ones((4, 3)))
    assert isinstance(grads, np.ndarray) and grads.shape == (4, 3)


def test_recorded_call_routes_by_argument_inside_a_gradient_tape():
    layer = Gate()
    x, gate = (np.asarray(v, "float32") for v in data(3))
    layer(x, gate=gate)
    with GradientTape() as tape:
        traced_x, traced_gate = tape.watch(x), tape.watch(gate)
        loss = np.sum(layer(traced_x, gate=traced_gate) ** 2)
    grad_x, grad_gate = tape.gradient(loss, [traced_x, traced_gate])
    _, cache = layer.forward(x, gate=gate)
    expected, _ = layer.backward(cache, 2 * layer.call(x, gate=gate))
    np.testing.assert_allclose(grad_x, expected["x"], rtol=1e-6)
    np.testing.assert_allclose(grad_gate, expected["gate"], rtol=1e-6)


def test_gradient_for_an_argument_the_call_did_not_receive_is_refused():
    model = gated_model(Swapped(name="swapped"))
    with pytest.raises(ValueError, match=r"layer 'swapped' \(Swapped\) returned gradients for \['gates'\], which "
                                         r"this call did not receive\. Its arguments were \['x', 'gate'\]"):
        gradient_check(model, data())


def test_gradients_that_do_not_match_the_arguments_structure_are_refused():
    model = gated_model(Miscounted(name="miscounted"))
    with pytest.raises(ValueError, match=r"layer 'miscounted' \(Miscounted\) returned 2 gradients for its argument "
                                         r"'x', which holds 1 tensor:"):
        gradient_check(model, data())


@pytest.mark.parametrize("with_key", [False, True])
def test_attention_in_keras_form_returns_gradients_by_argument(with_key):
    rng = np.random.default_rng(4)
    query, value, key = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 4))
    arguments = {"value": value, "key": key} if with_key else {"value": value}
    layer = MultiHeadAttention(num_heads=2, key_dim=3)
    report = gradient_check(layer, query, call_kwargs=arguments)
    assert {"input 0", *arguments} <= set(report.errors)
    assert report.max_error < 1e-6, str(report)
    grads, _ = layer.backward(layer.forward(query, **arguments)[1], np.ones((2, 3, 4)))
    assert isinstance(grads, ArgumentGradients)
    assert set(grads) == ({"query", "value", "key"} if with_key else {"query", "value"})


def test_cross_attention_inside_a_traced_layer_trains_its_value_source():
    class Decoder(Layer):
        def __init__(self):
            super().__init__()
            self.memory = Dense(4, name="memory")
            self.attention = MultiHeadAttention(num_heads=2, key_dim=2, name="cross")

        def call(self, x, context):
            return self.attention(x, self.memory(context))

    x, context = Input((3, 4)), Input((5, 2))
    model = Model([x, context], Decoder()(x, context))
    rng = np.random.default_rng(5)
    report = gradient_check(model, [rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 2))])
    assert {"input 1", "memory/kernel", "cross/value/kernel", "cross/key/kernel"} <= set(report.errors)
    assert report.max_error < 1e-6, str(report)


def _positional_cases():
    """(name, build(positional) -> (inputs, output), data): layers whose call takes
    tensors after ``inputs``, built with those tensors passed positionally or by keyword."""
    from layers import GRU, LSTM, SimpleRNN, Softmax

    rng = np.random.default_rng(0)
    sequence, state = rng.random((6, 5, 3), "float32"), rng.random((6, 4), "float32")

    def recurrent(layer_class, states):
        def build(positional):
            x, hs = Input(shape=(5, 3)), [Input(shape=(4,)) for _ in range(states)]
            layer = layer_class(4, name="rnn")
            return [x, *hs], (layer(x, hs) if positional else layer(x, initial_state=hs))
        return build, [sequence] + [state] * states

    def softmax(positional):
        x, mask = Input(shape=(6,)), Input(shape=(6,), dtype="bool")
        y = Dense(6, name="d")(x)
        return [x, mask], (Softmax()(y, mask) if positional else Softmax()(y, mask=mask))

    def attention(positional):
        q, v = Input(shape=(3, 4)), Input(shape=(5, 4))
        layer = MultiHeadAttention(num_heads=2, key_dim=2, name="mha")
        return [q, v], (layer(q, v) if positional else layer(q, value=v))

    return [
        ("LSTM(x, [h0, c0])", *recurrent(LSTM, 2)),
        ("GRU(x, [h0])", *recurrent(GRU, 1)),
        ("SimpleRNN(x, [h0])", *recurrent(SimpleRNN, 1)),
        ("Softmax()(y, mask)", softmax, [rng.random((6, 6), "float32"), rng.random((6, 6)) > 0.3]),
        ("MultiHeadAttention(q, v)", attention, [rng.random((6, 3, 4), "float32"), rng.random((6, 5, 4), "float32")]),
    ]


@pytest.mark.parametrize("name, build, data", _positional_cases(), ids=[case[0] for case in _positional_cases()])
def test_tensors_passed_positionally_train_as_when_passed_by_keyword(name, build, data):
    """forward's parameters may come in another order than call's (LSTM's forward takes
    training before initial_state): a positional argument still reaches its parameter."""
    from engine import GradientTape, Model

    trained = []
    for positional in (True, False):
        set_random_seed(7)
        inputs, output = build(positional)
        model = Model(inputs, output)
        with GradientTape() as tape:
            loss = (model(data, training=True) ** 2).sum()
        gradients = tape.gradient(loss, model.trainable_weights)
        model.compile(optimizer="sgd", loss="mse")
        target = np.zeros((6, *output.shape[1:]), "float32")
        history = model.fit(data, target, epochs=2, batch_size=3, verbose=0).history
        trained.append((gradients, history["loss"], [w.numpy() for w in model.weights]))
    (grads_p, loss_p, weights_p), (grads_k, loss_k, weights_k) = trained
    assert all(g is not None for g in grads_p)
    for a, b in zip(grads_p + weights_p, grads_k + weights_k):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert loss_p == pytest.approx(loss_k, rel=1e-6)
