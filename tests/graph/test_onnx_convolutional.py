"""The image-family ONNX converters (layers/_onnx: convolutional, pooling, normalization,
reshaping, preprocessing) against ``predict`` in ONNX Runtime: every option of each layer
in a one-layer model, with weights and statistics off their initial values, at two batch
sizes; spatial sizes unknown at export where the layer allows it; a convolution stack
keeps transposes at its borders only."""

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="ONNX Runtime is not installed (pip install 'nodeweave[test]')")

import layers as L  # noqa: E402
from engine import Input, Model, Sequential  # noqa: E402
from graph.onnx_export import OnnxExportError, to_onnx  # noqa: E402
from tests.graph.onnx_check import assert_exports_match  # noqa: E402


def _model(layer, shape, data_shape=None, dtype="float32", seed=0):
    """A one-layer model on inputs of ``shape`` (None for unknown sizes), every weight drawn
    at random (variances positive), and a batch of 3 inputs of ``data_shape``."""
    rng = np.random.default_rng(seed)
    x = Input(shape=shape, dtype=dtype)
    model = Model(x, layer(x))
    for weight in model.weights:
        if np.dtype(weight.dtype).kind == "f":
            low = 0.5 if "variance" in weight.path else -1.0
            weight.assign(rng.uniform(low, 1.5, weight.shape).astype(weight.dtype))
    data = rng.uniform(-2, 2, (3,) + tuple(data_shape or shape))
    return model, data.astype(dtype) if dtype.startswith("float") else (data * 60 + 120).astype(dtype)


def _matches(layer, shape, data_shape=None, dtype="float32"):
    model, data = _model(layer, shape, data_shape, dtype)
    return assert_exports_match(model, data)


CONVOLUTIONS = [
    lambda: L.Conv1D(4, 3, padding="causal", dilation_rate=2),
    lambda: L.Conv1D(6, 2, strides=2, padding="same", groups=3, activation="tanh"),
    lambda: L.Conv1D(4, 3, data_format="channels_first", use_bias=False),
    lambda: L.Conv2D(4, 3, strides=2, padding="same", activation="relu"),
    lambda: L.Conv2D(6, (3, 2), dilation_rate=(2, 1), groups=3, padding="same"),
    lambda: L.Conv2D(4, 3, strides=(2, 3), activation="softmax"),
    lambda: L.Conv2D(4, 3, padding="same", data_format="channels_first", activation="softmax"),
    lambda: L.Conv3D(2, 2, strides=(1, 2, 1), padding="same", activation="gelu"),
    lambda: L.Conv1DTranspose(2, 3, strides=2),
    lambda: L.Conv1DTranspose(2, 2, strides=3),  # outputs past the last patch: ONNX's output_padding
    lambda: L.Conv1DTranspose(2, 3, strides=2, padding="same", dilation_rate=1),
    lambda: L.Conv2DTranspose(3, 3, strides=2, padding="same", output_padding=1, activation="relu"),
    lambda: L.Conv2DTranspose(3, (3, 4), strides=(2, 3), padding="same"),
    lambda: L.Conv2DTranspose(3, 3, dilation_rate=2, padding="same", use_bias=False),
    lambda: L.Conv2DTranspose(3, 3, strides=2, output_padding=1, data_format="channels_first"),
    lambda: L.DepthwiseConv2D(3, depth_multiplier=2, strides=2, padding="same"),
    lambda: L.DepthwiseConv2D((2, 3), dilation_rate=2, activation="hard_silu", use_bias=False),
    lambda: L.SeparableConv2D(5, 3, padding="same", depth_multiplier=2, dilation_rate=2),
    lambda: L.SeparableConv2D(4, 3, strides=2, use_bias=False, data_format="channels_first"),
]
SHAPES = {1: (11, 3), 2: (9, 8, 3), 3: (4, 5, 6, 3)}


@pytest.mark.parametrize("make", CONVOLUTIONS)
def test_convolutions_match(make):
    layer = make()
    shape = SHAPES[layer.rank]
    if layer.data_format == "channels_first":
        shape = shape[-1:] + shape[:-1]
    _matches(layer, shape)


@pytest.mark.parametrize("make", [
    lambda: L.Conv2D(4, 3, strides=2, padding="same"),
    lambda: L.Conv1D(4, 5, strides=3, padding="same", dilation_rate=1),
    lambda: L.Conv2D(4, 3, dilation_rate=2, padding="same"),
    lambda: L.MaxPooling2D(3, strides=2, padding="same"),
    lambda: L.AveragePooling2D(3, strides=2, padding="same"),
    lambda: L.Conv2DTranspose(3, 3, strides=2),
])
@pytest.mark.parametrize("size", [7, 8])
def test_same_padding_on_spatial_sizes_unknown_at_export(make, size):
    """lax's SAME (the odd pad at the end) is ONNX's SAME_UPPER, at any size."""
    layer = make()
    rank = 1 if "1D" in type(layer).__name__ else 2
    _matches(layer, (None,) * rank + (3,), data_shape=(size,) * rank + (3,))


def test_a_transposed_convolution_with_same_padding_needs_known_sizes():
    x = Input(shape=(None, None, 3))
    model = Model(x, L.Conv2DTranspose(2, 3, strides=2, padding="same", name="up")(x))
    with pytest.raises(OnnxExportError, match=r"'up' \(Conv2DTranspose\).*padding='same' needs known spatial sizes"):
        to_onnx(model)


POOLINGS = [
    lambda: L.MaxPooling1D(2),
    lambda: L.MaxPooling1D(3, strides=2, padding="same", data_format="channels_first"),
    lambda: L.MaxPooling2D(3, strides=2, padding="same"),
    lambda: L.MaxPooling2D((2, 3), strides=1),
    lambda: L.AveragePooling1D(2, strides=1, padding="same"),
    lambda: L.AveragePooling2D(3, strides=2, padding="same"),  # edge windows average their real inputs only
    lambda: L.AveragePooling2D((3, 2), strides=(1, 2), padding="same", data_format="channels_first"),
    lambda: L.AveragePooling2D(2),
    lambda: L.GlobalAveragePooling1D(),
    lambda: L.GlobalAveragePooling1D(data_format="channels_first", keepdims=True),
    lambda: L.GlobalAveragePooling2D(),
    lambda: L.GlobalAveragePooling2D(keepdims=True),
    lambda: L.GlobalMaxPooling1D(keepdims=True),
    lambda: L.GlobalMaxPooling2D(),
    lambda: L.GlobalMaxPooling2D(data_format="channels_first", keepdims=True),
]


@pytest.mark.parametrize("make", POOLINGS)
def test_poolings_match(make):
    layer = make()
    _matches(layer, SHAPES[layer.rank][:-1] + (4,))


def test_same_average_pooling_divides_edge_windows_by_their_real_inputs():
    model, data = _model(L.AveragePooling1D(3, strides=1, padding="same"), (4, 1))
    data[:] = 1.0
    proto = assert_exports_match(model, data)
    (pool,) = [node for node in proto.graph.node if node.op_type == "AveragePool"]
    assert {a.name: a.i for a in pool.attribute}["count_include_pad"] == 0


NORMALIZATIONS = [
    (lambda: L.BatchNormalization(), (5, 4, 3)),
    (lambda: L.BatchNormalization(axis=1, center=False, epsilon=0.1), (5, 4, 3)),
    (lambda: L.BatchNormalization(axis=2, scale=False), (5, 4, 3)),
    (lambda: L.BatchNormalization(axis=[1, 3]), (5, 4, 3)),
    (lambda: L.BatchNormalization(), (3,)),
    (lambda: L.LayerNormalization(), (5, 4)),
    (lambda: L.LayerNormalization(axis=1, center=False, scale=False), (5, 4, 3)),
    (lambda: L.LayerNormalization(axis=[1, 2], epsilon=1e-6), (5, 4, 3)),
    (lambda: L.LayerNormalization(axis=[1, 3]), (5, 4, 3)),
    (lambda: L.LayerNormalization(rms_scaling=True), (5, 4)),
    (lambda: L.LayerNormalization(rms_scaling=True, axis=1), (5, 4, 3)),
    (lambda: L.GroupNormalization(groups=2), (5, 4, 6)),
    (lambda: L.GroupNormalization(groups=-1, axis=1, center=False), (6, 4, 5)),
    (lambda: L.GroupNormalization(groups=3, axis=2, scale=False), (5, 6, 4)),
    (lambda: L.GroupNormalization(groups=1), (6,)),
    (lambda: L.UnitNormalization(), (6,)),
    (lambda: L.UnitNormalization(axis=[1, 2]), (5, 4, 3)),
]


@pytest.mark.parametrize("make, shape", NORMALIZATIONS)
def test_normalizations_match(make, shape):
    _matches(make(), shape)


def test_batch_normalization_uses_the_moving_statistics():
    model, data = _model(L.BatchNormalization(), (4, 3))
    layer = model.layers[-1]
    layer.moving_mean.assign(np.full(3, 10.0, "float32"))  # the batch's own mean is about 0
    assert_exports_match(model, data)


def test_unit_normalization_keeps_a_zero_vector_zero():
    model, data = _model(L.UnitNormalization(), (3,))
    data[0] = 0.0
    assert_exports_match(model, data)


RESHAPINGS = [
    (lambda: L.Flatten(), (5, 4, 3)),
    (lambda: L.Flatten(data_format="channels_first"), (5, 4, 3)),
    (lambda: L.Reshape((-1, 2)), (6,)),
    (lambda: L.Reshape((2, 3, 2)), (4, 3)),
    (lambda: L.Permute((2, 3, 1)), (5, 4, 3)),
    (lambda: L.RepeatVector(3), (4,)),
    (lambda: L.UpSampling1D(3), (4, 2)),
    (lambda: L.UpSampling2D((2, 3)), (4, 3, 2)),
    (lambda: L.UpSampling2D((2, 3), interpolation="bilinear"), (4, 3, 2)),
    (lambda: L.UpSampling2D(2, interpolation="bilinear", data_format="channels_first"), (2, 4, 3)),
    (lambda: L.ZeroPadding1D((1, 2)), (4, 3)),
    (lambda: L.ZeroPadding2D(((1, 0), (2, 1))), (4, 3, 2)),
    (lambda: L.ZeroPadding2D(1, data_format="channels_first"), (2, 4, 3)),
    (lambda: L.Cropping1D((1, 2)), (6, 2)),
    (lambda: L.Cropping2D(((1, 0), (0, 2))), (4, 5, 2)),
    (lambda: L.Cropping2D(1, data_format="channels_first"), (2, 4, 5)),
]


@pytest.mark.parametrize("make, shape", RESHAPINGS)
def test_reshapings_match(make, shape):
    _matches(make(), shape)


@pytest.mark.parametrize("make, shape, data_shape", [
    (lambda: L.Reshape((-1, 2)), (None, 4), (3, 4)),
    (lambda: L.Flatten(), (None, 3), (5, 3)),
    (lambda: L.UpSampling2D(2, interpolation="bilinear"), (None, None, 2), (3, 5, 2)),
    (lambda: L.Cropping2D(((1, 0), (0, 2))), (None, None, 2), (4, 5, 2)),
    (lambda: L.ZeroPadding1D(2), (None, 3), (4, 3)),
], ids=["Reshape", "Flatten", "UpSampling2D", "Cropping2D", "ZeroPadding1D"])
def test_reshapings_of_sizes_unknown_at_export(make, shape, data_shape):
    _matches(make(), shape, data_shape)


PREPROCESSINGS = [
    (lambda: L.Rescaling(1 / 127.5, offset=-1.0), "float32"),
    (lambda: L.Rescaling(1 / 255.0), "uint8"),
    (lambda: L.Rescaling([1.0, 2.0], offset=[0.5, 1.0]), "float32"),
    (lambda: L.Normalization(axis=(1, 3)), "float32"),
    (lambda: L.Normalization(axis=None), "int32"),
    (lambda: L.Normalization(mean=[1.0, 2.0], variance=[4.0, 0.0], invert=True), "float32"),
    (lambda: L.Normalization(mean=3.0, variance=2.0), "float32"),
    (lambda: L.Resizing(5, 5, pad_to_aspect_ratio=True, fill_value=2.0), "float32"),
    (lambda: L.Resizing(4, 3, data_format="channels_first"), "float32"),
    (lambda: L.Resizing(7, 4, interpolation="nearest"), "uint8"),
    (lambda: L.CenterCrop(4, 3), "float32"),
    (lambda: L.CenterCrop(9, 3), "float32"),  # larger than the image: cropped to the aspect ratio and resized
]


@pytest.mark.parametrize("make, dtype", PREPROCESSINGS)
def test_preprocessings_match(make, dtype):
    _matches(make(), (7, 4, 2), dtype=dtype)


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest", "bicubic", "lanczos3", "lanczos5"])
@pytest.mark.parametrize("options", [{}, {"crop_to_aspect_ratio": True}, {"antialias": True}], ids=str)
def test_every_resizing_interpolation_matches(interpolation, options):
    _matches(L.Resizing(4, 9, interpolation=interpolation, **options), (7, 6, 2))


def test_resizing_needs_a_known_image_size():
    x = Input(shape=(None, None, 3))
    with pytest.raises(OnnxExportError, match=r"'resize' \(Resizing\).*known height and width.*\(None, None, None, 3\)"):
        to_onnx(Model(x, L.Resizing(4, 4, name="resize")(x)))


def test_a_convolution_stack_keeps_transposes_at_its_borders():
    model = Sequential([
        Input(shape=(12, 12, 3)), L.ZeroPadding2D(1), L.Conv2D(4, 3, strides=2, activation="relu"),
        L.BatchNormalization(), L.MaxPooling2D(2, padding="same"), L.DepthwiseConv2D(3, padding="same"),
        L.SeparableConv2D(6, 3, padding="same", activation="swish"), L.UpSampling2D(2),
        L.Conv2DTranspose(3, 2, strides=2), L.GlobalAveragePooling2D(), L.Dense(2),
    ])
    proto = assert_exports_match(model, np.random.default_rng(0).uniform(-1, 1, (2, 12, 12, 3)).astype("float32"))
    ops = [node.op_type for node in proto.graph.node]
    assert ops.count("Transpose") == 1 and ops[0] == "Transpose"
