"""ONNX converters of the preprocessing layers.

Integer inputs (pixels) are cast to float32 first, as the layers do. Resizing
and CenterCrop multiply each spatial axis by the same interpolation matrix the
layer uses (``layers/_interpolation.py``, jax's resize), one MatMul per axis in
channels-first layout: exact for every interpolation and for ``antialias``,
which ONNX's Resize does not all reproduce; it needs the image size at export.
"""

import numpy as np

from layers._onnx import onnx_converter
from layers._onnx.convolutional import in_channels_first
from layers._onnx.reshaping import crop
from layers.preprocessing import CenterCrop, Normalization, Rescaling, Resizing
from layers.preprocessing.normalization import _EPSILON

def floating(call):
    """The call's input, cast to float32 when it is not floating."""
    if np.dtype(call.input_dtypes[0]).kind == "f":
        return call.input
    return call.cast(call.input, "float32")


@onnx_converter(Rescaling)
def rescaling(layer, call):
    y = call.op("Mul", [floating(call), call.constant(np.asarray(layer.scale, np.float32))])
    return call.op("Add", [y, call.constant(np.asarray(layer.offset, np.float32))])


@onnx_converter(Normalization)
def normalization(layer, call):
    shape = layer._broadcast_shape
    if layer.input_mean is None:
        mean = call.weight(layer.adapt_mean, lambda value: value.reshape(shape), key="broadcast")
        std = call.weight(layer.adapt_variance, key="std", transform=lambda value: np.maximum(
            np.sqrt(value.reshape(shape)), np.asarray(_EPSILON, value.dtype)))
    else:
        given_mean, given_variance = layer._given
        mean = call.constant(np.ascontiguousarray(given_mean, np.float32))
        std = call.constant(np.maximum(np.sqrt(given_variance), np.float32(_EPSILON)).astype(np.float32))
    x = floating(call)
    if layer.invert:
        return call.op("Add", [mean, call.op("Mul", [x, std])])
    return call.op("Div", [call.op("Sub", [x, mean]), std])


def _image_shape(layer, call):
    shape = call.input_shapes[0]
    if len(shape) != 4 or None in (shape[layer._resize.axes[0]], shape[layer._resize.axes[1]]):
        call.unsupported(f"it exports batches of images of known height and width, received input shape {shape}; "
                         "give the model's Input a fixed image size")
    return shape


def image_resize(call, resize, x, shape):
    """``resize`` (an ``ImageResize``) of channels-first ``x``, whose layout-order ``shape`` is known."""
    pairs = resize._pairs(shape)
    if resize.crop_to_aspect_ratio:
        x = crop(call, x, pairs)
    elif resize.pad_to_aspect_ratio:
        pads = [0, 0, pairs[0][0], pairs[1][0], 0, 0, pairs[0][1], pairs[1][1]]
        x = call.op("Pad", [x, call.constant(np.array(pads, np.int64)),
                            call.constant(np.float32(resize.fill_value))], mode="constant")
    rows, columns = resize._matrices(resize._boxed_shape(shape, pairs))
    if rows is not None:
        x = call.op("MatMul", [call.constant(np.ascontiguousarray(rows.T, np.float32)), x])
    if columns is not None:
        x = call.op("MatMul", [x, call.constant(np.asarray(columns, np.float32))])
    return x


@onnx_converter(Resizing)
def resizing(layer, call):
    shape = _image_shape(layer, call)
    return in_channels_first(call, layer, floating(call), lambda x: image_resize(call, layer._resize, x, shape))


@onnx_converter(CenterCrop)
def center_crop(layer, call):
    shape = _image_shape(layer, call)
    pairs = layer._crop_pairs(shape)
    if pairs is None:  # an image smaller than the box: cropped to its aspect ratio and resized
        return in_channels_first(call, layer, floating(call), lambda x: image_resize(call, layer._resize, x, shape))
    return in_channels_first(call, layer, floating(call), lambda x: crop(call, x, pairs))
