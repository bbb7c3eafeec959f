"""Dense: ``activation(inputs @ kernel + bias)`` on the last axis."""

import math

import numpy as np

from engine import InputSpec, Layer
from engine.training import constraints, regularizers
from engine.network import initializers
from layers import activations
from layers.convolutional._runs import blas_for


class Dense(Layer):
    """A densely connected layer applied to the last axis of its input.

    Args:
        units: positive integer, size of the output's last axis.
        activation: an activation name or function; None is linear.
        use_bias: whether to add a bias vector.
        kernel_initializer, bias_initializer: initializers of the weights.
        kernel_regularizer, bias_regularizer: penalties on the weights.
        kernel_constraint, bias_constraint: projections applied after each update.
        activity_regularizer: penalty on the output.

    Weights, in order: ``kernel`` of shape ``(input_dim, units)`` and ``bias``
    of shape ``(units,)``, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> Dense(4, activation="relu")(np.ones((2, 3))).shape
        (2, 4)
    """

    supports_masking = True

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, (int, np.integer)) or isinstance(units, bool) or units <= 0:
            raise ValueError(
                f"Received an invalid value for `units`, expected a positive integer. Received: units={units!r}"
            )
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = None if kernel_regularizer is None else regularizers.get(kernel_regularizer)
        self.bias_regularizer = None if bias_regularizer is None else regularizers.get(bias_regularizer)
        self.kernel_constraint = None if kernel_constraint is None else constraints.get(kernel_constraint)
        self.bias_constraint = None if bias_constraint is None else constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=2)

    @property
    def activation(self):
        """The activation function (linear when None was given)."""
        return self._activation

    @activation.setter
    def activation(self, value):
        # Set later as in the constructor (a name, a function, or None for linear), as Keras' Dense allows.
        self._activation = activations.get(value)

    def build(self, input_shape):
        input_dim = input_shape[-1]
        if input_dim is None:
            raise ValueError(
                f"Layer {self.name!r} (Dense) needs a known last axis to create its kernel, "
                f"received input shape {input_shape}."
            )
        self.kernel = self.add_weight(
            shape=(input_dim, self.units), initializer=self.kernel_initializer, name="kernel",
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(self.units,), initializer=self.bias_initializer, name="bias",
                regularizer=self.bias_regularizer, constraint=self.bias_constraint,
            )
        self.input_spec = InputSpec(min_ndim=2, axes={-1: input_dim})

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def call(self, inputs, training=False):
        with blas_for(2 * inputs.size * self.units):
            z = inputs @ self.kernel.value
        if self.bias is not None:
            z += self.bias.value
        return self.activation(z)

    def forward(self, inputs, training=True):
        with blas_for(2 * inputs.size * self.units):
            z = inputs @ self.kernel.value
        if self.bias is not None:
            z += self.bias.value
        y = self.activation(z)
        return y, (inputs, z if self.activation.gradient_reads_input() else None, y)  # relu: y gives the gradient

    def backward(self, cache, grad_outputs, input_gradient=True):
        """``input_gradient=False`` (the plan's, when no earlier layer reads it) leaves
        out the input gradient, returning None for it."""
        inputs, z, y = cache
        grad_z = self.activation.gradient(z, y, grad_outputs)
        flat_x = inputs.reshape(-1, inputs.shape[-1])
        flat_g = grad_z.reshape(-1, self.units)
        with blas_for(2 * inputs.size * self.units):  # small products on one BLAS thread (layers.convolutional._runs)
            grads = {self.kernel: flat_x.T @ flat_g}
            grad_inputs = grad_z @ self.kernel.value.T if input_gradient else None
        if self.bias is not None:
            grads[self.bias] = flat_g.sum(axis=0)
        return grad_inputs, grads

    def flops(self, input_shapes, output_shapes):
        """The matmul (2 per multiply-add) and the bias add; the activation is not counted."""
        return math.prod(output_shapes[0]) * (2 * input_shapes[0][-1] + (self.bias is not None))

    def get_config(self):
        config = super().get_config()
        config.update(
            units=self.units,
            activation=activations.serialize(self.activation),
            use_bias=self.use_bias,
            kernel_initializer=initializers.serialize(self.kernel_initializer),
            bias_initializer=initializers.serialize(self.bias_initializer),
            kernel_regularizer=regularizers.serialize(self.kernel_regularizer),
            bias_regularizer=regularizers.serialize(self.bias_regularizer),
            kernel_constraint=constraints.serialize(self.kernel_constraint),
            bias_constraint=constraints.serialize(self.bias_constraint),
        )
        return config
