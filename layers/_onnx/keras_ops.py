"""The ONNX converter of ``keras.ops`` calls recorded on KerasTensors (``OpLayer``).

One row per function the converter maps: elementwise functions and their
operators, activations (through ``activation``), reductions, matmul, and the
reshaping functions. A function without a row (``ops.top_k``, ``ops.conv``...)
raises ``OnnxExportError`` naming it; compute it in a layer of the catalog to
export the model.
"""

import numpy as np

from engine.keras_ops import eager
from engine.keras_ops.op_layer import OpLayer, _decode
from layers._onnx import onnx_converter
from layers._onnx.activation import activation

_UNARY = {"abs": "Abs", "absolute": "Abs", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "negative": "Neg",
          "sin": "Sin", "cos": "Cos", "tan": "Tan", "sinh": "Sinh", "cosh": "Cosh", "arcsin": "Asin",
          "arccos": "Acos", "arctan": "Atan", "arctanh": "Atanh", "floor": "Floor", "ceil": "Ceil", "sign": "Sign",
          "reciprocal": "Reciprocal", "erf": "Erf", "logical_not": "Not", "isnan": "IsNaN", "isinf": "IsInf"}
_BINARY = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div", "true_divide": "Div",
           "power": "Pow", "maximum": "Max", "minimum": "Min", "matmul": "MatMul", "equal": "Equal",
           "greater": "Greater", "greater_equal": "GreaterOrEqual", "less": "Less", "less_equal": "LessOrEqual",
           "logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}
# activations whose keras.ops function takes the arguments activation() does
_ACTIVATIONS = {"relu", "sigmoid", "tanh", "softplus", "softsign", "silu", "swish", "gelu", "elu", "selu",
                "leaky_relu", "hard_sigmoid", "softmax", "log_softmax"}
_REDUCTIONS = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin", "prod": "ReduceProd"}


@onnx_converter(OpLayer)
def keras_op(layer, call):
    """The ONNX nodes of one ``keras.ops`` call: see the module docstring."""
    bound = eager.bind(layer._row, _decode(layer.arguments["args"], call.inputs),
                       _decode(layer.arguments["kwargs"], call.inputs))
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    name, dtype = layer.function, call.output_dtypes[0]
    values = list(arguments.values())
    if name in _UNARY:
        return call.op(_UNARY[name], [_operand(call, values[0], dtype)])
    if name in _BINARY:
        return call.op(_BINARY[name], [_operand(call, value, call.input_dtypes[0]) for value in values[:2]])
    if name in _ACTIVATIONS:
        options = {key: value for key, value in arguments.items() if key not in ("x", "inputs")}
        return activation(call, name, values[0], **options)
    if name == "relu6":
        return call.op("Clip", [values[0], call.constant(np.asarray(0, dtype)), call.constant(np.asarray(6, dtype))])
    if name == "square":
        return call.op("Mul", [values[0], values[0]])
    if name == "cast":
        return call.cast(values[0], arguments["dtype"])
    if name in _REDUCTIONS:
        axes = arguments.get("axis")
        inputs = [values[0]] if axes is None else [values[0], call.constant(np.atleast_1d(axes))]
        return call.op(_REDUCTIONS[name], inputs, keepdims=int(bool(arguments.get("keepdims"))))
    if name == "concatenate":
        return call.op("Concat", list(values[0]), axis=arguments["axis"])
    if name == "transpose":
        axes = arguments.get("axes")
        return call.op("Transpose", [values[0]], perm=None if axes is None else list(axes))
    if name == "reshape":
        return call.op("Reshape", [values[0], call.constant(np.asarray(arguments["newshape"]))])
    if name == "expand_dims":
        return call.op("Unsqueeze", [values[0], call.constant(np.atleast_1d(arguments["axis"]))])
    if name == "squeeze":
        axes = arguments.get("axis")
        return call.op("Squeeze", [values[0]] + ([] if axes is None else [call.constant(np.atleast_1d(axes))]))
    if name == "where" and arguments.get("x1") is not None:
        return call.op("Where", [_operand(call, value, dtype) for value in values[:3]])
    if name == "clip":
        bounds = [call.constant(np.asarray(arguments[key], dtype)) for key in ("x_min", "x_max")]
        return call.op("Clip", [values[0], *bounds])
    call.unsupported(f"ops.{name} has no ONNX mapping (the mapped functions are in layers/_onnx/keras_ops.py); "
                     "compute it with a layer of the catalog, or register a converter for OpLayer")


def _operand(call, value, dtype):
    """A tensor's name as it is; a number or array as a constant of ``dtype``."""
    return value if isinstance(value, str) else call.constant(np.asarray(value, dtype))
