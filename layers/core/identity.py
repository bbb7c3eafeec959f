"""Identity: returns its inputs unchanged (a placeholder layer)."""

from engine import KerasTensor, Layer, tree


class Identity(Layer):
    """Returns its inputs, whatever their structure, unchanged.

    Args:
        **kwargs: standard layer arguments (``name``, ``dtype``, ``trainable``).

    Example:
        >>> import numpy as np
        >>> Identity()(np.ones((2, 3))).shape
        (2, 3)
    """

    supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape

    def compute_output_spec(self, inputs):
        return tree.map_structure(lambda t: KerasTensor(t.shape, t.dtype), inputs)

    def call(self, inputs):
        return inputs

    def forward(self, inputs, training=True):
        return inputs, None

    def backward(self, cache, grad_outputs):
        return grad_outputs, {}

    def flops(self, input_shapes, output_shapes):
        """0: the inputs pass through unchanged."""
        return 0
