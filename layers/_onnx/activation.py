"""ONNX converters of the activation layers, and ``activation``: every
function of layers/activations.py as ONNX nodes, for any layer's ``activation=``."""

import math

import numpy as np

from layers import activations
from layers._onnx import onnx_converter
from layers.activation import PReLU, Softmax
from layers.activation._base import _ActivationLayer


def activation(call, function, x, **arguments):
    """Adds the nodes of an activation applied to ``x``; returns the output name.

    Args:
        call: the layer's OnnxCall.
        function: an activation name or function (``"relu"``, ``layer.activation``).
        x: the input's name.
        **arguments: the activation's options (``axis=``, ``negative_slope=``...).

    Example:
        >>> from engine import Input, Model
        >>> from graph import to_onnx
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> proto = to_onnx(Model(x, Dense(2, activation="silu")(x)))
        >>> [n.op_type for n in proto.graph.node]
        ['MatMul', 'Add', 'Sigmoid', 'Mul']
    """
    name = activations.get(function).__name__
    return _ACTIVATIONS[name](call, x, **arguments)


def _relu(call, x, negative_slope=0.0, max_value=None, threshold=0.0):
    # Keras: the part above `threshold` (clipped to [0, max_value]) minus `negative_slope` times the distance below.
    if not threshold and max_value is None:
        return call.op("LeakyRelu", [x], alpha=float(negative_slope)) if negative_slope else call.op("Relu", [x])
    zero = call.constant(np.float32(0))
    if threshold:
        y = call.op("Where", [call.op("Greater", [x, call.constant(np.float32(threshold))]), x, zero])
    else:
        y = x if max_value is not None else call.op("Relu", [x])  # Clip below takes the place of Relu
    if max_value is not None:
        y = call.op("Clip", [y, zero, call.constant(np.float32(max_value))])
    if negative_slope:
        below = call.op("Relu", [call.op("Sub", [call.constant(np.float32(threshold)), x])])
        y = call.op("Sub", [y, call.op("Mul", [below, call.constant(np.float32(negative_slope))])])
    return y


def _gelu(call, x, approximate=False):
    if call.opset >= 20:
        return call.op("Gelu", [x], approximate="tanh" if approximate else "none")
    half_x = call.op("Mul", [x, call.constant(np.float32(0.5))])
    if approximate:
        cube = call.op("Mul", [call.op("Mul", [x, x]), x])
        inner = call.op("Add", [x, call.op("Mul", [cube, call.constant(np.float32(0.044715))])])
        core = call.op("Tanh", [call.op("Mul", [inner, call.constant(np.float32(math.sqrt(2.0 / math.pi)))])])
    else:
        core = call.op("Erf", [call.op("Mul", [x, call.constant(np.float32(1.0 / math.sqrt(2.0)))])])
    return call.op("Mul", [half_x, call.op("Add", [core, call.constant(np.float32(1.0))])])


def _softmax(op_type):
    def convert(call, x, axis=-1):
        if isinstance(axis, int) or len(axis) == 1:
            return call.op(op_type, [x], axis=axis if isinstance(axis, int) else axis[0])
        # Over several axes: ONNX's Softmax takes one.
        axes = call.constant(list(axis))
        shifted = call.op("Sub", [x, call.op("ReduceMax", [x, axes], keepdims=1)])
        total = call.op("ReduceSum", [call.op("Exp", [shifted]), axes], keepdims=1)
        if op_type == "LogSoftmax":
            return call.op("Sub", [shifted, call.op("Log", [total])])
        return call.op("Div", [call.op("Exp", [shifted]), total])

    return convert


def _silu(call, x):
    return call.op("Mul", [x, call.op("Sigmoid", [x])])


def _selu(call, x):
    return call.op("Selu", [x], alpha=activations._SELU_ALPHA, gamma=activations._SELU_SCALE)


_ACTIVATIONS = {
    "relu": _relu,
    "leaky_relu": lambda call, x, negative_slope=0.2: call.op("LeakyRelu", [x], alpha=float(negative_slope)),
    "elu": lambda call, x, alpha=1.0: call.op("Elu", [x], alpha=float(alpha)),
    "selu": _selu,
    "gelu": _gelu,
    "sigmoid": lambda call, x: call.op("Sigmoid", [x]),
    "hard_sigmoid": lambda call, x: call.op("HardSigmoid", [x], alpha=1.0 / 6.0, beta=0.5),
    "hard_silu": lambda call, x: call.op("HardSwish", [x]),
    "tanh": lambda call, x: call.op("Tanh", [x]),
    "softmax": _softmax("Softmax"),
    "log_softmax": _softmax("LogSoftmax"),
    "softplus": lambda call, x: call.op("Softplus", [x]),
    "softsign": lambda call, x: call.op("Softsign", [x]),
    "silu": _silu,
    "linear": lambda call, x: x,
}


@onnx_converter(_ActivationLayer)
def activation_layer(layer, call):
    """Activation, ReLU, LeakyReLU, ELU: the layer's function with its arguments."""
    return activation(call, layer.activation, call.input, **layer.activation_arguments())


@onnx_converter(Softmax)
def softmax_layer(layer, call):
    """Softmax over the layer's axes (a mask is not exported)."""
    return activation(call, "softmax", call.input, axis=layer._axes)


@onnx_converter(PReLU)
def prelu(layer, call):
    """PRelu with the alpha weight, broadcast from its shape (shared axes of size 1)."""
    return call.op("PRelu", [call.input, call.weight(layer.alpha)])
