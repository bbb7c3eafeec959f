"""ONNX converters of the normalization layers, in inference mode.

- BatchNormalization: ONNX's BatchNormalization (the moving statistics) with the
  feature axis moved to axis 1; several feature axes: the same arithmetic
  written out with broadcast weights.
- LayerNormalization: ONNX's LayerNormalization over the trailing axes (other
  axes are moved last first); ``rms_scaling`` (Keras' ``x / sqrt(variance +
  epsilon) * gamma``, the variance still centered) written out.
- GroupNormalization: the moments over ``(channels per group, spatial)`` with
  ReduceMean on a ``(batch, groups, -1)`` view (ONNX's own GroupNormalization took
  per-group scales before opset 21).
- UnitNormalization: ``x / max(||x||, 1e-12)``.
"""

import numpy as np

from layers._onnx import onnx_converter
from layers.normalization import BatchNormalization, GroupNormalization, LayerNormalization, UnitNormalization
from layers.normalization._base import resolve_axes
from layers.normalization.unit_normalization import _EPSILON


def _moved(call, x, source, destination, rank, build):
    """``build`` on ``x`` with axes ``source`` moved to ``destination`` (then moved back)."""
    order = [axis for axis in range(rank) if axis not in source]
    for position, axis in sorted(zip(destination, source)):
        order.insert(position, axis)
    if order == list(range(rank)):
        return build(x)
    if order == [0, rank - 1] + list(range(1, rank - 1)):
        return call.to_channels_last(build(call.to_channels_first(x, rank)), rank)
    if order == [0] + list(range(2, rank)) + [1]:
        return call.to_channels_first(build(call.to_channels_last(x, rank)), rank)
    inverse = [int(axis) for axis in np.argsort(order)]
    return call.op("Transpose", [build(call.op("Transpose", [x], perm=order))], perm=inverse)


def _ones(call, shape):
    return call.constant(np.ones(shape, np.float32))


def _broadcast(variable, axes, rank):
    """A transform reshaping a weight spanning ``axes`` to broadcast against rank-``rank`` inputs."""
    def reshape(array):
        shape = [1] * rank
        for axis, size in zip(axes, array.shape):
            shape[axis] = size
        return array.reshape(shape)
    return reshape


@onnx_converter(BatchNormalization)
def batch_normalization(layer, call):
    rank = len(call.input_shapes[0])
    axes = layer._param_axes
    if len(axes) == 1 and rank >= 2:
        shape = layer.moving_mean.shape

        def build(x):
            scale = call.weight(layer.gamma) if layer.gamma is not None else _ones(call, shape)
            offset = call.weight(layer.beta) if layer.beta is not None else call.constant(np.zeros(shape, np.float32))
            return call.op("BatchNormalization", [x, scale, offset, call.weight(layer.moving_mean),
                                                  call.weight(layer.moving_variance)], epsilon=layer.epsilon)

        return _moved(call, call.input, axes, (1,), rank, build)
    key = "axes" + "".join(map(str, axes))

    def weight(variable):
        return call.weight(variable, _broadcast(variable, axes, rank), key=key)

    inv_std = call.op("Reciprocal", [call.op("Sqrt", [call.op("Add", [
        weight(layer.moving_variance), call.constant(np.float32(layer.epsilon))])])])
    y = call.op("Mul", [call.op("Sub", [call.input, weight(layer.moving_mean)]), inv_std])
    if layer.gamma is not None:
        y = call.op("Mul", [y, weight(layer.gamma)])
    if layer.beta is not None:
        y = call.op("Add", [y, weight(layer.beta)])
    return y


@onnx_converter(LayerNormalization)
def layer_normalization(layer, call):
    rank = len(call.input_shapes[0])
    axes = layer._param_axes
    trailing = tuple(range(rank - len(axes), rank))
    shape = tuple(call.input_shapes[0][axis] for axis in axes)

    def build(x):
        if layer.rms_scaling:
            reduced = call.constant(np.array(trailing, np.int64))
            centered = call.op("Sub", [x, call.op("ReduceMean", [x, reduced], keepdims=1)])
            variance = call.op("ReduceMean", [call.op("Mul", [centered, centered]), reduced], keepdims=1)
            std = call.op("Sqrt", [call.op("Add", [variance, call.constant(np.float32(layer.epsilon))])])
            return call.op("Mul", [call.op("Div", [x, std]), call.weight(layer.gamma)])
        scale = call.weight(layer.gamma) if layer.gamma is not None else _ones(call, shape)
        bias = [call.weight(layer.beta)] if layer.beta is not None else []
        return call.op("LayerNormalization", [x, scale] + bias, axis=trailing[0], epsilon=layer.epsilon)

    return _moved(call, call.input, axes, trailing, rank, build)


@onnx_converter(GroupNormalization)
def group_normalization(layer, call):
    rank = len(call.input_shapes[0])
    (axis,) = layer._param_axes

    def build(x):
        grouped = call.op("Reshape", [x, call.constant(np.array([0, layer._group_count, -1], np.int64))])
        reduced = call.constant(np.array([2], np.int64))
        centered = call.op("Sub", [grouped, call.op("ReduceMean", [grouped, reduced], keepdims=1)])
        variance = call.op("ReduceMean", [call.op("Mul", [centered, centered]), reduced], keepdims=1)
        std = call.op("Sqrt", [call.op("Add", [variance, call.constant(np.float32(layer.epsilon))])])
        y = call.op("Reshape", [call.op("Div", [centered, std]), call.op("Shape", [x])])
        if layer.gamma is not None:
            y = call.op("Mul", [y, call.weight(layer.gamma, _broadcast(layer.gamma, (1,), rank), key="channels_first")])
        if layer.beta is not None:
            y = call.op("Add", [y, call.weight(layer.beta, _broadcast(layer.beta, (1,), rank), key="channels_first")])
        return y

    return _moved(call, call.input, (axis,), (1,), rank, build)


@onnx_converter(UnitNormalization)
def unit_normalization(layer, call):
    axes = resolve_axes(layer.axis, call.input_shapes[0], layer.name)
    norm = call.op("Sqrt", [call.op("ReduceSumSquare", [call.input, call.constant(np.array(axes, np.int64))],
                                    keepdims=1)])
    return call.op("Div", [call.input, call.op("Max", [norm, call.constant(np.float32(_EPSILON))])])
