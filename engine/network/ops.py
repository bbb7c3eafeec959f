"""Operator layers: what ``x + y``, ``x * 2.0``, ``x @ w``, ``x < y``, ``x & y``,
``-x``, ``abs(x)``, ``round(x)``, ``x[:, 0]``, ``x.reshape(...)`` and
``x.squeeze()`` on KerasTensors add to the graph. Each is an ordinary layer,
with a backward; comparisons and logical operations give bool tensors and, as
in Keras, no gradient."""

import math
import sys
from itertools import zip_longest

import numpy as np

from engine import extensions
from engine.dtypes import dtype_kind
from engine.network.keras_tensor import KerasTensor
from engine.network.layer import Layer
from engine.network.naming import unique_name


def broadcast_shapes(*shapes):
    """NumPy broadcasting of shapes that may hold ``None`` (unknown) sizes."""
    result = []
    for dims in zip_longest(*(reversed(s) for s in shapes), fillvalue=1):
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise ValueError(f"Shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be broadcast together.")
        if known:
            result.append(known.pop())
        elif None in dims:
            result.append(None)
        else:
            result.append(1)
    return tuple(reversed(result))


def unbroadcast(grad, shape):
    """Sums ``grad`` over the axes along which an operand of ``shape`` was broadcast."""
    if grad.shape == tuple(shape):
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        i + extra for i, d in enumerate(shape) if d == 1 and grad.shape[i + extra] != 1
    )
    return grad.sum(axis=axes).reshape(shape)


def _matmul_shape(left, right):
    if len(left) < 2 or len(right) < 2:
        raise ValueError(
            f"matmul (@) on KerasTensors needs operands with at least 2 dimensions, received shapes "
            f"{tuple(left)} and {tuple(right)}. Reshape the vector to a matrix first."
        )
    inner_left, inner_right = left[-1], right[-2]
    if inner_left is not None and inner_right is not None and inner_left != inner_right:
        raise ValueError(
            f"matmul (@) cannot multiply shapes {tuple(left)} and {tuple(right)}: the last axis of the "
            f"left operand ({inner_left}) must equal the second-to-last of the right one ({inner_right})."
        )
    return broadcast_shapes(left[:-2], right[:-2]) + (left[-2], right[-1])


def _swap(x):
    return np.swapaxes(x, -1, -2)


def _no_gradient(left, right, out, grad):
    return None, None


# Each op: forward(left, right) and the gradients for (left, right) given (left, right, out, grad).
_OPS = {
    "add": (np.add, lambda l, r, o, g: (g, g)),
    "subtract": (np.subtract, lambda l, r, o, g: (g, -g)),
    "multiply": (np.multiply, lambda l, r, o, g: (g * r, g * l)),
    "divide": (np.divide, lambda l, r, o, g: (g / r, -g * l / (r * r))),
    "floor_divide": (np.floor_divide, _no_gradient),  # piecewise constant
    "mod": (np.mod, lambda l, r, o, g: (g, -g * np.floor_divide(l, r))),
    "power": (np.power, lambda l, r, o, g: (g * r * np.power(l, r - 1), g * o * np.log(np.where(l > 0, l, 1)))),
    "matmul": (np.matmul, lambda l, r, o, g: (g @ _swap(r), _swap(l) @ g)),
    "less": (np.less, _no_gradient),
    "less_equal": (np.less_equal, _no_gradient),
    "greater": (np.greater, _no_gradient),
    "greater_equal": (np.greater_equal, _no_gradient),
    "equal": (np.equal, _no_gradient),
    "not_equal": (np.not_equal, _no_gradient),
    "logical_and": (np.logical_and, _no_gradient),
    "logical_or": (np.logical_or, _no_gradient),
    "logical_xor": (np.logical_xor, _no_gradient),
}
_BOOLEAN_OPS = {"less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
                "logical_and", "logical_or", "logical_xor"}


class BinaryOp(Layer):
    """``left <op> right`` where one side may be a constant (array or scalar).

    Called on one tensor when ``constant`` is given (``constant_position`` says
    whether the constant is the left or the right operand), or on a list of two.
    Comparisons (``less``, ..., ``equal``, ``not_equal``) and ``logical_and``,
    ``logical_or``, ``logical_xor`` give bool tensors and pass no gradient, nor
    does ``floor_divide``.

    Example:
        >>> from engine import Input
        >>> y = BinaryOp("multiply", constant=2.0)(Input(shape=(3,)))
    """

    min_inputs = 1
    max_inputs = 2

    def __init__(self, op, constant=None, constant_position="right", **kwargs):
        if op not in _OPS:
            raise ValueError(f"BinaryOp expects op in {sorted(_OPS)}, received {op!r}.")
        if constant_position not in ("left", "right"):
            raise ValueError(f"BinaryOp expects constant_position 'left' or 'right', received {constant_position!r}.")
        _name_after(op, kwargs)
        super().__init__(**kwargs)
        self.op = op
        self.constant = _as_constant(constant, self.dtype)
        self.constant_position = constant_position

    def _operands(self, inputs):
        if self.constant is None:
            return inputs
        if self.constant_position == "left":
            return self.constant, inputs
        return inputs, self.constant

    def compute_output_spec(self, inputs):
        if self.constant is None:
            if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
                raise ValueError(f"Layer {self.name!r} ({self.op}) expects two tensors or a constant.")
        left, right = self._operands(inputs)
        shapes = [x.shape if isinstance(x, KerasTensor) else np.shape(x) for x in (left, right)]
        if self.op in _BOOLEAN_OPS:
            dtype = "bool"
        else:
            dtype = np.result_type(*[x.dtype if isinstance(x, KerasTensor) else x for x in (left, right)])
        if self.op == "matmul":
            shape = _matmul_shape(*shapes)
        else:
            try:
                shape = broadcast_shapes(*shapes)
            except ValueError as error:
                raise ValueError(f"Layer {self.name!r} ({self.op}): {error}") from None
        return KerasTensor(shape, dtype)

    def call(self, inputs):
        left, right = self._operands(inputs)
        return _OPS[self.op][0](left, right)

    def forward(self, inputs, training=True):
        left, right = self._operands(inputs)
        out = _OPS[self.op][0](left, right)
        return out, (left, right, out)

    def backward(self, cache, grad_outputs):
        left, right, out = cache
        grad_left, grad_right = _OPS[self.op][1](left, right, out, grad_outputs)
        if grad_left is not None:
            grad_left = unbroadcast(grad_left, np.shape(left))
            grad_right = unbroadcast(grad_right, np.shape(right))
        if self.constant is None:
            return [grad_left, grad_right], {}
        return (grad_right if self.constant_position == "left" else grad_left), {}

    def flops(self, input_shapes, output_shapes):
        """1 per output element; for matmul, 2 per multiply-add over the shared axis."""
        outputs = math.prod(output_shapes[0])
        if self.op != "matmul":
            return outputs
        shared = np.shape(self.constant)[-1] if self.constant_position == "left" and self.constant is not None else input_shapes[0][-1]
        return 2 * shared * outputs

    def get_config(self):
        config = super().get_config()
        constant = self.constant
        if isinstance(constant, np.ndarray):
            constant = constant.tolist()
        config.update(op=self.op, constant=constant, constant_position=self.constant_position)
        return config


def _as_constant(value, dtype):
    if value is None or isinstance(value, (int, float)):
        return value  # Python scalars keep the tensor's dtype (NumPy's weak scalars)
    array = np.asarray(value)
    if array.dtype.kind == "f":
        array = array.astype(dtype)
    return array


def binary_op(op, left, right):
    """Builds the op layer for ``left <op> right`` with at least one KerasTensor."""
    if isinstance(left, KerasTensor) and isinstance(right, KerasTensor):
        return BinaryOp(op)([left, right])
    if isinstance(left, KerasTensor):
        return BinaryOp(op, constant=right, constant_position="right", dtype=_float_dtype(left))(left)
    return BinaryOp(op, constant=left, constant_position="left", dtype=_float_dtype(right))(right)


def _float_dtype(tensor):
    return tensor.dtype if dtype_kind(tensor.dtype) == "f" else "float32"


# Each op: forward(x) and the gradient of x given (x, grad), None for an op without one.
_UNARY_OPS = {
    "negative": (np.negative, lambda x, g: -g),
    "absolute": (np.absolute, lambda x, g: g * np.sign(x)),
    "logical_not": (np.logical_not, None),
}


class UnaryOp(Layer):
    """``op(x)``: ``"negative"`` (``-x``), ``"absolute"`` (``abs(x)``) or
    ``"logical_not"`` (``~x``: a bool tensor, without gradient, as in Keras).

    Example:
        >>> from engine import Input
        >>> UnaryOp("logical_not")(Input(shape=(3,))).dtype
        'bool'
    """

    def __init__(self, op, **kwargs):
        if op not in _UNARY_OPS:
            raise ValueError(f"UnaryOp expects op in {sorted(_UNARY_OPS)}, received {op!r}.")
        _name_after(op, kwargs)
        super().__init__(**kwargs)
        self.op = op

    def compute_output_spec(self, inputs):
        return KerasTensor(inputs.shape, "bool" if self.op == "logical_not" else inputs.dtype)

    def call(self, inputs):
        return _UNARY_OPS[self.op][0](inputs)

    def backward(self, cache, grad_outputs):
        gradient = _UNARY_OPS[self.op][1]
        return (None if gradient is None else gradient(cache, grad_outputs)), {}

    def flops(self, input_shapes, output_shapes):
        return math.prod(output_shapes[0])

    def get_config(self):
        config = super().get_config()
        config["op"] = self.op
        return config


class Negative(UnaryOp):
    """``-x`` (the name model files store it under)."""

    def __init__(self, **kwargs):
        super().__init__("negative", **kwargs)

    def get_config(self):
        config = super().get_config()
        del config["op"]
        return config


class Round(Layer):
    """``round(x, decimals)``: halves round to even, as in NumPy and Keras; no gradient.

    Args:
        decimals: how many decimals to keep (negative rounds to tens, hundreds...).

    Example:
        >>> from engine import Input
        >>> round(Input(shape=(3,)), 1).shape
        (None, 3)
    """

    def __init__(self, decimals=0, **kwargs):
        super().__init__(**kwargs)
        self.decimals = int(decimals)

    def compute_output_spec(self, inputs):
        return KerasTensor(inputs.shape, inputs.dtype)

    def call(self, inputs):
        return np.round(inputs, self.decimals)

    def backward(self, cache, grad_outputs):
        return None, {}

    def flops(self, input_shapes, output_shapes):
        return math.prod(output_shapes[0])

    def get_config(self):
        config = super().get_config()
        config["decimals"] = self.decimals
        return config


class _ShapeOp(Layer):
    """An op that only rearranges its input's values into another shape: its
    gradient is the output gradient in the input's shape."""

    def forward(self, inputs, training=True):
        return self.call(inputs), np.shape(inputs)

    def backward(self, cache, grad_outputs):
        return grad_outputs.reshape(cache), {}

    def flops(self, input_shapes, output_shapes):
        return 0


class ReshapeOp(_ShapeOp):
    """``x.reshape(newshape)``, where ``newshape`` includes the batch axis and may
    hold one ``-1`` (``layers.Reshape``, by contrast, takes one sample's shape).

    Example:
        >>> from engine import Input
        >>> Input(shape=(6,)).reshape((-1, 2, 3)).shape
        (None, 2, 3)
    """

    def __init__(self, newshape, **kwargs):
        _name_after("reshape", kwargs)
        super().__init__(**kwargs)
        self.newshape = _check_newshape(newshape, self.name)

    def compute_output_spec(self, inputs):
        shape, newshape = inputs.shape, self.newshape
        if None in shape:
            return KerasTensor(tuple(None if d == -1 else d for d in newshape), inputs.dtype)
        size, known = math.prod(shape), math.prod(d for d in newshape if d != -1)
        if (size % known if -1 in newshape and known else size != known):
            raise ValueError(
                f"Layer {self.name!r} cannot reshape a tensor of shape {shape} ({size} values) to {newshape}."
            )
        return KerasTensor(tuple(size // known if d == -1 else d for d in newshape), inputs.dtype)

    def call(self, inputs):
        return np.reshape(inputs, self.newshape)

    def get_config(self):
        config = super().get_config()
        config["newshape"] = list(self.newshape)
        return config


def _check_newshape(newshape, name):
    dims = (newshape,) if isinstance(newshape, (int, np.integer)) else tuple(newshape)
    if not all(isinstance(d, (int, np.integer)) and d >= -1 for d in dims) or dims.count(-1) > 1:
        raise ValueError(
            f"Layer {name!r} expects newshape to be a tuple of sizes (ints >= 0, with at most one -1 for an inferred "
            f"size), the batch axis included, as in x.reshape((-1, 2, 3)). Received: newshape={newshape!r}"
        )
    return tuple(int(d) for d in dims)


class SqueezeOp(_ShapeOp):
    """``x.squeeze(axis)``: removes the axes of size 1 given by ``axis`` (an int
    or a tuple), or, when ``axis`` is None, every axis known to be 1 when the
    layer is built (never an unknown batch axis, so a batch of one keeps it).

    Example:
        >>> from engine import Input
        >>> Input(shape=(1, 3, 1)).squeeze().shape
        (None, 3)
    """

    def __init__(self, axis=None, **kwargs):
        _name_after("squeeze", kwargs)
        super().__init__(**kwargs)
        if not (axis is None or isinstance(axis, (int, np.integer))
                or isinstance(axis, (list, tuple)) and all(isinstance(a, (int, np.integer)) for a in axis)):
            raise ValueError(f"Layer {self.name!r} expects axis to be None, an int or a tuple of ints, "
                             f"received {axis!r}.")
        self.axis = axis if axis is None or isinstance(axis, (int, np.integer)) else tuple(axis)
        self._axes = ()

    def build(self, input_shape):
        rank = len(input_shape)
        if self.axis is None:
            self._axes = tuple(i for i, d in enumerate(input_shape) if d == 1)
            return
        axes = (self.axis,) if isinstance(self.axis, (int, np.integer)) else self.axis
        if not all(-rank <= a < rank for a in axes):
            raise ValueError(f"Layer {self.name!r} cannot squeeze axis {self.axis} of a tensor of rank {rank} "
                             f"(shape {tuple(input_shape)}).")
        self._axes = tuple(sorted({int(a) % rank for a in axes}))
        for a in self._axes:
            if input_shape[a] not in (1, None):
                raise ValueError(f"Layer {self.name!r} cannot squeeze axis {a} of shape {tuple(input_shape)}: "
                                 f"its size is {input_shape[a]}, not 1.")

    def compute_output_spec(self, inputs):
        return KerasTensor(tuple(d for i, d in enumerate(inputs.shape) if i not in self._axes), inputs.dtype)

    def call(self, inputs):
        return np.squeeze(inputs, axis=self._axes)

    def get_config(self):
        config = super().get_config()
        config["axis"] = list(self.axis) if isinstance(self.axis, tuple) else self.axis
        return config


def _name_after(op, kwargs):
    """Names an op layer after its op (``add``, ``less_1``...) unless given a name."""
    if kwargs.get("name") is None:
        kwargs["name"] = unique_name(op)


class GetItem(Layer):
    """``x[key]`` with basic indexing: ints, slices, ``None`` and ``...``."""

    def __init__(self, key, **kwargs):
        super().__init__(**kwargs)
        self.key = _check_key(key)

    def compute_output_spec(self, inputs):
        shape = inputs.shape
        # Index a zero-strided dummy twice, with unknown sizes set to 1 and 2:
        # output axes whose size differs between the two depend on an unknown size.
        sizes = []
        for fill in (1, 2):
            dims = tuple(fill if d is None else d for d in shape)
            dummy = np.lib.stride_tricks.as_strided(np.zeros(1), dims, (0,) * len(dims))
            try:
                sizes.append(dummy[self.key].shape)
            except IndexError as error:
                raise ValueError(
                    f"Layer {self.name!r} cannot index a tensor of shape {shape} with {self.key!r}: {error}."
                ) from None
        out = tuple(a if a == b else None for a, b in zip(*sizes))
        return KerasTensor(out, inputs.dtype)

    def call(self, inputs):
        return inputs[self.key]

    def forward(self, inputs, training=True):
        return inputs[self.key], (inputs.shape, inputs.dtype)

    def flops(self, input_shapes, output_shapes):
        return 0

    def backward(self, cache, grad_outputs):
        shape, dtype = cache
        grad = np.zeros(shape, dtype=dtype)
        grad[self.key] = grad_outputs
        return grad, {}

    def get_config(self):
        config = super().get_config()
        config["key"] = [_encode_key_item(k) for k in self.key]
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["key"] = tuple(_decode_key_item(k) for k in config["key"])
        return cls(**config)


def _check_key(key):
    key = key if isinstance(key, tuple) else (key,)
    for item in key:
        if not (item is None or item is Ellipsis or isinstance(item, (int, np.integer, slice))):
            raise TypeError(
                f"Indexing a KerasTensor supports ints, slices, None and ..., received {item!r}. "
                "For gathers by index arrays, write a layer that does it in call()."
            )
    return tuple(int(k) if isinstance(k, np.integer) else k for k in key)


def _encode_key_item(item):
    if isinstance(item, slice):
        return {"start": item.start, "stop": item.stop, "step": item.step}
    if item is Ellipsis:
        return "..."
    return item


def _decode_key_item(item):
    if isinstance(item, dict):
        return slice(item["start"], item["stop"], item["step"])
    if item == "...":
        return Ellipsis
    return item


extensions.provide("operator_layers", sys.modules[__name__])  # KerasTensor's operators: x + y, -x, x[0], ...
