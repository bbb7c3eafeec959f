"""ONNX converters of the pooling layers: MaxPool and AveragePool in channels-first
layout, and the global poolings as GlobalMaxPool / GlobalAveragePool.

Keras on jax averages a ``"same"``-padded edge window over its real inputs only:
ONNX's ``count_include_pad=0``. The global poolings run channels-first too, so a
convolution stack that ends in one keeps no transpose before it.
"""

from layers._onnx import onnx_converter
from layers._onnx.convolutional import in_channels_first, window_padding
from layers.pooling import (AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D, GlobalAveragePooling2D,
                            GlobalMaxPooling1D, GlobalMaxPooling2D, MaxPooling1D, MaxPooling2D)


def _pool(op_type, layer, call, **attributes):
    padding = window_padding(call, layer, layer.pool_size, (1,) * layer.rank)
    return in_channels_first(call, layer, call.input, lambda x: call.op(
        op_type, [x], kernel_shape=list(layer.pool_size), strides=list(layer.strides), **padding, **attributes))


@onnx_converter(MaxPooling1D, MaxPooling2D)
def max_pooling(layer, call):
    return _pool("MaxPool", layer, call)


@onnx_converter(AveragePooling1D, AveragePooling2D)
def average_pooling(layer, call):
    return _pool("AveragePool", layer, call, count_include_pad=0)


def _global_pool(op_type, layer, call):
    if not layer.keepdims:  # (batch, channels, 1, ...) to (batch, channels) in either layout
        x = call.input if layer.data_format == "channels_first" else call.to_channels_first(
            call.input, len(call.input_shapes[0]))
        return call.op("Flatten", [call.op(op_type, [x])], axis=1)
    return in_channels_first(call, layer, call.input, lambda x: call.op(op_type, [x]))


@onnx_converter(GlobalAveragePooling1D, GlobalAveragePooling2D)
def global_average_pooling(layer, call):
    return _global_pool("GlobalAveragePool", layer, call)


@onnx_converter(GlobalMaxPooling1D, GlobalMaxPooling2D)
def global_max_pooling(layer, call):
    return _global_pool("GlobalMaxPool", layer, call)
