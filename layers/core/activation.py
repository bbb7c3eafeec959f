"""Activation: applies an activation function as a layer of its own."""

from engine import Layer
from layers import activations


class Activation(Layer):
    """Applies ``activation`` elementwise (softmax-like ones on the last axis).

    Example:
        >>> import numpy as np
        >>> Activation("relu")(np.array([[-1.0, 2.0]]))
        array([[0., 2.]], dtype=float32)
    """

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def compute_output_shape(self, input_shape):
        return input_shape

    def call(self, inputs, training=False):
        return self.activation(inputs)

    def forward(self, inputs, training=True):
        y = self.activation(inputs)
        return y, (inputs, y)

    def backward(self, cache, grad_outputs):
        inputs, y = cache
        return self.activation.gradient(inputs, y, grad_outputs), {}

    def get_config(self):
        config = super().get_config()
        config["activation"] = activations.serialize(self.activation)
        return config
