"""Operator layers: what ``x + y``, ``x * 2.0``, ``x @ w``, ``-x`` and ``x[:, 0]``
on KerasTensors add to the graph. Each is an ordinary layer, with a backward."""

import math
from itertools import zip_longest

import numpy as np

from engine.dtypes import dtype_kind
from engine.keras_tensor import KerasTensor
from engine.layer import Layer


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


# Each op: forward(left, right) and the gradients for (left, right) given (left, right, out, grad).
_OPS = {
    "add": (np.add, lambda l, r, o, g: (g, g)),
    "subtract": (np.subtract, lambda l, r, o, g: (g, -g)),
    "multiply": (np.multiply, lambda l, r, o, g: (g * r, g * l)),
    "divide": (np.divide, lambda l, r, o, g: (g / r, -g * l / (r * r))),
    "power": (np.power, lambda l, r, o, g: (g * r * np.power(l, r - 1), g * o * np.log(np.where(l > 0, l, 1)))),
    "matmul": (np.matmul, lambda l, r, o, g: (g @ _swap(r), _swap(l) @ g)),
}


class BinaryOp(Layer):
    """``left <op> right`` where one side may be a constant (array or scalar).

    Called on one tensor when ``constant`` is given (``constant_position`` says
    whether the constant is the left or the right operand), or on a list of two.

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
        kwargs.setdefault("name", None)
        if kwargs["name"] is None:
            from engine.naming import unique_name

            kwargs["name"] = unique_name(op)
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
        dtypes = [x.dtype if isinstance(x, KerasTensor) else x for x in (left, right)]
        if self.op == "matmul":
            shape = _matmul_shape(*shapes)
        else:
            try:
                shape = broadcast_shapes(*shapes)
            except ValueError as error:
                raise ValueError(f"Layer {self.name!r} ({self.op}): {error}") from None
        return KerasTensor(shape, np.result_type(*dtypes))

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


class Negative(Layer):
    """``-x``."""

    def compute_output_spec(self, inputs):
        return KerasTensor(inputs.shape, inputs.dtype)

    def call(self, inputs):
        return -inputs

    def forward(self, inputs, training=True):
        return -inputs, None

    def backward(self, cache, grad_outputs):
        return -grad_outputs, {}

    def flops(self, input_shapes, output_shapes):
        return math.prod(output_shapes[0])


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
