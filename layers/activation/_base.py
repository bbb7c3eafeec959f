"""_ActivationLayer: the shared body of the layers that apply one activation function."""

import math

from engine import Layer


class _ActivationLayer(Layer):
    """Applies ``self.activation`` (a function of ``layers.activations``) with
    the keyword arguments ``self.activation_arguments()``; the output has the
    input's shape. Subclasses set ``activation`` and their arguments."""

    activation = None
    supports_masking = True

    def activation_arguments(self):
        """The keyword arguments the layer applies its activation with (``{"axis": -1}`` for Softmax).

        Example:
            >>> from layers import LeakyReLU
            >>> LeakyReLU(negative_slope=0.2).activation_arguments()
            {'negative_slope': 0.2}
        """
        return {}

    def compute_output_shape(self, input_shape):
        return input_shape

    def call(self, inputs, training=False):
        return self.activation(inputs, **self.activation_arguments())

    def forward(self, inputs, training=True):
        arguments = self.activation_arguments()
        outputs = self.activation(inputs, **arguments)
        # Where the output determines the gradient (relu), the input is not kept for backward.
        return outputs, (inputs if self.activation.gradient_reads_input(**arguments) else None, outputs)

    def backward(self, cache, grad_outputs):
        inputs, outputs = cache
        return self.activation.gradient(inputs, outputs, grad_outputs, **self.activation_arguments()), {}

    def flops(self, input_shapes, output_shapes):
        """The activation's count (``ActivationFunction.flops``): 1 per element for most."""
        return self.activation.flops(math.prod(output_shapes[0]))
