"""Activation: applies an activation function as a layer of its own."""

from layers import activations
from layers.activation._base import _ActivationLayer


class Activation(_ActivationLayer):
    """Applies ``activation`` elementwise (softmax-like ones on the last axis).

    Args:
        activation: an activation name (``"relu"``) or a function from
            ``layers.activations``.
        **kwargs: standard layer arguments (``name``, ``dtype``, ``trainable``).

    Example:
        >>> import numpy as np
        >>> Activation("relu")(np.array([[-1.0, 2.0]]))
        array([[0., 2.]], dtype=float32)
    """

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def get_config(self):
        config = super().get_config()
        config["activation"] = activations.serialize(self.activation)
        return config
