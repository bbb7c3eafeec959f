"""Dot: the per-sample dot product of two tensors along one axis of each."""

import math

import numpy as np

from engine import Layer

_EPSILON = 1e-7  # Keras' backend.epsilon(): the smallest norm `normalize=True` divides by


class Dot(Layer):
    """Per-sample dot product of two inputs, summed over ``axes``.

    The output keeps the batch axis, then the other axes of the first input,
    then the other axes of the second one (Keras' ``batch_dot``); a result with
    only the batch axis gets a trailing axis of size 1.

    Args:
        axes: an integer (the same axis of both inputs) or a pair of integers
            (one axis per input); never the batch axis 0.
        normalize: whether to L2-normalize both inputs along their dot axis
            first, making the output the cosine similarity.

    Example:
        >>> import numpy as np
        >>> Dot(axes=(1, 2))([np.ones((2, 3, 5)), np.ones((2, 10, 3))]).shape
        (2, 5, 10)
    """

    _combines_masks_only = True

    min_inputs = 2
    max_inputs = 2
    supports_masking = True

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axes, (list, tuple)):
            if len(axes) != 2:
                raise ValueError(
                    f"Invalid format for argument `axes`: it should contain two elements. Received: axes={axes}"
                )
            if not all(_is_int(a) for a in axes):
                raise ValueError(
                    "Invalid format for argument `axes`: list elements should be integers. "
                    f"Received: axes={axes}"
                )
            axes = tuple(int(a) for a in axes)
        elif _is_int(axes):
            axes = int(axes)
        else:
            raise TypeError(
                f"Invalid type for argument `axes`: it should be a list or an int. Received: axes={axes}"
            )
        self.axes = axes
        self.normalize = bool(normalize)

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def compute_output_shape(self, input_shape):
        shape_x, shape_y = (tuple(s) for s in input_shape)
        axis_x, axis_y = self._dot_axes(shape_x, shape_y)
        if None not in (shape_x[0], shape_y[0]) and shape_x[0] != shape_y[0]:
            raise ValueError(
                "Cannot do batch_dot on inputs with different batch sizes. "
                f"Received inputs with shapes {shape_x} and {shape_y}."
            )
        size_x, size_y = shape_x[axis_x], shape_y[axis_y]
        if None not in (size_x, size_y) and size_x != size_y:
            raise ValueError(
                f"Incompatible input shapes: axis values {size_x} (at axis {axis_x}) != {size_y} "
                f"(at axis {axis_y}). Full input shapes: {shape_x}, {shape_y}"
            )
        batch = shape_x[0] if shape_x[0] is not None else shape_y[0]
        rest = shape_x[1:axis_x] + shape_x[axis_x + 1:] + shape_y[1:axis_y] + shape_y[axis_y + 1:]
        return (batch,) + (rest or (1,))

    def _dot_axes(self, shape_x, shape_y):
        """The dot axis of each input as a non-negative index, checked against the shapes."""
        if min(len(shape_x), len(shape_y)) < 2:
            raise ValueError(
                "Cannot do batch_dot on inputs with rank < 2. "
                f"Received inputs with shapes {shape_x} and {shape_y}."
            )
        pair = self.axes if isinstance(self.axes, tuple) else (self.axes, self.axes)
        for axis, shape in zip(pair, (shape_x, shape_y)):
            if not -len(shape) <= axis < len(shape):
                raise ValueError(
                    f"Layer {self.name!r} (Dot) received axes={self.axes}, out of range for inputs "
                    f"of shapes {shape_x} and {shape_y}."
                )
        axis_x, axis_y = pair[0] % len(shape_x), pair[1] % len(shape_y)
        if 0 in (axis_x, axis_y):
            raise ValueError(
                f"Cannot perform batch_dot over axis 0 (received axes={self.axes} for inputs of shapes "
                f"{shape_x} and {shape_y}). If your inputs are not batched, add a dummy batch dimension."
            )
        return axis_x, axis_y

    def compute_mask(self, inputs, mask=None):
        """None: the axes the masks were over are contracted away."""
        return None

    def call(self, inputs, training=False):
        return self.forward(inputs, training)[0]

    def forward(self, inputs, training=True):
        x, y = inputs
        output_shape = self.compute_output_shape([x.shape, y.shape])
        axis_x, axis_y = self._dot_axes(x.shape, y.shape)
        normalized = None
        if self.normalize:
            (x, inv_norm_x), (y, inv_norm_y) = _l2_normalize(x, axis_x), _l2_normalize(y, axis_y)
            normalized = (x, inv_norm_x, y, inv_norm_y)
        # x as (batch, M, K) and y as (batch, K, N): the dot is one batched matmul.
        moved_x, moved_y = np.moveaxis(x, axis_x, -1), np.moveaxis(y, axis_y, 1)
        x3 = moved_x.reshape(len(x), math.prod(moved_x.shape[1:-1]), moved_x.shape[-1])
        y3 = moved_y.reshape(len(y), moved_y.shape[1], math.prod(moved_y.shape[2:]))
        cache = (x3, y3, moved_x.shape, moved_y.shape, axis_x, axis_y, normalized)
        return (x3 @ y3).reshape(output_shape), cache

    def backward(self, cache, grad_outputs):
        x3, y3, moved_x_shape, moved_y_shape, axis_x, axis_y, normalized = cache
        grad3 = grad_outputs.reshape(x3.shape[0], x3.shape[1], y3.shape[2])
        grad_x = np.moveaxis((grad3 @ y3.swapaxes(1, 2)).reshape(moved_x_shape), -1, axis_x)
        grad_y = np.moveaxis((x3.swapaxes(1, 2) @ grad3).reshape(moved_y_shape), 1, axis_y)
        if normalized is not None:
            x, inv_norm_x, y, inv_norm_y = normalized
            grad_x = _l2_normalize_gradient(x, inv_norm_x, axis_x, grad_x)
            grad_y = _l2_normalize_gradient(y, inv_norm_y, axis_y, grad_y)
        return [grad_x, grad_y], {}

    def flops(self, input_shapes, output_shapes):
        """2 per multiply-add of the contraction; ``normalize`` adds 3 per input element
        (the square, the sum, the multiply by 1 / norm)."""
        shape_x, shape_y = input_shapes
        contracted = shape_x[self._dot_axes(shape_x, shape_y)[0]]
        normalize = 3 * (math.prod(shape_x) + math.prod(shape_y)) if self.normalize else 0
        return 2 * contracted * math.prod(output_shapes[0]) + normalize

    def get_config(self):
        config = super().get_config()
        config.update(axes=self.axes, normalize=self.normalize)
        return config


def _l2_normalize(x, axis):
    """``x / max(||x||, epsilon)`` along ``axis``; returns it and the factor ``1 / max(||x||, epsilon)``."""
    inv_norm = 1 / np.sqrt(np.maximum(np.sum(x * x, axis=axis, keepdims=True), _EPSILON**2))
    return x * inv_norm, inv_norm


def _l2_normalize_gradient(normalized, inv_norm, axis, grad):
    """Gradient of ``_l2_normalize`` given its output; where the norm was clamped
    to epsilon the map is ``x / epsilon``, whose gradient has no projection term."""
    projection = np.sum(grad * normalized, axis=axis, keepdims=True)
    return inv_norm * (grad - normalized * np.where(inv_norm < 1 / _EPSILON, projection, 0))


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def dot(inputs, axes=-1, normalize=False, **kwargs):
    """Functional interface to ``Dot``: ``Dot(axes, normalize, **kwargs)(inputs)``.

    Args:
        inputs: a list of two tensors.
        axes: the axis (or one axis per input) summed over.
        normalize: L2-normalize both inputs along ``axes`` first (cosine similarity).
        **kwargs: standard layer arguments (``name``...).

    Returns:
        The per-sample dot products.

    Example:
        >>> import numpy as np
        >>> dot([np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]])], axes=1)
        array([[11.]], dtype=float32)
    """
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
