"""Elementwise merges: Add, Subtract, Multiply, Average, Maximum, Minimum.

As in Keras 3, the inputs share a batch size and their other axes broadcast
against each other aligned on the right: an input of lower rank gets new axes
of size 1 right after the batch axis, so ``(batch, 3)`` merges with
``(batch, 4, 3)``. The backward pass sums each gradient back over the axes
along which its input was broadcast.
"""

import functools
import math

import numpy as np

from engine import Layer
from engine.network.ops import broadcast_shapes, unbroadcast
from layers._masks import merge_masks


class _Merge(Layer):
    """Base of the elementwise merges: shape checks, rank alignment and the
    unbroadcasting backward. Subclasses define ``_merge(inputs)`` and
    ``_merge_gradients(inputs, output, grad_output)`` on rank-aligned inputs,
    the latter returning one gradient per input, in the output's shape."""

    _combines_masks_only = True

    min_inputs = 2
    supports_masking = True
    #: Whether ``_merge_gradients`` reads the inputs' and the output's values; where it does not (sums,
    #: differences, means), the forward keeps only the inputs' shapes for backward.
    _gradient_reads_values = True

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

    def compute_mask(self, inputs, mask=None):
        """The logical or of the inputs' masks; None unless every input has one (Keras 3)."""
        masks = merge_masks(self, inputs, mask)
        if masks is None or any(m is None for m in masks):
            return None
        return functools.reduce(np.logical_or, masks)

    def call(self, inputs, training=False):
        return self._merge(_align_ranks(inputs))

    def forward(self, inputs, training=True):
        output = self._merge(_align_ranks(inputs))
        if self._gradient_reads_values:
            return output, (inputs, output)
        return output, ([_shape_only(x) for x in inputs], None)

    def backward(self, cache, grad_outputs):
        inputs, output = cache
        aligned = _align_ranks(inputs)
        grads = self._merge_gradients(aligned, output, grad_outputs)
        return [unbroadcast(g, a.shape).reshape(x.shape) for g, a, x in zip(grads, aligned, inputs)], {}

    def flops(self, input_shapes, output_shapes):
        """One op per output element for each input after the first (n - 1 adds, comparisons...)."""
        return (len(input_shapes) - 1) * math.prod(output_shapes[0])


def _shape_only(x):
    """A read-only stand-in of ``x``'s shape and dtype that holds no memory (one element, broadcast)."""
    return np.broadcast_to(np.zeros((), x.dtype), x.shape)


def _align_ranks(inputs):
    """Gives every input the highest rank by inserting size-1 axes after the batch axis."""
    rank = max(x.ndim for x in inputs)
    return [x.reshape(x.shape[:1] + (1,) * (rank - x.ndim) + x.shape[1:]) for x in inputs]


class Add(_Merge):
    """Sums its inputs elementwise.

    Args:
        **kwargs: standard layer arguments (``name``, ``dtype``, ``trainable``).

    Example:
        >>> import numpy as np
        >>> Add()([np.ones((2, 3)), np.ones((2, 3))])[0]
        array([2., 2., 2.], dtype=float32)
    """

    _gradient_reads_values = False

    def _merge(self, inputs):
        return functools.reduce(np.add, inputs)

    def _merge_gradients(self, inputs, output, grad_output):
        return [grad_output] * len(inputs)


class Subtract(_Merge):
    """Subtracts its second input from its first (exactly two inputs).

    Args:
        **kwargs: standard layer arguments (``name``, ``dtype``, ``trainable``).

    Example:
        >>> import numpy as np
        >>> Subtract()([np.full((1, 2), 3.0), np.ones((1, 2))])
        array([[2., 2.]], dtype=float32)
    """

    max_inputs = 2
    _gradient_reads_values = False

    def _merge(self, inputs):
        return inputs[0] - inputs[1]

    def _merge_gradients(self, inputs, output, grad_output):
        return [grad_output, -grad_output]


class Multiply(_Merge):
    """Multiplies its inputs elementwise.

    As in Keras 3, an input's masked steps count as 1 (they take no part), and
    where every input carries a mask the steps masked in all of them are 0.

    Args:
        **kwargs: standard layer arguments (``name``, ``dtype``, ``trainable``).

    Example:
        >>> import numpy as np
        >>> Multiply()([np.full((1, 2), 3.0), np.full((1, 2), 2.0)])
        array([[6., 6.]], dtype=float32)
    """

    def call(self, inputs, training=False, mask=None):
        return self.forward(inputs, training, mask)[0]

    def forward(self, inputs, training=True, mask=None):
        aligned = _align_ranks(inputs)
        masks = [_steps_mask(m, x) for m, x in zip(merge_masks(self, inputs, mask) or [None] * len(inputs), aligned)]
        factors = [x if m is None else np.where(m, x, x.dtype.type(1)) for x, m in zip(aligned, masks)]
        output = functools.reduce(np.multiply, factors)
        kept = None if any(m is None for m in masks) else functools.reduce(np.logical_or, masks)
        if kept is not None:
            output = np.where(kept, output, output.dtype.type(0))
        return output, (inputs, factors, masks, kept)

    def backward(self, cache, grad_outputs):
        inputs, factors, masks, kept = cache
        grad = grad_outputs if kept is None else np.where(kept, grad_outputs, 0)
        grads = []
        for i, (factor, step_mask, x) in enumerate(zip(factors, masks, inputs)):
            g = grad * functools.reduce(np.multiply, factors[:i] + factors[i + 1:])
            g = g if step_mask is None else np.where(step_mask, g, 0)  # a masked step was the constant 1
            grads.append(unbroadcast(g, factor.shape).reshape(x.shape))
        return grads, {}


class Average(_Merge):
    """Averages its inputs elementwise.

    Args:
        **kwargs: standard layer arguments (``name``, ``dtype``, ``trainable``).

    Example:
        >>> import numpy as np
        >>> Average()([np.zeros((1, 2)), np.full((1, 2), 4.0)])
        array([[2., 2.]], dtype=float32)
    """

    _gradient_reads_values = False

    def _merge(self, inputs):
        return functools.reduce(np.add, inputs) / len(inputs)

    def _merge_gradients(self, inputs, output, grad_output):
        return [grad_output / len(inputs)] * len(inputs)

    def flops(self, input_shapes, output_shapes):
        """The n - 1 adds and the divide: n per output element."""
        return len(input_shapes) * math.prod(output_shapes[0])


class _Extreme(_Merge):
    """Maximum and Minimum. As in Keras 3, masked elements take no part: an
    input's masked steps are replaced by the running result and the running
    result's masked steps by the input, so an element holds the extreme of
    the inputs unmasked there (the first input's value where every input is
    masked). The gradient of each output element goes to the input it came
    from (the first one on ties)."""

    _better = None  # np.greater or np.less: whether a new value replaces the running one

    def call(self, inputs, training=False, mask=None):
        return self.forward(inputs, training, mask)[0]

    def forward(self, inputs, training=True, mask=None):
        aligned = _align_ranks(inputs)
        masks = merge_masks(self, inputs, mask) or [None] * len(inputs)
        output, source = aligned[0], np.zeros((), np.intp)
        output_mask = _steps_mask(masks[0], output)
        for index, (x, step_mask) in enumerate(zip(aligned[1:], masks[1:]), 1):
            step_mask, x_source = _steps_mask(step_mask, x), np.intp(index)
            if step_mask is not None:
                x, x_source = np.where(step_mask, x, output), np.where(step_mask, x_source, source)
            if output_mask is not None:
                output, source = np.where(output_mask, output, x), np.where(output_mask, source, x_source)
            output_mask = None if step_mask is None or output_mask is None else output_mask | step_mask
            better = self._better(x, output)
            output, source = np.where(better, x, output), np.where(better, x_source, source)
        return output, (inputs, source)

    def backward(self, cache, grad_outputs):
        inputs, source = cache
        return [unbroadcast(np.where(source == index, grad_outputs, 0), a.shape).reshape(x.shape)
                for index, (a, x) in enumerate(zip(_align_ranks(inputs), inputs))], {}


def _steps_mask(mask, x):
    """A ``(batch, steps)`` mask broadcast over the features of ``x``, or None."""
    return None if mask is None else np.broadcast_to(np.expand_dims(np.asarray(mask, bool), -1), x.shape)


class Maximum(_Extreme):
    """Takes the elementwise maximum of its inputs (of the unmasked ones, with masks).

    Args:
        **kwargs: standard layer arguments (``name``, ``dtype``, ``trainable``).

    Example:
        >>> import numpy as np
        >>> Maximum()([np.array([[1.0, 5.0]]), np.array([[3.0, 2.0]])])
        array([[3., 5.]], dtype=float32)
    """

    _better = staticmethod(np.greater)


class Minimum(_Extreme):
    """Takes the elementwise minimum of its inputs (of the unmasked ones, with masks).

    Args:
        **kwargs: standard layer arguments (``name``, ``dtype``, ``trainable``).

    Example:
        >>> import numpy as np
        >>> Minimum()([np.array([[1.0, 5.0]]), np.array([[3.0, 2.0]])])
        array([[1., 2.]], dtype=float32)
    """

    _better = staticmethod(np.less)


def add(inputs, **kwargs):
    """Functional interface to ``Add``: ``Add(**kwargs)(inputs)``.

    Args:
        inputs: a list of tensors (KerasTensors or arrays) of the same shape.
        **kwargs: standard layer arguments (``name``...).

    Returns:
        The merged tensor.

    Example:
        >>> import numpy as np
        >>> add([np.ones((1, 2)), np.full((1, 2), 2.0)])
        array([[3., 3.]], dtype=float32)
    """
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """Functional interface to ``Subtract``: ``Subtract(**kwargs)(inputs)``.

    Args:
        inputs: a list of tensors (KerasTensors or arrays) of the same shape.
        **kwargs: standard layer arguments (``name``...).

    Returns:
        The merged tensor.

    Example:
        >>> import numpy as np
        >>> subtract([np.full((1, 2), 3.0), np.ones((1, 2))])
        array([[2., 2.]], dtype=float32)
    """
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """Functional interface to ``Multiply``: ``Multiply(**kwargs)(inputs)``.

    Args:
        inputs: a list of tensors (KerasTensors or arrays) of the same shape.
        **kwargs: standard layer arguments (``name``...).

    Returns:
        The merged tensor.

    Example:
        >>> import numpy as np
        >>> multiply([np.full((1, 2), 3.0), np.full((1, 2), 2.0)])
        array([[6., 6.]], dtype=float32)
    """
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """Functional interface to ``Average``: ``Average(**kwargs)(inputs)``.

    Args:
        inputs: a list of tensors (KerasTensors or arrays) of the same shape.
        **kwargs: standard layer arguments (``name``...).

    Returns:
        The merged tensor.

    Example:
        >>> import numpy as np
        >>> average([np.zeros((1, 2)), np.full((1, 2), 4.0)])
        array([[2., 2.]], dtype=float32)
    """
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """Functional interface to ``Maximum``: ``Maximum(**kwargs)(inputs)``.

    Args:
        inputs: a list of tensors (KerasTensors or arrays) of the same shape.
        **kwargs: standard layer arguments (``name``...).

    Returns:
        The merged tensor.

    Example:
        >>> import numpy as np
        >>> maximum([np.array([[1.0, 5.0]]), np.array([[3.0, 2.0]])])
        array([[3., 5.]], dtype=float32)
    """
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """Functional interface to ``Minimum``: ``Minimum(**kwargs)(inputs)``.

    Args:
        inputs: a list of tensors (KerasTensors or arrays) of the same shape.
        **kwargs: standard layer arguments (``name``...).

    Returns:
        The merged tensor.

    Example:
        >>> import numpy as np
        >>> minimum([np.array([[1.0, 5.0]]), np.array([[3.0, 2.0]])])
        array([[1., 2.]], dtype=float32)
    """
    return Minimum(**kwargs)(inputs)
