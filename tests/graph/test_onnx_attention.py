"""The attention ONNX converters (layers/_onnx/attention.py) against ``predict`` in ONNX Runtime:
MultiHeadAttention in its call forms, with attention masks (graph inputs or constants) and causal
masks at any sequence length, Attention's score modes, and a transformer block; weights off their
initial values, at two batch sizes (``assert_exports_match``)."""

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="ONNX Runtime is not installed (pip install 'nodeweave[test]')")

import layers as L  # noqa: E402
from engine import Input, Model  # noqa: E402
from tests.graph.onnx_check import assert_exports_match  # noqa: E402

RNG = np.random.default_rng(0)
QUERY = RNG.uniform(-2, 2, (2, 5, 8)).astype("float32")
VALUE = RNG.uniform(-2, 2, (2, 6, 7)).astype("float32")
KEY = RNG.uniform(-2, 2, (2, 6, 4)).astype("float32")


def _randomized(model, seed=0):
    """``model`` with every weight drawn uniformly from [-1, 1]."""
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        weight.assign(rng.uniform(-1, 1, weight.shape).astype("float32"))
    return model


def _op_types(proto):
    return [node.op_type for node in proto.graph.node]


@pytest.mark.parametrize("options, call_options", [
    ({}, {}),
    ({"value_dim": 5, "use_bias": False, "output_shape": (2, 3)}, {}),
    ({"output_shape": 4, "attention_axes": (1,)}, {"return_attention_scores": True}),
    ({}, {"use_causal_mask": True, "return_attention_scores": True}),
])
@pytest.mark.parametrize("form", ["query, value, key", "value=", "[query, value, key]", "[query, value]"])
def test_multi_head_attention_matches_in_every_call_form(options, call_options, form):
    query, value, key = Input(shape=(5, 8)), Input(shape=(6, 7)), Input(shape=(6, 4))
    layer = L.MultiHeadAttention(num_heads=3, key_dim=2, **options)
    inputs, data = [query, value, key], [QUERY, VALUE, KEY]
    if form == "query, value, key":
        outputs = layer(query, value, key, **call_options)
    elif form == "[query, value, key]":
        outputs = layer([query, value, key], **call_options)
    elif form == "value=":
        inputs, data = inputs[:2], data[:2]
        outputs = layer(query, value=value, **call_options)
    else:
        inputs, data = inputs[:2], data[:2]
        outputs = layer([query, value], **call_options)
    assert_exports_match(_randomized(Model(inputs, outputs)), data)


@pytest.mark.parametrize("dtype", ["bool", "float32"])
@pytest.mark.parametrize("mask_shape", [(5, 6), (3, 5, 6)])
def test_an_attention_mask_tensor_is_an_input_of_the_graph(dtype, mask_shape):
    mask = RNG.random((2, *mask_shape)) > 0.4
    mask[..., 1, :] = False  # a whole row masked: that position's output is the output bias
    attention_mask, query, value = Input(shape=mask_shape, dtype=dtype), Input(shape=(5, 8)), Input(shape=(6, 7))
    outputs = L.MultiHeadAttention(3, 2)(query, value, attention_mask=attention_mask, return_attention_scores=True)
    model = _randomized(Model([attention_mask, query, value], outputs))
    proto = assert_exports_match(model, [mask.astype(dtype), QUERY, VALUE])
    assert len(proto.graph.input) == 3


def test_an_attention_mask_array_is_a_constant_combined_with_the_causal_mask():
    x = Input(shape=(5, 8))
    band = np.tri(5, 5, dtype=bool) & ~np.tri(5, 5, -3, dtype=bool)
    model = _randomized(Model(x, L.MultiHeadAttention(2, 4)(x, x, attention_mask=band[::-1].copy(),
                                                           use_causal_mask=True)))
    proto = assert_exports_match(model, QUERY)
    assert len(proto.graph.input) == 1 and "And" in _op_types(proto)


def test_a_causal_mask_follows_the_sequence_length():
    x = Input(shape=(None, 8))
    model = _randomized(Model(x, L.MultiHeadAttention(2, 4)(x, x, use_causal_mask=True)))
    for steps in (5, 9):
        proto = assert_exports_match(model, RNG.uniform(-2, 2, (2, steps, 8)).astype("float32"))
    assert "Trilu" in _op_types(proto)


@pytest.mark.parametrize("options", [{}, {"use_scale": True}, {"score_mode": "concat"},
                                     {"score_mode": "concat", "use_scale": True}])
@pytest.mark.parametrize("call_options", [{}, {"use_causal_mask": True, "return_attention_scores": True}])
@pytest.mark.parametrize("with_key", [False, True])
def test_attention_matches_in_every_score_mode(options, call_options, with_key):
    # Without a key, the value is the key: it has the query's features.
    query, value, key = Input(shape=(None, 8)), Input(shape=(None, 3 if with_key else 8)), Input(shape=(None, 8))
    inputs = [query, value, key] if with_key else [query, value]
    model = _randomized(Model(inputs, L.Attention(**options)(inputs, **call_options)))
    key_data = RNG.uniform(-2, 2, (2, 6, 8)).astype("float32")
    data = [QUERY, VALUE[..., :3], key_data] if with_key else [QUERY, key_data]
    assert_exports_match(model, data)


def test_a_transformer_block_matches_at_any_length():
    x = Input(shape=(None, 16), name="tokens")
    attended = L.MultiHeadAttention(4, 4, name="attention")(x, x, use_causal_mask=True)
    h = L.LayerNormalization(epsilon=1e-6)(L.Add()([x, attended]))
    feed_forward = L.Dense(16, name="ff_out")(L.Dense(32, activation="gelu", name="ff_in")(h))
    y = L.LayerNormalization(epsilon=1e-6)(L.Add()([h, feed_forward]))
    model = _randomized(Model(x, y))
    for steps in (7, 12):
        proto = assert_exports_match(model, RNG.uniform(-2, 2, (2, steps, 16)).astype("float32"))
    assert {"Softmax", "LayerNormalization", "Trilu"} <= set(_op_types(proto))
