"""Every Keras layer of the catalog, saved by Keras in a small model with each
weight moved off its initial value, loads in nodeweave with the same outputs:
the config reads into our layer and each weight comes from its place in
Keras' weight file (vars/i, an RNN's cell, MultiHeadAttention's projections,
Bidirectional's and TimeDistributed's inner layers)."""

import keras
import numpy as np
import pytest

from engine import load_model
from engine.files.keras_format.catalog import KERAS_LAYERS
from tests.keras_format.read_helpers import perturb, save_keras

K = keras.layers
F, INT = "float32", "int32"
# Keras layer class -> (a factory of the Keras layer, the input specs (shape, dtype), how
# it is called: "one" on a tensor, "list" on a list of tensors, "args" on positional tensors).
CASES = {
    "Activation": (lambda: K.Activation("tanh"), [((5,), F)], "one"),
    "ActivityRegularization": (lambda: K.ActivityRegularization(l1=0.1), [((5,), F)], "one"),
    "Add": (K.Add, [((5,), F)] * 2, "list"),
    "Attention": (lambda: K.Attention(use_scale=True, score_mode="concat"), [((4, 3), F), ((5, 3), F)], "list"),
    "Average": (K.Average, [((5,), F)] * 3, "list"),
    "AveragePooling1D": (lambda: K.AveragePooling1D(2, padding="same"), [((7, 3), F)], "one"),
    "AveragePooling2D": (lambda: K.AveragePooling2D(2), [((6, 6, 3), F)], "one"),
    "BatchNormalization": (lambda: K.BatchNormalization(momentum=0.9, epsilon=0.01), [((4, 5), F)], "one"),
    "Bidirectional": (lambda: K.Bidirectional(K.LSTM(3, return_sequences=True), merge_mode="sum"),
                      [((4, 2), F)], "one"),
    "CenterCrop": (lambda: K.CenterCrop(4, 3), [((6, 6, 3), F)], "one"),
    "Concatenate": (lambda: K.Concatenate(axis=1), [((5,), F), ((2,), F)], "list"),
    "Conv1D": (lambda: K.Conv1D(2, 3, dilation_rate=2, activation="relu"), [((8, 3), F)], "one"),
    "Conv1DTranspose": (lambda: K.Conv1DTranspose(2, 3, strides=2), [((5, 3), F)], "one"),
    "Conv2D": (lambda: K.Conv2D(2, 3, strides=2, padding="same"), [((6, 6, 3), F)], "one"),
    "Conv2DTranspose": (lambda: K.Conv2DTranspose(2, 3, strides=2), [((4, 4, 3), F)], "one"),
    "Conv3D": (lambda: K.Conv3D(2, 2), [((4, 4, 4, 2), F)], "one"),
    "Cropping1D": (lambda: K.Cropping1D((1, 2)), [((6, 3), F)], "one"),
    "Cropping2D": (lambda: K.Cropping2D(((1, 0), (0, 2))), [((6, 6, 3), F)], "one"),
    "Dense": (lambda: K.Dense(3, activation="relu", kernel_regularizer="l2"), [((5,), F)], "one"),
    "DepthwiseConv2D": (lambda: K.DepthwiseConv2D(3, depth_multiplier=2), [((6, 6, 3), F)], "one"),
    "Dot": (lambda: K.Dot(axes=1, normalize=True), [((5,), F)] * 2, "list"),
    "Dropout": (lambda: K.Dropout(0.5, seed=3), [((5,), F)], "one"),
    "ELU": (lambda: K.ELU(alpha=0.5), [((5,), F)], "one"),
    "Embedding": (lambda: K.Embedding(10, 3), [((4,), INT)], "one"),
    "Flatten": (K.Flatten, [((3, 4), F)], "one"),
    "GRU": (lambda: K.GRU(3, go_backwards=True), [((4, 2), F)], "one"),
    "GaussianDropout": (lambda: K.GaussianDropout(0.2), [((5,), F)], "one"),
    "GaussianNoise": (lambda: K.GaussianNoise(0.2), [((5,), F)], "one"),
    "GlobalAveragePooling1D": (K.GlobalAveragePooling1D, [((6, 3), F)], "one"),
    "GlobalAveragePooling2D": (lambda: K.GlobalAveragePooling2D(keepdims=True), [((6, 6, 3), F)], "one"),
    "GlobalMaxPooling1D": (K.GlobalMaxPooling1D, [((6, 3), F)], "one"),
    "GlobalMaxPooling2D": (K.GlobalMaxPooling2D, [((6, 6, 3), F)], "one"),
    "GroupNormalization": (lambda: K.GroupNormalization(groups=2), [((6,), F)], "one"),
    "Identity": (K.Identity, [((5,), F)], "one"),
    "InputLayer": (lambda: K.Identity(), [((5,), F)], "one"),  # every model reads one
    "LSTM": (lambda: K.LSTM(3, return_sequences=True, return_state=True), [((4, 2), F)], "one"),
    "Lambda": None,  # refused in safe mode: tests/keras_format/test_read_hostile.py
    "LayerNormalization": (lambda: K.LayerNormalization(axis=-1), [((3, 5), F)], "one"),
    "LeakyReLU": (lambda: K.LeakyReLU(negative_slope=0.2), [((5,), F)], "one"),
    "Masking": (lambda: K.Masking(0.0), [((4, 3), F)], "one"),
    "MaxPooling1D": (lambda: K.MaxPooling1D(2), [((6, 3), F)], "one"),
    "MaxPooling2D": (lambda: K.MaxPooling2D(2, strides=1), [((6, 6, 3), F)], "one"),
    "Maximum": (K.Maximum, [((5,), F)] * 2, "list"),
    "Minimum": (K.Minimum, [((5,), F)] * 2, "list"),
    "MultiHeadAttention": (lambda: K.MultiHeadAttention(2, 3, use_bias=False), [((4, 3), F), ((5, 3), F)], "args"),
    "Multiply": (K.Multiply, [((5,), F)] * 2, "list"),
    "Normalization": (lambda: K.Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 9.0]), [((3,), F)], "one"),
    "PReLU": (lambda: K.PReLU(shared_axes=[1]), [((4, 3), F)], "one"),
    "Permute": (lambda: K.Permute((2, 1)), [((3, 4), F)], "one"),
    "ReLU": (lambda: K.ReLU(max_value=0.8, threshold=0.1), [((5,), F)], "one"),
    "RepeatVector": (lambda: K.RepeatVector(3), [((5,), F)], "one"),
    "Rescaling": (lambda: K.Rescaling(1 / 255, offset=-1.0), [((5,), F)], "one"),
    "Reshape": (lambda: K.Reshape((2, -1)), [((3, 4), F)], "one"),
    "Resizing": (lambda: K.Resizing(4, 5), [((6, 6, 3), F)], "one"),
    "SeparableConv2D": (lambda: K.SeparableConv2D(2, 3, depth_multiplier=2), [((6, 6, 3), F)], "one"),
    "SimpleRNN": (lambda: K.SimpleRNN(3), [((4, 2), F)], "one"),
    "Softmax": (lambda: K.Softmax(axis=-1), [((5,), F)], "one"),
    "SpatialDropout1D": (lambda: K.SpatialDropout1D(0.5), [((4, 3), F)], "one"),
    "SpatialDropout2D": (lambda: K.SpatialDropout2D(0.5), [((4, 4, 3), F)], "one"),
    "Subtract": (K.Subtract, [((5,), F)] * 2, "list"),
    "TimeDistributed": (lambda: K.TimeDistributed(K.Dense(3)), [((4, 2), F)], "one"),
    "UnitNormalization": (K.UnitNormalization, [((5,), F)], "one"),
    "UpSampling1D": (lambda: K.UpSampling1D(2), [((4, 3), F)], "one"),
    "UpSampling2D": (lambda: K.UpSampling2D(2), [((4, 4, 3), F)], "one"),
    "ZeroPadding1D": (lambda: K.ZeroPadding1D(1), [((4, 3), F)], "one"),
    "ZeroPadding2D": (lambda: K.ZeroPadding2D(((1, 0), (2, 1))), [((4, 4, 3), F)], "one"),
}


def test_every_catalog_layer_has_a_case():
    assert set(CASES) == KERAS_LAYERS


@pytest.mark.parametrize("name", sorted(name for name, case in CASES.items() if case is not None))
def test_layer_saved_by_keras_loads_with_its_weights(name, tmp_path):
    factory, specs, mode = CASES[name]
    inputs = [keras.Input(shape, dtype=dtype) for shape, dtype in specs]
    layer = factory()
    outputs = layer(inputs[0]) if mode == "one" else layer(inputs) if mode == "list" else layer(*inputs)
    keras_model = keras.Model(inputs, outputs)
    perturb(keras_model, seed=len(name))
    ours = load_model(save_keras(keras_model, tmp_path))
    assert ours.count_params() == keras_model.count_params()
    rng = np.random.default_rng(0)
    batch = [rng.integers(0, 10, (2, *shape)).astype(dtype) if dtype == INT else rng.normal(size=(2, *shape)).astype(dtype)
             for shape, dtype in specs]
    expected, received = keras_model(batch), ours(batch)
    for want, got in zip(keras.tree.flatten(expected), keras.tree.flatten(received)):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5, atol=1e-6)
