"""Elementwise merges: Add, Subtract, Multiply, Average, Maximum, Minimum.

As in Keras 3, the inputs share a batch size and their other axes broadcast
against each other aligned on the right: an input of lower rank gets new axes
of size 1 right after the batch axis, so ``(batch, 3)`` merges with
``(batch, 4, 3)``. The backward pass sums each gradient back over the axes
along which its input was broadcast.
"""

import functools

import numpy as np

from engine import Layer
from engine.ops import broadcast_shapes, unbroadcast


class _Merge(Layer):
    """Base of the elementwise merges: shape checks, rank alignment and the
    unbroadcasting backward. Subclasses define ``_merge(inputs)`` and
    ``_merge_gradients(inputs, output, grad_output)`` on rank-aligned inputs,
    the latter returning one gradient per input, in the output's shape."""

    min_inputs = 2

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def compute_output_shape(self, input_shape):
        shapes = [tuple(s) for s in input_shape]
        batch_sizes = {s[0] for s in shapes if s} - {None}
        if len(batch_sizes) > 1:
            raise ValueError(
                f"Layer {self.name!r} ({type(self).__name__}): Cannot merge tensors with different "
                f"batch sizes. Received tensors with shapes {shapes}"
            )
        try:
            sample_shape = broadcast_shapes(*(s[1:] for s in shapes))
        except ValueError:
            raise ValueError(
                f"Layer {self.name!r} ({type(self).__name__}): Inputs have incompatible shapes. "
                f"Received shapes {shapes}"
            ) from None
        return (batch_sizes.pop() if batch_sizes else None,) + sample_shape

    def call(self, inputs, training=False):
        return self._merge(_align_ranks(inputs))

    def forward(self, inputs, training=True):
        output = self._merge(_align_ranks(inputs))
        return output, (inputs, output)

    def backward(self, cache, grad_outputs):
        inputs, output = cache
        aligned = _align_ranks(inputs)
        grads = self._merge_gradients(aligned, output, grad_outputs)
        return [unbroadcast(g, a.shape).reshape(x.shape) for g, a, x in zip(grads, aligned, inputs)], {}


def _align_ranks(inputs):
    """Gives every input the highest rank by inserting size-1 axes after the batch axis."""
    rank = max(x.ndim for x in inputs)
    return [x.reshape(x.shape[:1] + (1,) * (rank - x.ndim) + x.shape[1:]) for x in inputs]


class Add(_Merge):
    """Sums its inputs elementwise.

    Example:
        >>> import numpy as np
        >>> Add()([np.ones((2, 3)), np.ones((2, 3))])[0]
        array([2., 2., 2.], dtype=float32)
    """

    def _merge(self, inputs):
        return functools.reduce(np.add, inputs)

    def _merge_gradients(self, inputs, output, grad_output):
        return [grad_output] * len(inputs)


class Subtract(_Merge):
    """Subtracts its second input from its first (exactly two inputs).

    Example:
        >>> import numpy as np
        >>> Subtract()([np.full((1, 2), 3.0), np.ones((1, 2))])
        array([[2., 2.]], dtype=float32)
    """

    max_inputs = 2

    def _merge(self, inputs):
        return inputs[0] - inputs[1]

    def _merge_gradients(self, inputs, output, grad_output):
        return [grad_output, -grad_output]


class Multiply(_Merge):
    """Multiplies its inputs elementwise.

    Example:
        >>> import numpy as np
        >>> Multiply()([np.full((1, 2), 3.0), np.full((1, 2), 2.0)])
        array([[6., 6.]], dtype=float32)
    """

    def _merge(self, inputs):
        return functools.reduce(np.multiply, inputs)

    def _merge_gradients(self, inputs, output, grad_output):
        return [grad_output * functools.reduce(np.multiply, inputs[:i] + inputs[i + 1:])
                for i in range(len(inputs))]


class Average(_Merge):
    """Averages its inputs elementwise.

    Example:
        >>> import numpy as np
        >>> Average()([np.zeros((1, 2)), np.full((1, 2), 4.0)])
        array([[2., 2.]], dtype=float32)
    """

    def _merge(self, inputs):
        return functools.reduce(np.add, inputs) / len(inputs)

    def _merge_gradients(self, inputs, output, grad_output):
        return [grad_output / len(inputs)] * len(inputs)


class Maximum(_Merge):
    """Takes the elementwise maximum of its inputs; the gradient of each output
    element goes to the input that holds the maximum (the first one on ties).

    Example:
        >>> import numpy as np
        >>> Maximum()([np.array([[1.0, 5.0]]), np.array([[3.0, 2.0]])])
        array([[3., 5.]], dtype=float32)
    """

    def _merge(self, inputs):
        return functools.reduce(np.maximum, inputs)

    def _merge_gradients(self, inputs, output, grad_output):
        return _winner_gradients(inputs, output, grad_output)


class Minimum(_Merge):
    """Takes the elementwise minimum of its inputs; the gradient of each output
    element goes to the input that holds the minimum (the first one on ties).

    Example:
        >>> import numpy as np
        >>> Minimum()([np.array([[1.0, 5.0]]), np.array([[3.0, 2.0]])])
        array([[1., 2.]], dtype=float32)
    """

    def _merge(self, inputs):
        return functools.reduce(np.minimum, inputs)

    def _merge_gradients(self, inputs, output, grad_output):
        return _winner_gradients(inputs, output, grad_output)


def _winner_gradients(inputs, output, grad_output):
    """Routes each output gradient to the first input whose value equals the output."""
    taken = np.zeros(output.shape, dtype=bool)
    grads = []
    for x in inputs:
        wins = (x == output) & ~taken
        taken |= wins
        grads.append(np.where(wins, grad_output, 0))
    return grads


def add(inputs, **kwargs):
    """Functional interface to ``Add``: ``Add(**kwargs)(inputs)``."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """Functional interface to ``Subtract``: ``Subtract(**kwargs)(inputs)``."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """Functional interface to ``Multiply``: ``Multiply(**kwargs)(inputs)``."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """Functional interface to ``Average``: ``Average(**kwargs)(inputs)``."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """Functional interface to ``Maximum``: ``Maximum(**kwargs)(inputs)``."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """Functional interface to ``Minimum``: ``Minimum(**kwargs)(inputs)``."""
    return Minimum(**kwargs)(inputs)
