"""The layers that two keras.applications architectures define for themselves, so
that their Keras files open here without ``custom_objects``: ConvNeXt's
``LayerScale`` and InceptionResNetV2's ``CustomScaleLayer``. Keras writes them
under their own modules (``keras.src.applications.convnext``...), and Keras
finds them there again when it loads a file we wrote."""

import math

import numpy as np

from engine import Layer
from engine.network import initializers


class LayerScale(Layer):
    """Multiplies the last axis by a learned vector ``gamma`` (ConvNeXt's layer scale).

    Args:
        init_values: the initial value of every entry of ``gamma``.
        projection_dim: the size of the last axis, and of ``gamma``.
        **kwargs: standard layer arguments (``name``, ``dtype``, ``trainable``).

    Example:
        >>> import numpy as np
        >>> LayerScale(0.5, 3)(np.ones((2, 3), "float32"))
        array([[0.5, 0.5, 0.5],
               [0.5, 0.5, 0.5]], dtype=float32)
    """

    def __init__(self, init_values, projection_dim, **kwargs):
        super().__init__(**kwargs)
        self.init_values, self.projection_dim = init_values, projection_dim

    def build(self, input_shape):
        if input_shape[-1] is not None and input_shape[-1] != self.projection_dim:
            raise ValueError(
                f"Layer {self.name!r} (LayerScale) scales a last axis of size projection_dim="
                f"{self.projection_dim}, but its input has shape {tuple(input_shape)}. Give it "
                f"projection_dim={input_shape[-1]}."
            )
        self.gamma = self.add_weight(shape=(self.projection_dim,), name="gamma",
                                     initializer=initializers.Constant(self.init_values))

    def compute_output_shape(self, input_shape):
        return input_shape

    def call(self, inputs):
        return inputs * self.gamma

    def forward(self, inputs, training=True):
        return inputs * self.gamma.value, inputs

    def backward(self, cache, grad_outputs):
        batch_axes = tuple(range(grad_outputs.ndim - 1))
        return grad_outputs * self.gamma.value, {self.gamma: np.sum(grad_outputs * cache, axis=batch_axes)}

    def flops(self, input_shapes, output_shapes):
        """One multiplication per output element."""
        return math.prod(output_shapes[0])

    def get_config(self):
        return {**super().get_config(), "init_values": self.init_values, "projection_dim": self.projection_dim}


class CustomScaleLayer(Layer):
    """``inputs[0] + inputs[1] * scale``: InceptionResNetV2's scaled residual sum.

    Args:
        scale: the factor of the residual branch (``inputs[1]``).
        **kwargs: standard layer arguments (``name``, ``dtype``, ``trainable``).

    Example:
        >>> import numpy as np
        >>> CustomScaleLayer(0.1)([np.ones((1, 2), "float32"), np.full((1, 2), 10, "float32")])
        array([[2., 2.]], dtype=float32)
    """

    min_inputs = max_inputs = 2

    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def compute_output_shape(self, input_shape):
        return input_shape[0]

    def call(self, inputs):
        return inputs[0] + inputs[1] * np.asarray(self.scale, inputs[1].dtype)

    def forward(self, inputs, training=True):
        return self.call(inputs), None

    def backward(self, cache, grad_outputs):
        return [grad_outputs, grad_outputs * np.asarray(self.scale, grad_outputs.dtype)], {}

    def flops(self, input_shapes, output_shapes):
        """A multiplication and an addition per output element."""
        return 2 * math.prod(output_shapes[0])

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}
