"""Every registered layer survives config, JSON, file and weights round trips inside a model,
with predictions identical bit for bit after loading."""

import numpy as np
import pytest

from engine import Input, Model, load_model, model_from_json
from engine.network.functional import Functional
from engine.keras_ops.op_layer import OpLayer
from engine.network.mask_of import MaskOf
from engine.network.ops import BinaryOp, GetItem, Negative, ReshapeOp, Round, SqueezeOp, UnaryOp
from engine.files.registry import _REGISTRY, register_serializable
import layers as L


@register_serializable(package="catalog_tests")
def doubled(x):
    return x * 2.0


SEQ, IMG, VEC = (5, 3), (6, 6, 2), (4,)
EXAMPLES = {
    # name: (layer factory, input shapes, input dtype)
    "Activation": (lambda: L.Activation("tanh"), [VEC], "float32"),
    "ActivityRegularization": (lambda: L.ActivityRegularization(l1=0.1), [VEC], "float32"),
    "Add": (lambda: L.Add(), [VEC, VEC], "float32"),
    "Attention": (lambda: L.Attention(use_scale=True), [SEQ, SEQ], "float32"),
    "Average": (lambda: L.Average(), [VEC, VEC], "float32"),
    "AveragePooling1D": (lambda: L.AveragePooling1D(2, padding="same"), [SEQ], "float32"),
    "AveragePooling2D": (lambda: L.AveragePooling2D(2), [IMG], "float32"),
    "BatchNormalization": (lambda: L.BatchNormalization(momentum=0.9), [IMG], "float32"),
    "Bidirectional": (lambda: L.Bidirectional(L.GRU(3, return_sequences=True), merge_mode="sum"), [SEQ], "float32"),
    "BinaryOp": (lambda: BinaryOp("power", constant=2.0), [VEC], "float32"),
    "CenterCrop": (lambda: L.CenterCrop(4, 5), [IMG], "float32"),
    "Concatenate": (lambda: L.Concatenate(axis=1), [VEC, VEC], "float32"),
    "Conv1D": (lambda: L.Conv1D(4, 3, padding="causal", dilation_rate=2), [SEQ], "float32"),
    "Conv1DTranspose": (lambda: L.Conv1DTranspose(2, 3, strides=2), [SEQ], "float32"),
    "Conv2D": (lambda: L.Conv2D(4, 3, strides=2, padding="same", activation="relu"), [IMG], "float32"),
    "Conv2DTranspose": (lambda: L.Conv2DTranspose(3, 2, strides=2), [IMG], "float32"),
    "Conv3D": (lambda: L.Conv3D(2, 2), [(3, 3, 3, 1)], "float32"),
    "Cropping1D": (lambda: L.Cropping1D((1, 2)), [SEQ], "float32"),
    "Cropping2D": (lambda: L.Cropping2D(((1, 0), (0, 2))), [IMG], "float32"),
    "Dense": (lambda: L.Dense(3, activation="softmax", kernel_regularizer="l2"), [VEC], "float32"),
    "DepthwiseConv2D": (lambda: L.DepthwiseConv2D(3, depth_multiplier=2), [IMG], "float32"),
    "Dot": (lambda: L.Dot(axes=1, normalize=True), [VEC, VEC], "float32"),
    "Dropout": (lambda: L.Dropout(0.5, seed=3), [VEC], "float32"),
    "ELU": (lambda: L.ELU(alpha=0.5), [VEC], "float32"),
    "Embedding": (lambda: L.Embedding(10, 3, mask_zero=True), [(4,)], "int32"),
    "Flatten": (lambda: L.Flatten(), [IMG], "float32"),
    "GRU": (lambda: L.GRU(3, reset_after=False), [SEQ], "float32"),
    "GaussianDropout": (lambda: L.GaussianDropout(0.3), [VEC], "float32"),
    "GaussianNoise": (lambda: L.GaussianNoise(0.1), [VEC], "float32"),
    "GetItem": (lambda: GetItem((slice(None), slice(1, None))), [VEC], "float32"),
    "GlobalAveragePooling1D": (lambda: L.GlobalAveragePooling1D(), [SEQ], "float32"),
    "GlobalAveragePooling2D": (lambda: L.GlobalAveragePooling2D(keepdims=True), [IMG], "float32"),
    "GlobalMaxPooling1D": (lambda: L.GlobalMaxPooling1D(), [SEQ], "float32"),
    "GlobalMaxPooling2D": (lambda: L.GlobalMaxPooling2D(), [IMG], "float32"),
    "GroupNormalization": (lambda: L.GroupNormalization(groups=2), [IMG], "float32"),
    "Identity": (lambda: L.Identity(), [VEC], "float32"),
    "LSTM": (lambda: L.LSTM(3, return_sequences=True, go_backwards=True), [SEQ], "float32"),
    "Lambda": (lambda: L.Lambda(doubled), [VEC], "float32"),
    "CustomScaleLayer": (lambda: L.applications.CustomScaleLayer(0.17), [VEC, VEC], "float32"),
    "LayerScale": (lambda: L.applications.LayerScale(0.3, 2), [IMG], "float32"),
    "LayerNormalization": (lambda: L.LayerNormalization(), [SEQ], "float32"),
    "LeakyReLU": (lambda: L.LeakyReLU(0.1), [VEC], "float32"),
    "Masking": (lambda: L.Masking(mask_value=0.5), [SEQ], "float32"),
    "MaxPooling1D": (lambda: L.MaxPooling1D(2), [SEQ], "float32"),
    "MaxPooling2D": (lambda: L.MaxPooling2D(2, strides=1), [IMG], "float32"),
    "Maximum": (lambda: L.Maximum(), [VEC, VEC], "float32"),
    "Minimum": (lambda: L.Minimum(), [VEC, VEC], "float32"),
    "MultiHeadAttention": (lambda: L.MultiHeadAttention(num_heads=2, key_dim=2), [SEQ, SEQ], "float32"),
    "Multiply": (lambda: L.Multiply(), [VEC, VEC], "float32"),
    "Normalization": (lambda: L.Normalization(axis=(1, 3)), [IMG], "float32"),
    "Negative": (lambda: Negative(), [VEC], "float32"),
    "PReLU": (lambda: L.PReLU(alpha_initializer="ones"), [VEC], "float32"),
    "Permute": (lambda: L.Permute((2, 1)), [SEQ], "float32"),
    "OpLayer": (lambda: OpLayer("softmax", {"args": [{"__tensor__": 0}], "kwargs": {"axis": -1}}), [VEC], "float32"),
    "ReshapeOp": (lambda: ReshapeOp((-1, 2)), [VEC], "float32"),
    "Round": (lambda: Round(decimals=1), [VEC], "float32"),
    "ReLU": (lambda: L.ReLU(max_value=1.0), [VEC], "float32"),
    "RepeatVector": (lambda: L.RepeatVector(3), [VEC], "float32"),
    "Rescaling": (lambda: L.Rescaling(1 / 127.5, offset=-1.0), [IMG], "float32"),
    "Resizing": (lambda: L.Resizing(4, 9, interpolation="bicubic", crop_to_aspect_ratio=True), [IMG], "float32"),
    "Reshape": (lambda: L.Reshape((-1, 2)), [VEC], "float32"),
    "SeparableConv2D": (lambda: L.SeparableConv2D(3, 3, padding="same"), [IMG], "float32"),
    "MaskOf": (lambda: MaskOf(2), [SEQ], "float32"),
    "SimpleRNN": (lambda: L.SimpleRNN(3, return_state=True), [SEQ], "float32"),
    "Softmax": (lambda: L.Softmax(axis=1), [SEQ], "float32"),
    "SpatialDropout1D": (lambda: L.SpatialDropout1D(0.3), [SEQ], "float32"),
    "SpatialDropout2D": (lambda: L.SpatialDropout2D(0.3), [IMG], "float32"),
    "SqueezeOp": (lambda: SqueezeOp(axis=2), [(4, 1)], "float32"),
    "Subtract": (lambda: L.Subtract(), [VEC, VEC], "float32"),
    "TimeDistributed": (lambda: L.TimeDistributed(L.Dense(2)), [SEQ], "float32"),
    "UnaryOp": (lambda: UnaryOp("absolute"), [VEC], "float32"),
    "UnitNormalization": (lambda: L.UnitNormalization(), [VEC], "float32"),
    "UpSampling1D": (lambda: L.UpSampling1D(2), [SEQ], "float32"),
    "UpSampling2D": (lambda: L.UpSampling2D(2, interpolation="bilinear"), [IMG], "float32"),
    "ZeroPadding1D": (lambda: L.ZeroPadding1D(2), [SEQ], "float32"),
    "ZeroPadding2D": (lambda: L.ZeroPadding2D(((1, 0), (2, 1))), [IMG], "float32"),
}
MODELS = {"Functional", "InputLayer", "Model", "Sequential"}  # round-tripped as models in test_saving.py


def test_every_registered_layer_has_an_example():
    builtin = {name for name in _REGISTRY if ">" not in name} - MODELS
    assert builtin == set(EXAMPLES)


def _model_and_data(name):
    factory, shapes, dtype = EXAMPLES[name]
    inputs = [Input(shape=s, dtype=dtype) for s in shapes]
    outputs = factory()(inputs if len(inputs) > 1 else inputs[0])
    rng = np.random.default_rng(0)
    if dtype == "int32":
        data = [rng.integers(0, 10, size=(3,) + s).astype(dtype) for s in shapes]
    else:
        data = [rng.normal(size=(3,) + s).astype(dtype) for s in shapes]
    model = Model(inputs, outputs)
    model.set_weights([w + rng.normal(scale=0.1, size=w.shape).astype(w.dtype) for w in model.get_weights()])
    return model, data


def _same(first, second):
    for a, b in zip(np.atleast_1d(first) if isinstance(first, np.ndarray) else first,
                    np.atleast_1d(second) if isinstance(second, np.ndarray) else second):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_layer_round_trips_through_config_json_file_and_weights(name, tmp_path):
    model, data = _model_and_data(name)
    expected = model(data)

    from_config = Functional.from_config(model.get_config())
    from_config.set_weights(model.get_weights())
    _same(from_config(data), expected)

    from_json = model_from_json(model.to_json())
    assert from_json.get_config() == model.get_config()

    model.save(tmp_path / "m.nw")
    _same(load_model(tmp_path / "m.nw")(data), expected)

    model.save_weights(tmp_path / "w.npz")
    from_json.load_weights(tmp_path / "w.npz")
    _same(from_json(data), expected)
