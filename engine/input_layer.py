"""The graph's entry points: ``InputLayer`` and the ``Input`` function."""

import numpy as np

from engine.keras_tensor import KerasTensor
from engine.layer import Layer
from engine.node import Node


class InputLayer(Layer):
    """A layer with no inputs whose single Node outputs a placeholder KerasTensor.

    Example:
        >>> layer = InputLayer(shape=(8,), name="pixels")
        >>> layer.output.shape
        (None, 8)
    """

    def __init__(self, shape=None, batch_size=None, dtype="float32", batch_shape=None, name=None):
        super().__init__(name=name, dtype=dtype)
        if batch_shape is None:
            if shape is None:
                raise ValueError(f"InputLayer {name or ''!r} needs a shape (or a batch_shape); received neither.")
            if isinstance(shape, int):
                shape = (shape,)
            batch_shape = (batch_size,) + tuple(shape)
        for d in batch_shape:
            if d is not None and (not isinstance(d, (int, np.integer)) or d < 0):
                raise ValueError(
                    f"InputLayer {self.name!r} expects a shape of non-negative ints or None, received {tuple(batch_shape)}."
                )
        self.batch_shape = tuple(batch_shape)
        self.built = True
        Node(self, (), {}, KerasTensor(self.batch_shape, self.dtype, name=self.name))

    def call(self, inputs, training=False):
        return inputs

    def forward(self, inputs, training=True):
        return inputs, None

    def backward(self, cache, grad_outputs):
        return grad_outputs, {}

    def flops(self, input_shapes, output_shapes):
        return 0

    def get_config(self):
        return {"batch_shape": list(self.batch_shape), "dtype": self.dtype, "name": self.name}


def Input(shape=None, batch_size=None, dtype="float32", name=None, batch_shape=None):
    """Returns a symbolic tensor that is an input of a graph.

    Args:
        shape: shape of one sample, without the batch axis (``(32,)``).
        batch_size: fixed batch size, or None.
        dtype: dtype of the data fed here.
        name: unique name; by default ``input_layer``, ``input_layer_1``, ...

    Example:
        >>> x = Input(shape=(32,), name="input_a")
        >>> x.shape
        (None, 32)
    """
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, batch_shape=batch_shape, name=name)
    return layer.output
