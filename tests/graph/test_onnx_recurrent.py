"""The recurrent ONNX converters (layers/_onnx/recurrent.py) against ``predict`` in ONNX Runtime:
SimpleRNN, LSTM and GRU as ONNX's operators and unrolled, their initial states in every call
form, Bidirectional in every merge mode, TimeDistributed, and an encoder-decoder; weights off
their initial values, at two batch sizes (``assert_exports_match``)."""

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="ONNX Runtime is not installed (pip install 'nodeweave[test]')")

import layers as L  # noqa: E402
from engine import Input, Model  # noqa: E402
from graph.onnx_export import OnnxExportError, to_onnx  # noqa: E402
from tests.graph.onnx_check import assert_exports_match  # noqa: E402

RNG = np.random.default_rng(0)
SEQUENCES = RNG.uniform(-2, 2, (2, 5, 3)).astype("float32")
OPERATOR = {L.SimpleRNN: "RNN", L.LSTM: "LSTM", L.GRU: "GRU"}


def _randomized(model, seed=0):
    """``model`` with every weight drawn uniformly from [-0.7, 0.7]."""
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        weight.assign(rng.uniform(-0.7, 0.7, weight.shape).astype("float32"))
    return model


def _one_layer(layer, shape=(5, 3)):
    x = Input(shape=shape)
    return _randomized(Model(x, layer(x)))


def _op_types(proto):
    return [node.op_type for node in proto.graph.node]


CASES = [
    {},
    {"return_sequences": True},
    {"return_state": True},
    {"go_backwards": True, "return_sequences": True, "return_state": True},
    {"use_bias": False, "return_sequences": True},
    {"activation": "relu"},
    {"activation": "gelu", "return_sequences": True, "return_state": True},  # unrolled
    {"activation": "selu", "go_backwards": True, "return_sequences": True},  # unrolled
    {"activation": "silu", "use_bias": False},  # unrolled
    {"activation": "softplus", "return_sequences": True},  # unrolled
]
GATED_CASES = [
    {"recurrent_activation": "hard_sigmoid", "activation": "softsign"},
    {"recurrent_activation": "silu", "return_sequences": True},  # unrolled
]
GRU_CASES = [
    {"reset_after": False, "return_sequences": True},
    {"reset_after": False, "use_bias": False},
    {"reset_after": False, "activation": "gelu", "return_state": True},  # unrolled
]


@pytest.mark.parametrize("layer_class, options", [
    *[(cls, options) for cls in OPERATOR for options in CASES],
    *[(cls, options) for cls in (L.LSTM, L.GRU) for options in GATED_CASES],
    *[(L.GRU, options) for options in GRU_CASES],
])
def test_a_recurrent_layer_matches_as_onnx_operator_or_unrolled(layer_class, options):
    proto = assert_exports_match(_one_layer(layer_class(4, **options)), SEQUENCES)
    layer = layer_class(4, **options)
    activations = [layer.activation, getattr(layer, "recurrent_activation", layer.activation)]
    unrolled = any(f.__name__ in ("gelu", "selu", "silu", "softplus") for f in activations)
    assert (OPERATOR[layer_class] in _op_types(proto)) is not unrolled
    if unrolled:
        assert _op_types(proto).count("MatMul") == 1 + 5 * (1 + (options.get("reset_after") is False))


@pytest.mark.parametrize("layer_class", list(OPERATOR))
@pytest.mark.parametrize("name", ["linear", "elu", "leaky_relu", "softsign", "hard_sigmoid", "sigmoid"])
def test_every_activation_of_the_operators_keeps_the_operator(layer_class, name):
    gates = {} if layer_class is L.SimpleRNN else {"recurrent_activation": name}
    # Small inputs: with linear gates an LSTM's carry grows without bound.
    proto = assert_exports_match(_one_layer(layer_class(4, activation=name, return_sequences=True, **gates)),
                                 SEQUENCES * 0.25)
    assert OPERATOR[layer_class] in _op_types(proto)


@pytest.mark.parametrize("layer_class", list(OPERATOR))
@pytest.mark.parametrize("form", ["positional", "initial_state=", "list"])
@pytest.mark.parametrize("activation", ["tanh", "gelu"])
def test_initial_states_are_inputs_in_every_call_form(layer_class, form, activation):
    layer = layer_class(4, activation=activation, return_sequences=True, return_state=True)
    x = Input(shape=(5, 3))
    states = [Input(shape=(4,)) for _ in range(layer._num_states)]
    if form == "positional":
        outputs = layer(x, states)
    elif form == "initial_state=":
        outputs = layer(x, initial_state=states)
    else:
        outputs = layer([x, *states])
    model = _randomized(Model([x, *states], outputs))
    state_values = [RNG.uniform(-1, 1, (2, 4)).astype("float32") for _ in states]
    proto = assert_exports_match(model, [SEQUENCES, *state_values])
    assert len(proto.graph.input) == 1 + len(states)


def test_softplus_is_unrolled_where_the_operators_overflow():
    # ONNX Runtime's RNN computes softplus(101) as log(1 + exp(101)) = inf; Keras gives 101.
    x = Input(shape=(3, 1))
    model = Model(x, L.SimpleRNN(1, activation="softplus", return_sequences=True)(x))
    for weight in model.weights:
        weight.assign(np.ones(weight.shape, "float32"))
    proto = assert_exports_match(model, np.array([[[100.0], [-100.0], [5.0]]], "float32"))
    assert "RNN" not in _op_types(proto)


def test_an_unrolled_layer_needs_a_fixed_sequence_length():
    model = _one_layer(L.GRU(4, activation="gelu"), shape=(None, 3))
    with pytest.raises(OnnxExportError, match=r"'gru.*' \(GRU\).*activations \(gelu, sigmoid\).*fixed sequence "
                                              r"length.*shape=\(timesteps, features\)"):
        to_onnx(model)


def test_an_operator_layer_takes_any_sequence_length():
    model = _one_layer(L.LSTM(4, return_sequences=True, go_backwards=True), shape=(None, 3))
    for steps in (5, 9):
        assert_exports_match(model, RNG.uniform(-2, 2, (2, steps, 3)).astype("float32"))


@pytest.mark.parametrize("layer_class", list(OPERATOR))
@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
@pytest.mark.parametrize("return_sequences", [False, True])
def test_bidirectional_is_one_operator_in_every_merge_mode(layer_class, merge_mode, return_sequences):
    layer = L.Bidirectional(layer_class(4, return_sequences=return_sequences), merge_mode=merge_mode)
    proto = assert_exports_match(_one_layer(layer), SEQUENCES)
    operators = [n for n in proto.graph.node if n.op_type == OPERATOR[layer_class]]
    assert [a.s for n in operators for a in n.attribute if a.name == "direction"] == [b"bidirectional"]


@pytest.mark.parametrize("layer_class", list(OPERATOR))
def test_bidirectional_returns_its_states_from_its_initial_states(layer_class):
    layer = L.Bidirectional(layer_class(4, return_sequences=True, return_state=True), merge_mode="ave")
    x = Input(shape=(5, 3))
    states = [Input(shape=(4,)) for _ in range(2 * layer.forward_layer._num_states)]
    model = _randomized(Model([x, *states], layer(x, initial_state=states)))
    assert_exports_match(model, [SEQUENCES, *[RNG.uniform(-1, 1, (2, 4)).astype("float32") for _ in states]])


@pytest.mark.parametrize("backward", [
    lambda: L.LSTM(3, go_backwards=True, return_sequences=True, return_state=True),  # other units
    lambda: L.LSTM(4, activation="gelu", go_backwards=True, return_sequences=True, return_state=True),  # unrolled
])
def test_bidirectional_with_another_backward_layer_runs_each_direction(backward):
    layer = L.Bidirectional(L.LSTM(4, return_sequences=True, return_state=True), backward_layer=backward())
    proto = assert_exports_match(_one_layer(layer), SEQUENCES)
    assert _op_types(proto).count("LSTM") == (2 if backward().units == 3 else 1)


def test_time_distributed_folds_time_into_the_batch_around_its_layer():
    proto = assert_exports_match(_one_layer(L.TimeDistributed(L.Dense(6, activation="relu", name="inner"))),
                                 SEQUENCES)
    assert "time_distributed/inner/MatMul" in [n.name for n in proto.graph.node]
    images = RNG.uniform(-1, 1, (2, 4, 6, 6, 2)).astype("float32")
    assert_exports_match(_one_layer(L.TimeDistributed(L.Conv2D(3, 3, padding="same")), shape=(None, 6, 6, 2)),
                         images, atol=1e-4)


def test_an_lstm_gru_encoder_decoder_matches_at_any_length():
    tokens = Input(shape=(None, 3), name="source")
    target = Input(shape=(None, 2), name="target")
    encoded = L.Bidirectional(L.LSTM(6, return_sequences=True))(tokens)
    _, state = L.GRU(8, return_state=True, name="encoder")(encoded)
    decoded = L.GRU(8, return_sequences=True, name="decoder")(target, initial_state=state)
    outputs = L.TimeDistributed(L.Dense(4, activation="softmax"))(decoded)
    model = _randomized(Model([tokens, target], outputs))
    for steps in (5, 8):
        source = RNG.uniform(-2, 2, (2, steps, 3)).astype("float32")
        assert_exports_match(model, [source, RNG.uniform(-2, 2, (2, steps - 1, 2)).astype("float32")])
