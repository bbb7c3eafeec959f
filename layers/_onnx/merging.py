"""ONNX converters of the merging layers: Add, Subtract, Multiply, Average,
Maximum, Minimum (masks not exported), Concatenate and Dot."""

import numpy as np

from layers._onnx import onnx_converter
from layers.merging import Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract
from layers.merging.dot import _EPSILON

_ELEMENTWISE = {Add: "Add", Subtract: "Sub", Multiply: "Mul", Average: "Add", Maximum: "Max", Minimum: "Min"}


def _aligned(call):
    """The inputs with size-1 axes inserted after the batch axis up to the highest rank (as the layers align them)."""
    ranks = [len(shape) for shape in call.input_shapes]
    top = max(ranks)
    return [x if rank == top else call.op("Unsqueeze", [x, call.constant(list(range(1, 1 + top - rank)))])
            for x, rank in zip(call.inputs, ranks)]


@onnx_converter(*_ELEMENTWISE)
def elementwise(layer, call):
    """A chain of binary operators, in input order (the layer's own order of operations)."""
    op_type = next(op for cls, op in _ELEMENTWISE.items() if isinstance(layer, cls))
    inputs = _aligned(call)
    y = inputs[0]
    for x in inputs[1:]:
        y = call.op(op_type, [y, x])
    if isinstance(layer, Average):
        y = call.op("Div", [y, call.constant(np.float32(len(inputs)))])
    return y


@onnx_converter(Concatenate)
def concatenate(layer, call):
    """Concat on the layer's axis."""
    return call.op("Concat", call.inputs, axis=layer.axis)


def _l2_normalize(call, x, axis):
    squares = call.op("ReduceSum", [call.op("Mul", [x, x]), call.constant([axis])], keepdims=1)
    norm = call.op("Sqrt", [call.op("Max", [squares, call.constant(np.float32(_EPSILON**2))])])
    return call.op("Mul", [x, call.op("Reciprocal", [norm])])


def _move_axis(call, x, rank, source, destination):
    order = [axis for axis in range(rank) if axis != source]
    order.insert(destination % rank, source)
    return x if order == list(range(rank)) else call.op("Transpose", [x], perm=order)


@onnx_converter(Dot)
def dot(layer, call):
    """A batched MatMul: x's dot axis moved last and y's to axis 1, both flattened to three axes."""
    (shape_x, shape_y), (x, y) = call.input_shapes, call.inputs
    axis_x, axis_y = layer._dot_axes(shape_x, shape_y)
    if layer.normalize:
        x, y = _l2_normalize(call, x, axis_x), _l2_normalize(call, y, axis_y)
    x = _move_axis(call, x, len(shape_x), axis_x, -1)
    y = _move_axis(call, y, len(shape_y), axis_y, 1)
    x = call.op("Reshape", [x, call.constant([0, -1, shape_x[axis_x]])])
    y = call.op("Reshape", [y, call.constant([0, shape_y[axis_y], -1])])
    product = call.op("MatMul", [x, y])
    rest = [-1 if d is None else d for d in call.output_shapes[0][1:]]
    if rest.count(-1) > 1:
        call.unsupported(f"its output shape {call.output_shapes[0]} has more than one unknown size besides the batch")
    return call.op("Reshape", [product, call.constant([0, *rest])])
