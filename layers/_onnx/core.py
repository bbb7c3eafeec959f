"""ONNX converters of the core layers: Dense, the identities of inference
(Dropout and the other noise layers, Identity, Masking, ActivityRegularization),
and Lambda and MaskOf, which have none."""

from engine.network.mask_of import MaskOf
from layers._onnx import onnx_converter
from layers._onnx.activation import activation
from layers.core import Dense, Identity, Lambda, Masking
from layers.core.seed_generator import _NoiseLayer


@onnx_converter(Dense)
def dense(layer, call):
    """MatMul on the last axis, Add of the bias, then the activation."""
    y = call.op("MatMul", [call.input, call.weight(layer.kernel)])
    if layer.use_bias:
        y = call.op("Add", [y, call.weight(layer.bias)])
    return activation(call, layer.activation, y)


@onnx_converter(_NoiseLayer, Identity)
def identity(layer, call):
    """Inference passes the input through (Dropout, GaussianNoise... act only in training): no node."""
    return call.inputs[0] if len(call.inputs) == 1 else call.inputs


@onnx_converter(Masking)
def masking(layer, call):
    """Zeros the timesteps whose features all equal ``mask_value`` (the mask itself is not exported)."""
    x = call.input
    differs = call.op("Not", [call.op("Equal", [x, call.constant(layer.mask_value, dtype=call.input_dtypes[0])])])
    keep = call.op("ReduceMax", [call.cast(differs, "float32"), call.constant([-1])], keepdims=1)
    return call.op("Where", [call.cast(keep, "bool"), x, call.constant(0, dtype=call.input_dtypes[0])])


@onnx_converter(Lambda)
def lambda_layer(layer, call):
    """A Lambda runs arbitrary Python, which no ONNX operator covers."""
    call.unsupported("a Lambda layer runs arbitrary Python code, which ONNX cannot express. Replace it with "
                     "built-in layers, or with a layer class of your own and its converter "
                     "(graph.register_onnx_converter)")


@onnx_converter(MaskOf)
def mask_of(layer, call):
    """A model that outputs a mask cannot be exported: the exported graph computes no masks."""
    call.unsupported("a model output that is a mask (a tensor's _keras_mask) has no ONNX form: the exported graph "
                     "computes what an unmasked call computes. Output a tensor computed from the data instead "
                     "(ops.any(ops.not_equal(x, 0), axis=-1) for Masking's mask)")
