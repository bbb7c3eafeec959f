"""Keras 3 models read by nodeweave: `.keras` archives through load_model, Keras'
to_json through model_from_json and Keras' get_config through from_config.
Each model is built and saved by Keras in the test, with its statistics moved
off their initial values; the model we load must give Keras' outputs."""

import json
import zipfile

import keras
import numpy as np
import pytest
from keras import layers, ops

import engine
from engine import Model, Sequential, load_model, model_from_json
from engine.network.ops import BinaryOp, GetItem, ReshapeOp, Round, SqueezeOp, UnaryOp
from graph import cli
import layers as engine_layers
from tests.keras_format.read_helpers import assert_same_model, perturb, save_keras, summary_totals


def shared_nested_dict_model():
    """Shared layers, op nodes with constants on either side and between two
    tensors, mask=None on a layer's call, a nested Sequential and a nested
    Functional each called twice, keras.layers.Add, and dict outputs."""
    x, y = keras.Input((4,), name="x"), keras.Input((4,), name="y")
    shared = layers.Dense(3, name="shared")
    a, b = shared(x), shared(y)
    normalized = layers.BatchNormalization(name="bn")(a + 3.0, mask=None)
    product = a * b
    scaled = 2.0 - product
    inner_sequential = keras.Sequential([keras.Input((3,)), layers.Dense(2, activation="tanh")], name="inner_seq")
    inner_in = keras.Input((3,))
    inner_functional = keras.Model(inner_in, layers.Dense(2)(layers.LayerNormalization()(inner_in)), name="inner_fn")
    first, second = inner_sequential(normalized), inner_sequential(scaled)
    third, fourth = inner_functional(product), inner_functional(normalized)
    return keras.Model([x, y], {"p": first, "q": layers.Add()([second, third]), "r": fourth / 4.0})


def masked_recurrent_model():
    tokens = keras.Input((6,), dtype="int32", name="tokens")
    embedded = layers.Embedding(12, 5, mask_zero=True)(tokens)
    sequence = layers.LSTM(4, return_sequences=True)(embedded)
    sequence = layers.Bidirectional(layers.GRU(3, return_sequences=True))(sequence)
    return keras.Model(tokens, layers.SimpleRNN(2)(sequence))


def masked_nested_model():
    """A masked sequence into nested models, whose calls Keras records with
    mask=None; Keras drops the mask at their boundary (with a warning), so
    must the model we load."""
    tokens = keras.Input((6,), dtype="int32")
    embedded = layers.Embedding(12, 4, mask_zero=True)(tokens)
    recurrent = keras.Sequential([keras.Input((6, 4)), layers.LSTM(3, return_sequences=True)], name="recurrent")
    pooled_in = keras.Input((6, 3))
    pooling = keras.Model(pooled_in, layers.GRU(2)(pooled_in), name="pooling")
    return keras.Model(tokens, pooling(recurrent(embedded)))


def attention_model():
    """Layers whose weights Keras keeps in sub-layers (MultiHeadAttention's
    dense projections, TimeDistributed's layer) or in odd shapes (PReLU)."""
    x = keras.Input((5, 4))
    projected = layers.TimeDistributed(layers.Dense(4))(x)
    attended = layers.MultiHeadAttention(2, 3)(projected, x)
    scored = layers.Attention(use_scale=True)([attended, x])
    return keras.Model(x, layers.PReLU()(scored))


def sequential_model():
    return keras.Sequential([
        keras.Input((8, 8, 3)),
        layers.Conv2D(4, 3, activation="relu"),
        layers.BatchNormalization(),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(3, activation="softmax"),
    ], name="stack")


def operator_model():
    """Keras op nodes: indexing, reshape, squeeze, unary ops, powers, matmul,
    comparisons, round."""
    x = keras.Input((4, 6), name="x")
    sliced = x[:, 1:3, ::2]
    flat = ops.reshape(sliced, (-1, 6))
    squeezed = ops.squeeze(ops.reshape(flat, (-1, 1, 6)), axis=1)
    value = 2.0 / (abs(-squeezed) + 1.0) - squeezed ** 2
    product = x @ ops.reshape(x[:, 0], (-1, 6, 1))
    return keras.Model(x, [round(value, 1), x[..., None, 1], product, x > 0.5])


OPERATOR_LAYERS = (BinaryOp, GetItem, ReshapeOp, Round, SqueezeOp, UnaryOp)
BUILDERS = [shared_nested_dict_model, masked_recurrent_model, masked_nested_model, attention_model, sequential_model]


def _inputs(model, rng):
    arrays = []
    for tensor in model.inputs:
        shape = (3, *tensor.shape[1:])
        if "int" in str(tensor.dtype):
            arrays.append(np.where(np.arange(shape[1]) < rng.integers(1, shape[1], (3, 1)),
                                   rng.integers(1, 12, shape), 0).astype("int32"))
        else:
            arrays.append(rng.normal(size=shape).astype("float32"))
    return arrays[0] if len(arrays) == 1 else arrays


def _layer_names(model):
    """The names of the model's layers other than operator layers (Keras' ops are not layers)."""
    return [layer.name for layer in model.layers if not isinstance(layer, OPERATOR_LAYERS)]


@pytest.mark.parametrize("build", BUILDERS, ids=lambda build: build.__name__)
def test_load_model_reads_keras_archive(build, tmp_path):
    keras_model = build()
    perturb(keras_model)
    ours = load_model(save_keras(keras_model, tmp_path))
    assert _layer_names(ours) == [layer.name for layer in keras_model.layers]
    assert_same_model(keras_model, ours, _inputs(keras_model, np.random.default_rng(0)))


def test_keras_op_nodes_become_operator_layers(tmp_path):
    keras_model = operator_model()
    ours = load_model(save_keras(keras_model, tmp_path))
    inputs = np.random.default_rng(1).normal(size=(2, 4, 6)).astype("float32")
    for want, got in zip(keras_model(inputs), ours(inputs)):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5, atol=1e-6)
    binary = {layer.op: layer for layer in ours.layers if isinstance(layer, BinaryOp)}
    assert (binary["divide"].constant, binary["divide"].constant_position) == (2.0, "left")
    assert (binary["greater"].constant, binary["greater"].constant_position) == (0.5, "right")
    assert binary["subtract"].constant is None  # between two tensors


def test_mask_none_in_a_keras_call_loads(tmp_path):
    keras_model = shared_nested_dict_model()
    path = save_keras(keras_model, tmp_path)
    config = json.loads(zipfile.ZipFile(path).read("config.json"))
    bn = next(entry for entry in config["config"]["layers"] if entry["name"] == "bn")
    assert bn["inbound_nodes"][0]["kwargs"] == {"mask": None}
    assert load_model(path).get_layer("bn").output.shape == (None, 3)


@pytest.mark.parametrize("build", BUILDERS, ids=lambda build: build.__name__)
def test_model_from_json_reads_keras_json(build):
    keras_model = build()
    ours = model_from_json(keras_model.to_json())
    assert type(ours) is (Sequential if isinstance(keras_model, keras.Sequential) else engine.Functional)
    assert _layer_names(ours) == [layer.name for layer in keras_model.layers]
    assert ours.count_params() == keras_model.count_params()
    assert summary_totals(ours) == summary_totals(keras_model)


def test_from_config_reads_keras_get_config():
    functional = shared_nested_dict_model()
    ours = Model.from_config(functional.get_config())
    outputs = ours([np.ones((1, 4), "float32")] * 2)
    assert sorted(outputs) == ["p", "q", "r"]
    assert ours.count_params() == functional.count_params()
    stack = sequential_model()
    rebuilt = Sequential.from_config(stack.get_config())
    assert isinstance(rebuilt, Sequential) and rebuilt.name == "stack"
    assert [layer.name for layer in rebuilt.layers] == [layer.name for layer in stack.layers]
    assert rebuilt.count_params() == stack.count_params()


def test_cli_summary_opens_a_keras_file(tmp_path, capsys):
    keras_model = sequential_model()
    path = save_keras(keras_model, tmp_path)
    cli.main(["summary", path])
    printed = capsys.readouterr().out
    assert f"Total params: {keras_model.count_params():,}" in printed
    assert "conv2d" in printed
    cli.main(["inspect", path, "--layer", keras_model.layers[1].name])
    printed = capsys.readouterr().out
    assert keras_model.layers[0].name in printed and keras_model.layers[2].name in printed


def test_tuple_wrappers_read_as_tuples():
    """Keras 3.15 writes tuples as lists, but its legacy JSON (and nodeweave's
    writer) wraps them as {"class_name": "__tuple__", ...}: outputs stay a tuple."""
    a, b = keras.Input((3,), name="a"), keras.Input((2,), name="b")
    config = json.loads(keras.Model([a, b], [layers.Concatenate()([a, b]), layers.Dense(1)(a)]).to_json())

    def as_tuple(value):
        return {"class_name": "__tuple__", "config": {"value": value}}

    concatenate = next(entry for entry in config["config"]["layers"] if entry["class_name"] == "Concatenate")
    concatenate["inbound_nodes"][0]["args"][0] = as_tuple(concatenate["inbound_nodes"][0]["args"][0])
    config["config"]["output_layers"] = as_tuple(config["config"]["output_layers"])
    outputs = model_from_json(json.dumps(config))([np.ones((2, 3), "float32"), np.ones((2, 2), "float32")])
    assert isinstance(outputs, tuple) and [o.shape for o in outputs] == [(2, 5), (2, 1)]


def test_a_trained_model_loads_with_its_optimizer_state_in_the_file(tmp_path):
    # model.weights.h5 of a compiled model also holds the optimizer's slots (Adam: 2 per weight).
    x = keras.Input((600,))
    keras_model = keras.Model(x, layers.Dense(600)(x))
    keras_model.compile(optimizer="adam", loss="mse")
    data = np.random.default_rng(0).normal(size=(4, 600)).astype("float32")
    keras_model.fit(data, data, verbose=0)
    loaded = load_model(save_keras(keras_model, tmp_path))  # compiled, its optimizer starting afresh
    np.testing.assert_allclose(loaded(data), np.asarray(keras_model(data)), rtol=1e-5, atol=1e-5)

    inputs = engine.Input((600,))
    ours = Model(inputs, engine_layers.Dense(600)(inputs))
    ours.compile(optimizer="adam", loss="mse")
    ours.fit(data, data, verbose=0)
    ours.save(tmp_path / "ours.keras")
    np.testing.assert_array_equal(load_model(tmp_path / "ours.keras")(data), ours(data))
