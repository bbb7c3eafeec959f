"""Every layer of the catalog, and every operator layer, written to .keras: Keras 3 loads
a small model around it and gives the same outputs with every weight moved off its
initial value."""

import keras
import numpy as np
import pytest

from engine import Input, Model
from engine.files import registry
from engine.files.keras_format.catalog import BINARY_OPS, KERAS_LAYERS, UNARY_OPS
from engine.network.ops import UnaryOp, binary_op
import layers as L

F, INT = "float32", "int32"
# Layer class -> (a factory of the layer, the input specs (shape, dtype), how it is called:
# "one" on a tensor, "list" on a list of tensors, "args" on positional tensors).
CASES = {
    "Activation": (lambda: L.Activation("tanh"), [((5,), F)], "one"),
    "ActivityRegularization": (lambda: L.ActivityRegularization(l1=0.1), [((5,), F)], "one"),
    "Add": (L.Add, [((5,), F)] * 2, "list"),
    "Attention": (lambda: L.Attention(use_scale=True), [((4, 3), F), ((5, 3), F)], "list"),
    "Average": (L.Average, [((5,), F)] * 3, "list"),
    "AveragePooling1D": (lambda: L.AveragePooling1D(2, padding="same"), [((7, 3), F)], "one"),
    "AveragePooling2D": (lambda: L.AveragePooling2D(2), [((6, 6, 3), F)], "one"),
    "BatchNormalization": (lambda: L.BatchNormalization(momentum=0.9), [((4, 5), F)], "one"),
    "Bidirectional": (lambda: L.Bidirectional(L.SimpleRNN(3, return_sequences=True)), [((4, 2), F)], "one"),
    "CenterCrop": (lambda: L.CenterCrop(4, 3), [((6, 6, 3), F)], "one"),
    "Concatenate": (lambda: L.Concatenate(axis=1), [((5,), F), ((2,), F)], "list"),
    "Conv1D": (lambda: L.Conv1D(2, 3, dilation_rate=2), [((8, 3), F)], "one"),
    "Conv1DTranspose": (lambda: L.Conv1DTranspose(2, 3, strides=2), [((5, 3), F)], "one"),
    "Conv2D": (lambda: L.Conv2D(2, 3, strides=2, padding="same"), [((6, 6, 3), F)], "one"),
    "Conv2DTranspose": (lambda: L.Conv2DTranspose(2, 3, strides=2), [((4, 4, 3), F)], "one"),
    "Conv3D": (lambda: L.Conv3D(2, 2), [((4, 4, 4, 2), F)], "one"),
    "Cropping1D": (lambda: L.Cropping1D((1, 2)), [((6, 3), F)], "one"),
    "Cropping2D": (lambda: L.Cropping2D(((1, 0), (0, 2))), [((6, 6, 3), F)], "one"),
    "Dense": (lambda: L.Dense(3, activation="relu"), [((5,), F)], "one"),
    "DepthwiseConv2D": (lambda: L.DepthwiseConv2D(3, depth_multiplier=2), [((6, 6, 3), F)], "one"),
    "Dot": (lambda: L.Dot(axes=1, normalize=True), [((5,), F)] * 2, "list"),
    "Dropout": (lambda: L.Dropout(0.5), [((5,), F)], "one"),
    "ELU": (lambda: L.ELU(alpha=0.5), [((5,), F)], "one"),
    "Embedding": (lambda: L.Embedding(10, 3), [((4,), INT)], "one"),
    "Flatten": (L.Flatten, [((3, 4), F)], "one"),
    "GRU": (lambda: L.GRU(3, go_backwards=True), [((4, 2), F)], "one"),
    "GaussianDropout": (lambda: L.GaussianDropout(0.2), [((5,), F)], "one"),
    "GaussianNoise": (lambda: L.GaussianNoise(0.2), [((5,), F)], "one"),
    "GlobalAveragePooling1D": (L.GlobalAveragePooling1D, [((6, 3), F)], "one"),
    "GlobalAveragePooling2D": (lambda: L.GlobalAveragePooling2D(keepdims=True), [((6, 6, 3), F)], "one"),
    "GlobalMaxPooling1D": (L.GlobalMaxPooling1D, [((6, 3), F)], "one"),
    "GlobalMaxPooling2D": (L.GlobalMaxPooling2D, [((6, 6, 3), F)], "one"),
    "GroupNormalization": (lambda: L.GroupNormalization(groups=2), [((6,), F)], "one"),
    "Identity": (L.Identity, [((5,), F)], "one"),
    "LSTM": (lambda: L.LSTM(3, return_sequences=True, return_state=True), [((4, 2), F)], "one"),
    "LayerNormalization": (lambda: L.LayerNormalization(axis=-1), [((3, 5), F)], "one"),
    "LeakyReLU": (lambda: L.LeakyReLU(negative_slope=0.2), [((5,), F)], "one"),
    "Masking": (lambda: L.Masking(0.0), [((4, 3), F)], "one"),
    "MaxPooling1D": (lambda: L.MaxPooling1D(2), [((6, 3), F)], "one"),
    "MaxPooling2D": (lambda: L.MaxPooling2D(2, strides=1), [((6, 6, 3), F)], "one"),
    "Maximum": (L.Maximum, [((5,), F)] * 2, "list"),
    "Minimum": (L.Minimum, [((5,), F)] * 2, "list"),
    "MultiHeadAttention": (lambda: L.MultiHeadAttention(2, 3), [((4, 3), F), ((5, 3), F)], "args"),
    "Multiply": (L.Multiply, [((5,), F)] * 2, "list"),
    "Normalization": (lambda: L.Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 9.0]), [((3,), F)], "one"),
    "PReLU": (L.PReLU, [((5,), F)], "one"),
    "Permute": (lambda: L.Permute((2, 1)), [((3, 4), F)], "one"),
    "ReLU": (lambda: L.ReLU(max_value=0.8, threshold=0.1), [((5,), F)], "one"),
    "RepeatVector": (lambda: L.RepeatVector(3), [((5,), F)], "one"),
    "Rescaling": (lambda: L.Rescaling(1 / 255, offset=-1.0), [((5,), F)], "one"),
    "Reshape": (lambda: L.Reshape((2, -1)), [((3, 4), F)], "one"),
    "Resizing": (lambda: L.Resizing(4, 5), [((6, 6, 3), F)], "one"),
    "SeparableConv2D": (lambda: L.SeparableConv2D(2, 3, depth_multiplier=2), [((6, 6, 3), F)], "one"),
    "SimpleRNN": (lambda: L.SimpleRNN(3), [((4, 2), F)], "one"),
    "Softmax": (lambda: L.Softmax(axis=-1), [((5,), F)], "one"),
    "SpatialDropout1D": (lambda: L.SpatialDropout1D(0.5), [((4, 3), F)], "one"),
    "SpatialDropout2D": (lambda: L.SpatialDropout2D(0.5), [((4, 4, 3), F)], "one"),
    "Subtract": (L.Subtract, [((5,), F)] * 2, "list"),
    "TimeDistributed": (lambda: L.TimeDistributed(L.Dense(3)), [((4, 2), F)], "one"),
    "UnitNormalization": (L.UnitNormalization, [((5,), F)], "one"),
    "UpSampling1D": (lambda: L.UpSampling1D(2), [((4, 3), F)], "one"),
    "UpSampling2D": (lambda: L.UpSampling2D(2), [((4, 4, 3), F)], "one"),
    "ZeroPadding1D": (lambda: L.ZeroPadding1D(1), [((4, 3), F)], "one"),
    "ZeroPadding2D": (lambda: L.ZeroPadding2D(((1, 0), (2, 1))), [((4, 4, 3), F)], "one"),
}
# Catalog classes with no small model of their own here: Lambda is refused (test_write_models.py),
# InputLayer is in every model.
NOT_WRITABLE = {"Lambda": "its function is Python code", "InputLayer": "written with every model, not alone"}


def catalog_layers():
    return sorted(name for name in KERAS_LAYERS if name in registry._REGISTRY and name not in NOT_WRITABLE)


def test_every_catalog_layer_has_a_case():
    assert sorted(set(catalog_layers()) - set(CASES)) == []


def sample(specs, rng):
    data = []
    for shape, dtype in specs:
        if dtype == INT:
            data.append(rng.integers(0, 10, size=(2, *shape)).astype(INT))
        else:
            values = rng.normal(size=(2, *shape)).astype(F)
            values[0, ..., 0] = 0.0  # zero steps for Masking, ties for pooling
            data.append(values)
    return data


def assert_keras_loads_the_same(model, data, tmp_path):
    rng = np.random.default_rng(7)
    for weight in model.weights:  # every weight away from its initial value (positive: variances stay valid)
        weight.assign(rng.uniform(0.5, 1.5, size=weight.shape).astype(weight.dtype))
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    ours, theirs = model(data), loaded(data)
    ours = ours if isinstance(ours, (list, tuple)) else [ours]
    theirs = theirs if isinstance(theirs, (list, tuple)) else [theirs]
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs):
        want = np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(want, got, rtol=1e-5, atol=1e-5)
    assert loaded.count_params() == model.count_params()


@pytest.mark.parametrize("name", catalog_layers())
def test_catalog_layer_written_to_keras(name, tmp_path):
    factory, specs, style = CASES[name]
    inputs = [Input(shape=shape, dtype=dtype) for shape, dtype in specs]
    layer = factory()
    if style == "one":
        outputs = layer(inputs[0])
    elif style == "list":
        outputs = layer(inputs)
    else:
        outputs = layer(*inputs)
    model = Model(inputs if len(inputs) > 1 else inputs[0], outputs)
    data = sample(specs, np.random.default_rng(3))
    assert_keras_loads_the_same(model, data if len(data) > 1 else data[0], tmp_path)


@pytest.mark.parametrize("op", sorted(BINARY_OPS))
@pytest.mark.parametrize("operands", ["tensors", "constant right", "constant left"])
def test_binary_op_written_as_keras_op_node(op, operands, tmp_path):
    x, y = Input(shape=(3,), name="x"), Input(shape=(3,), name="y")
    if op.startswith("logical"):
        x_, y_ = x > 0.0, y > 0.0
        constant = np.array([True, False, True])
    elif op == "matmul":
        x_, y_ = x.reshape((-1, 1, 3)), y.reshape((-1, 3, 1))
        constant = np.full((3, 3), 0.5, "float32")
    else:
        # positive divisors and power bases keep every result finite
        x_, y_ = (abs(x) + 0.5 if op == "power" else x), abs(y) + 0.5
        constant = 1.5
    if operands == "tensors":
        out = binary_op(op, x_, y_)
    elif operands == "constant right":
        out = binary_op(op, x_, constant)
    else:
        out = binary_op(op, constant, y_)
    model = Model([x, y], out)
    assert_keras_loads_the_same(model, sample([((3,), F)] * 2, np.random.default_rng(4)), tmp_path)


@pytest.mark.parametrize("op", sorted(UNARY_OPS))
def test_unary_op_written_as_keras_op_node(op, tmp_path):
    x = Input(shape=(3,))
    model = Model(x, UnaryOp(op)(x > 0.0 if op == "logical_not" else x))
    assert_keras_loads_the_same(model, sample([((3,), F)], np.random.default_rng(5))[0], tmp_path)
