"""ONNX converters of the convolutions: Conv and ConvTranspose in channels-first layout.

Keras keeps its kernels as ``(*kernel_size, in, out)``; ONNX wants ``(out, in,
*kernel_size)``, so each kernel is stored transposed once (key ``"oi..."``).
Channels-last layers wrap the operator in ``call.to_channels_first`` and
``call.to_channels_last``: the exporter's clean-up pass removes the pairs that
cancel between consecutive layers. The activation runs channels-first too, so
the transposes of the next layer meet these, except softmax's, whose axis -1 is
the layout's last axis (as in Keras).
"""

import numpy as np

from layers import activations
from layers._onnx import onnx_converter
from layers._onnx.activation import activation
from layers.convolutional import (Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D, DepthwiseConv2D,
                                  SeparableConv2D)
from layers.convolutional._im2col import padding_pads, transpose_pads


def onnx_kernel(kernel):
    """A Keras ``(*kernel_size, in, out)`` kernel as ONNX's ``(out, in, *kernel_size)``.

    Example:
        >>> onnx_kernel(np.zeros((3, 5, 2, 4))).shape
        (4, 2, 3, 5)
    """
    rank = kernel.ndim - 2
    return np.ascontiguousarray(kernel.transpose((rank + 1, rank) + tuple(range(rank))))


def depthwise_onnx_kernel(kernel):
    """A Keras depthwise ``(*kernel_size, channels, multiplier)`` kernel as ONNX's grouped
    ``(channels * multiplier, 1, *kernel_size)``: output channel ``c * multiplier + m``.

    Example:
        >>> depthwise_onnx_kernel(np.zeros((3, 3, 4, 2))).shape
        (8, 1, 3, 3)
    """
    return onnx_kernel(kernel.reshape(kernel.shape[:-2] + (1, -1)))


_ALONG_AN_AXIS = frozenset({"softmax", "log_softmax"})


def in_channels_first(call, layer, x, build):
    """``build(x)`` on ``x`` in channels-first layout: wrapped in transposes when the
    layer's ``data_format`` is channels-last."""
    rank = len(call.input_shapes[0])
    if layer.data_format == "channels_first":
        return build(x)
    return call.to_channels_last(build(call.to_channels_first(x, rank)), rank)


def _activated(call, layer, build):
    """``build`` in channels-first layout, then the layer's activation: inside the
    transposes when it works value by value, after them when it works along an axis."""
    if activations.get(layer.activation).__name__ in _ALONG_AN_AXIS:
        return activation(call, layer.activation, in_channels_first(call, layer, call.input, build))
    return in_channels_first(call, layer, call.input, lambda x: activation(call, layer.activation, build(x)))


def _spatial(call, layer):
    shape = call.input_shapes[0]
    return tuple(shape[2:]) if layer.data_format == "channels_first" else tuple(shape[1:-1])


def _onnx_pads(pads):
    """``((before, after), ...)`` per axis as ONNX's ``[before..., after...]``."""
    return [before for before, _ in pads] + [after for _, after in pads]


def window_padding(call, layer, kernel_size, dilation_rate):
    """The padding attributes of a windowed operator: explicit ``pads`` when they are
    known, ``auto_pad="SAME_UPPER"`` (lax's SAME: the odd pad at the end) for
    ``"same"`` on an axis of unknown size."""
    spatial = _spatial(call, layer)
    if layer.padding == "same" and None in spatial and max(layer.strides) > 1:
        return {"auto_pad": "SAME_UPPER"}
    known = tuple(1 if n is None else n for n in spatial)  # stride 1: the pads do not depend on the size
    return {"pads": _onnx_pads(padding_pads(known, kernel_size, layer.strides, dilation_rate, layer.padding))}


def _conv(call, layer, x, kernel, group, bias):
    attributes = window_padding(call, layer, layer.kernel_size, layer.dilation_rate)
    inputs = [x, kernel] + ([bias] if bias is not None else [])
    return call.op("Conv", inputs, kernel_shape=list(layer.kernel_size), strides=list(layer.strides),
                   dilations=list(layer.dilation_rate), group=group, **attributes)


def _bias(call, layer):
    return call.weight(layer.bias) if layer.bias is not None else None


@onnx_converter(Conv1D, Conv2D, Conv3D)
def conv(layer, call):
    kernel = call.weight(layer.kernel, onnx_kernel, key="oi")
    return _activated(call, layer, lambda x: _conv(call, layer, x, kernel, layer.groups, _bias(call, layer)))


@onnx_converter(DepthwiseConv2D)
def depthwise_conv(layer, call):
    kernel = call.weight(layer.kernel, depthwise_onnx_kernel, key="oi")
    groups = call.input_shapes[0][1 if layer.data_format == "channels_first" else -1]
    return _activated(call, layer, lambda x: _conv(call, layer, x, kernel, groups, _bias(call, layer)))


@onnx_converter(SeparableConv2D)
def separable_conv(layer, call):
    depthwise = call.weight(layer.depthwise_kernel, depthwise_onnx_kernel, key="oi")
    pointwise = call.weight(layer.pointwise_kernel, onnx_kernel, key="oi")
    groups = call.input_shapes[0][1 if layer.data_format == "channels_first" else -1]

    def build(x):
        z = _conv(call, layer, x, depthwise, groups, None)
        inputs = [z, pointwise] + ([_bias(call, layer)] if layer.bias is not None else [])
        return call.op("Conv", inputs, kernel_shape=[1, 1])

    return _activated(call, layer, build)


@onnx_converter(Conv1DTranspose, Conv2DTranspose)
def conv_transpose(layer, call):
    """Keras' transposed convolution crops ``before`` values from the start of the full
    ``(size - 1) * strides + span`` output and ``after`` from its end; a negative
    ``after`` (outputs past the last patch) is ONNX's ``output_padding``."""
    spatial = _spatial(call, layer)
    if None in spatial and layer.padding == "same":
        call.unsupported("a transposed convolution with padding='same' needs known spatial sizes to export; "
                         "give the model's Input a fixed spatial shape")
    known = tuple(1 if n is None else n for n in spatial)  # 'valid' pads do not depend on the size
    pads, _ = transpose_pads(known, layer.kernel_size, layer.strides, layer.dilation_rate, layer.padding,
                             layer.output_padding)
    kernel = call.weight(layer.kernel, onnx_kernel, key="oi")
    attributes = dict(kernel_shape=list(layer.kernel_size), strides=list(layer.strides),
                      dilations=list(layer.dilation_rate),
                      pads=_onnx_pads([(before, max(after, 0)) for before, after in pads]),
                      output_padding=[max(-after, 0) for _, after in pads])
    bias = [_bias(call, layer)] if layer.bias is not None else []
    return _activated(call, layer, lambda x: call.op("ConvTranspose", [x, kernel] + bias, **attributes))

