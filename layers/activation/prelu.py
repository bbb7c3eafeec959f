"""PReLU: a leaky ReLU whose negative slopes are learned weights."""

import math

import numpy as np

from engine import InputSpec, Layer
from engine.training import constraints, regularizers
from engine.network import initializers
from engine.network.ops import unbroadcast


class PReLU(Layer):
    """``x`` for ``x > 0``, ``alpha * x`` otherwise, with ``alpha`` learned.

    Args:
        alpha_initializer, alpha_regularizer, alpha_constraint: of the weight ``alpha``.
        shared_axes: axes (1 is the first after the batch) along which one slope
            is shared, e.g. ``[1, 2]`` for one slope per channel of an image.

    Weights: ``alpha`` of the input shape without the batch axis, with size 1
    on the shared axes, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> PReLU(alpha_initializer="ones")(np.array([[-2.0, 3.0]]))
        array([[-2.,  3.]], dtype=float32)
    """

    supports_masking = True

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is not None:
            shared_axes = list(shared_axes) if isinstance(shared_axes, (list, tuple)) else [shared_axes]
            if not all(isinstance(a, int) and not isinstance(a, bool) and a >= 1 for a in shared_axes):
                raise ValueError(
                    "PReLU expects `shared_axes` to be None, a positive integer or a list of them "
                    f"(axis 0 is the batch axis, which cannot be shared). Received: shared_axes={shared_axes!r}"
                )
        self.shared_axes = shared_axes

    def build(self, input_shape):
        rank = len(input_shape)
        shared = set(self.shared_axes or ())
        if any(a >= rank for a in shared):
            raise ValueError(
                f"Layer {self.name!r} (PReLU) has shared_axes={self.shared_axes}, but its input "
                f"shape {tuple(input_shape)} has axes 1 to {rank - 1} only."
            )
        shape = [1 if axis in shared else input_shape[axis] for axis in range(1, rank)]
        if None in shape:
            raise ValueError(
                f"Layer {self.name!r} (PReLU) needs known sizes on its unshared axes to create "
                f"`alpha`, received input shape {tuple(input_shape)}. Share the unknown axes "
                "(shared_axes) or give them a size."
            )
        self.alpha = self.add_weight(
            shape=shape, initializer=self.alpha_initializer, name="alpha",
            regularizer=self.alpha_regularizer, constraint=self.alpha_constraint,
        )
        axes = {axis: input_shape[axis] for axis in range(1, rank) if axis not in shared}
        self.input_spec = InputSpec(ndim=rank, axes=axes)

    def compute_output_shape(self, input_shape):
        return input_shape

    def call(self, inputs, training=False):
        return np.maximum(inputs, 0) + self.alpha.value * np.minimum(inputs, 0)

    def forward(self, inputs, training=True):
        return self.call(inputs), inputs

    def backward(self, cache, grad_outputs):
        inputs = cache
        alpha = self.alpha.value
        grad_inputs = grad_outputs * np.where(inputs > 0, 1, alpha)
        grad_alpha = unbroadcast(grad_outputs * np.minimum(inputs, 0), alpha.shape)
        return grad_inputs, {self.alpha: grad_alpha}

    def flops(self, input_shapes, output_shapes):
        """1 per element, as every activation."""
        return math.prod(output_shapes[0])

    def get_config(self):
        config = super().get_config()
        config.update(
            alpha_initializer=initializers.serialize(self.alpha_initializer),
            alpha_regularizer=regularizers.serialize(self.alpha_regularizer),
            alpha_constraint=constraints.serialize(self.alpha_constraint),
            shared_axes=self.shared_axes,
        )
        return config
