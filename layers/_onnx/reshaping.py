"""ONNX converters of the reshaping layers.

The spatial ones (padding, cropping, upsampling) work channels-first inside
``in_channels_first``, so between two convolutions they add no transpose. The
batch axis stays dynamic: Reshape keeps it with ``0`` or lets ``-1`` find it.
"""

import numpy as np

from layers._onnx import onnx_converter
from layers._onnx.convolutional import in_channels_first
from layers.reshaping import (Cropping1D, Cropping2D, Flatten, Permute, RepeatVector, Reshape, UpSampling1D,
                              UpSampling2D, ZeroPadding1D, ZeroPadding2D)

_TO_THE_END = np.iinfo(np.int64).max


def _ints(call, values):
    return call.constant(np.array(values, np.int64))


@onnx_converter(Flatten)
def flatten(layer, call):
    x, rank = call.input, len(call.input_shapes[0])
    if layer.data_format == "channels_first" and rank > 2:
        x = call.to_channels_last(x, rank)
    return call.op("Flatten", [x], axis=1)


@onnx_converter(Reshape)
def reshape(layer, call):
    sample = call.output_shapes[0][1:]
    # A known sample shape lets -1 stand for the batch; otherwise 0 copies it (and -1 is Keras' own).
    shape = [-1, *sample] if None not in sample else [0, *layer.target_shape]
    return call.op("Reshape", [call.input, _ints(call, shape)])


@onnx_converter(Permute)
def permute(layer, call):
    return call.op("Transpose", [call.input], perm=[0, *layer.dims])


@onnx_converter(RepeatVector)
def repeat_vector(layer, call):
    expanded = call.op("Unsqueeze", [call.input, _ints(call, [1])])
    return call.op("Tile", [expanded, _ints(call, [1, layer.n, 1])])


def _pad(call, x, pairs):
    """Zeros at both ends of the spatial axes of channels-first ``x`` (``pairs``: (before, after) per axis)."""
    pads = [0, 0, *(before for before, _ in pairs), 0, 0, *(after for _, after in pairs)]
    return call.op("Pad", [x, _ints(call, pads)], mode="constant")


@onnx_converter(ZeroPadding1D, ZeroPadding2D)
def zero_padding(layer, call):
    return in_channels_first(call, layer, call.input, lambda x: _pad(call, x, layer._pairs))


def crop(call, x, pairs, first_axis=2):
    """``x`` without ``pairs[i] = (before, after)`` values at the ends of axis ``first_axis + i``."""
    starts = [before for before, _ in pairs]
    ends = [-after if after else _TO_THE_END for _, after in pairs]
    axes = list(range(first_axis, first_axis + len(pairs)))
    return call.op("Slice", [x, _ints(call, starts), _ints(call, ends), _ints(call, axes)])


@onnx_converter(Cropping1D, Cropping2D)
def cropping(layer, call):
    return in_channels_first(call, layer, call.input, lambda x: crop(call, x, layer._pairs))


def _upsample(call, x, factors, interpolation):
    """Channels-first ``x`` enlarged by integer ``factors`` on its spatial axes: ``"nearest"``
    repeats values (floor of ``j / factor``), ``"bilinear"`` is jax's half-pixel triangle kernel."""
    scales = call.constant(np.array([1.0, 1.0, *factors], np.float32))
    if interpolation == "nearest":
        attributes = dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    else:
        attributes = dict(mode="linear", coordinate_transformation_mode="half_pixel")
    return call.op("Resize", [x, "", scales], **attributes)


@onnx_converter(UpSampling1D)
def up_sampling_1d(layer, call):
    rank = 3
    y = _upsample(call, call.to_channels_first(call.input, rank), (layer.size,), "nearest")
    return call.to_channels_last(y, rank)


@onnx_converter(UpSampling2D)
def up_sampling_2d(layer, call):
    return in_channels_first(call, layer, call.input,
                             lambda x: _upsample(call, x, layer.size, layer.interpolation))
