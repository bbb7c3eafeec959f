"""ONNX converters of the layers keras.applications architectures define for
themselves (layers/applications.py): ConvNeXt's LayerScale and
InceptionResNetV2's CustomScaleLayer, both elementwise."""

import numpy as np

from layers._onnx import onnx_converter
from layers.applications import CustomScaleLayer, LayerScale


@onnx_converter(LayerScale)
def layer_scale(layer, call):
    return call.op("Mul", [call.input, call.weight(layer.gamma)])


@onnx_converter(CustomScaleLayer)
def custom_scale_layer(layer, call):
    residual, branch = call.inputs
    return call.op("Add", [residual, call.op("Mul", [branch, call.constant(np.float32(layer.scale))])])
