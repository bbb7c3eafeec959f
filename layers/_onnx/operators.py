"""ONNX converters of the operator layers of engine/network/ops.py: ``x + 1``,
``a @ b``, ``x < 0``, ``-x``, ``abs(x)``, ``round(x, 1)``, ``x.reshape(...)``,
``x.squeeze()`` and ``x[:, 0]``."""

import numpy as np

from engine.network.ops import BinaryOp, GetItem, ReshapeOp, Round, SqueezeOp, UnaryOp
from layers._onnx import onnx_converter

_INT64_MAX, _INT64_MIN = int(np.iinfo(np.int64).max), int(np.iinfo(np.int64).min)
_DIRECT = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div", "power": "Pow", "matmul": "MatMul",
           "less": "Less", "less_equal": "LessOrEqual", "greater": "Greater", "greater_equal": "GreaterOrEqual",
           "equal": "Equal", "logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}


def _operands(layer, call):
    """The two operands' names, cast to the dtype NumPy computes in (a Python
    number takes the tensor's dtype), and that dtype."""
    if layer.constant is None:
        names, dtypes = list(call.inputs), [np.dtype(d) for d in call.input_dtypes]
        common = np.result_type(*dtypes)
    else:
        tensor_dtype = np.dtype(call.input_dtypes[0])
        common = np.result_type(tensor_dtype, layer.constant)  # a Python scalar is weak, as in the layer
        names, dtypes = [call.input, call.constant(layer.constant, dtype=common)], [tensor_dtype, common]
        if layer.constant_position == "left":
            names, dtypes = names[::-1], dtypes[::-1]
    if layer.op.startswith("logical_"):
        common = np.dtype(bool)
    return [name if dtype == common else call.cast(name, common) for name, dtype in zip(names, dtypes)], common


@onnx_converter(BinaryOp)
def binary_op(layer, call):
    """The ONNX operator of the op; ``not_equal``, ``floor_divide`` and ``mod``
    (NumPy's floored, sign-of-divisor semantics) are composed."""
    (left, right), dtype = _operands(layer, call)
    if layer.op in _DIRECT:
        return call.op(_DIRECT[layer.op], [left, right])
    if layer.op == "not_equal":
        return call.op("Not", [call.op("Equal", [left, right])])
    integer = dtype.kind in "iu"
    if layer.op == "floor_divide":
        if integer:  # exact: (l - l mod r) / r
            return call.op("Div", [call.op("Sub", [left, call.op("Mod", [left, right])]), right])
        return call.op("Floor", [call.op("Div", [left, right])])
    if integer:  # mod
        return call.op("Mod", [left, right])
    remainder = call.op("Mod", [left, right], fmod=1)  # the sign of the dividend: moved to the divisor's
    zero = call.constant(0, dtype=dtype)
    signs_differ = call.op("Xor", [call.op("Less", [remainder, zero]), call.op("Less", [right, zero])])
    shift = call.op("And", [signs_differ, call.op("Not", [call.op("Equal", [remainder, zero])])])
    return call.op("Where", [shift, call.op("Add", [remainder, right]), remainder])


@onnx_converter(UnaryOp)
def unary_op(layer, call):
    """Neg, Abs, or Not (of the input as bools)."""
    if layer.op == "logical_not":
        x = call.input if call.input_dtypes[0] == "bool" else call.cast(call.input, "bool")
        return call.op("Not", [x])
    return call.op({"negative": "Neg", "absolute": "Abs"}[layer.op], [call.input])


@onnx_converter(Round)
def round_op(layer, call):
    """Round (halves to even) of the input scaled by 10 ** decimals, as NumPy rounds."""
    x, dtype = call.input, call.input_dtypes[0]
    if np.dtype(dtype).kind in "iub":
        if layer.decimals >= 0:
            return x
        call.unsupported("rounding integers to negative decimals is not exported")
    if layer.decimals == 0:
        return call.op("Round", [x])
    factor = call.constant(10.0 ** abs(layer.decimals), dtype=dtype)
    scale, unscale = ("Mul", "Div") if layer.decimals > 0 else ("Div", "Mul")
    return call.op(unscale, [call.op("Round", [call.op(scale, [x, factor])]), factor])


@onnx_converter(ReshapeOp)
def reshape_op(layer, call):
    """Reshape to ``newshape`` (batch axis included, as given); a 0 is a size, not a copy."""
    return call.op("Reshape", [call.input, call.constant(list(layer.newshape))],
                   allowzero=1 if 0 in layer.newshape else None)


@onnx_converter(SqueezeOp)
def squeeze_op(layer, call):
    """Squeeze of the axes found when the layer was built (none: no node)."""
    if not layer._axes:
        return call.input
    return call.op("Squeeze", [call.input, call.constant(list(layer._axes))])


@onnx_converter(GetItem)
def get_item(layer, call):
    """Basic indexing as one Slice (ints take one element), a Squeeze of the
    int-indexed axes and an Unsqueeze for each None."""
    rank = len(call.input_shapes[0])
    key = list(layer.key)
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key[at:at + 1] = [slice(None)] * (rank - sum(k is not None for k in key if k is not Ellipsis))
    key += [slice(None)] * (rank - sum(k is not None for k in key))
    starts, ends, axes, steps, squeezed, inserted = [], [], [], [], [], []
    axis = position = 0
    for item in key:
        if item is None:
            inserted.append(position)
            position += 1
            continue
        if isinstance(item, int):
            starts.append(item)
            ends.append(item + 1 if item != -1 else _INT64_MAX)
            steps.append(1)
            axes.append(axis)
            squeezed.append(axis)
        elif item != slice(None):
            step = 1 if item.step is None else item.step
            starts.append(item.start if item.start is not None else (0 if step > 0 else _INT64_MAX))
            ends.append(item.stop if item.stop is not None else (_INT64_MAX if step > 0 else _INT64_MIN))
            steps.append(step)
            axes.append(axis)
            position += 1
        else:
            position += 1
        axis += 1
    y = call.input
    if axes:
        y = call.op("Slice", [y, call.constant(starts), call.constant(ends), call.constant(axes),
                              call.constant(steps)])
    if squeezed:
        y = call.op("Squeeze", [y, call.constant(squeezed)])
    if inserted:
        y = call.op("Unsqueeze", [y, call.constant(inserted)])
    return y
