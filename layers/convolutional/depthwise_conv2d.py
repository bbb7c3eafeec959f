"""DepthwiseConv2D: one small convolution per input channel (a grouped convolution
with as many groups as channels)."""

import math

from engine import constraints, initializers, regularizers
from layers.convolutional._base import _BaseConv, from_channels_last, positive_int, to_channels_last
from layers.convolutional._im2col import conv, conv_input_grad, conv_kernel_grad


class DepthwiseConv2D(_BaseConv):
    """Convolves each input channel with its own ``depth_multiplier`` filters.

    Output channel ``c * depth_multiplier + m`` is input channel ``c`` convolved
    with ``kernel[:, :, c, m]`` (then the bias and the activation).

    Args:
        kernel_size: an int or a tuple of 2 ints, the window's height and width.
        strides: an int or a tuple of 2 ints.
        padding: ``"valid"`` or ``"same"`` (the odd pad at the bottom/right, as lax's SAME).
        depth_multiplier: number of filters per input channel.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        dilation_rate: an int or a tuple of 2 ints, the spacing of the kernel taps.
        activation: an activation name or function; None is linear.
        use_bias: whether to add a bias vector.
        depthwise_initializer, bias_initializer: initializers of the weights.
        depthwise_regularizer, bias_regularizer: penalties on the weights.
        depthwise_constraint, bias_constraint: projections applied after each update.

    Weights, in order: ``kernel`` of shape ``(*kernel_size, in_channels,
    depth_multiplier)`` and ``bias`` of shape ``(in_channels * depth_multiplier,)``,
    as in Keras 3.

    Example:
        >>> import numpy as np
        >>> DepthwiseConv2D(3, depth_multiplier=2)(np.ones((2, 8, 8, 3))).shape
        (2, 6, 6, 6)
    """

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(2, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         bias_initializer, bias_regularizer, bias_constraint, **kwargs)
        self.depth_multiplier = positive_int(depth_multiplier, "depth_multiplier")
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)

    def build(self, input_shape):
        channels = self._build_input(input_shape)
        self.compute_output_shape(input_shape)
        self.kernel = self.add_weight(
            shape=self.kernel_size + (channels, self.depth_multiplier), initializer=self.depthwise_initializer,
            name="kernel", regularizer=self.depthwise_regularizer, constraint=self.depthwise_constraint,
        )
        self._add_bias(channels * self.depth_multiplier)

    def _output_channels(self, channels):
        return channels * self.depth_multiplier

    def forward(self, inputs, training=True):
        x = to_channels_last(inputs, self.data_format)
        pads, _ = self._geometry(x.shape[1:-1])
        z, cols = depthwise_conv(x, self.kernel.value, self.strides, self.dilation_rate, pads)
        outputs, z = self._finish(z)
        return outputs, (x.shape[1:-1], pads, cols, z, outputs)

    def backward(self, cache, grad_outputs):
        spatial, pads, cols, z, outputs = cache
        grad_z, grads = self._finish_backward(z, outputs, grad_outputs)
        grad_x, grads[self.kernel] = depthwise_conv_grads(cols, grad_z, self.kernel.value, self.strides,
                                                          self.dilation_rate, pads, spatial)
        return from_channels_last(grad_x, self.data_format), grads

    def flops(self, input_shapes, output_shapes):
        """Per output element, one multiply-add per kernel tap of its one input channel, and the bias."""
        return math.prod(output_shapes[0]) * (2 * math.prod(self.kernel_size) + (self.bias is not None))

    def get_config(self):
        config = super().get_config()
        config.update(
            depth_multiplier=self.depth_multiplier,
            depthwise_initializer=initializers.serialize(self.depthwise_initializer),
            depthwise_regularizer=regularizers.serialize(self.depthwise_regularizer),
            depthwise_constraint=constraints.serialize(self.depthwise_constraint),
        )
        return config


def depthwise_conv(x, kernel, strides, dilation_rate, pads):
    """The depthwise convolution of channels-last ``x`` with a ``(*kernel_size, in,
    multiplier)`` kernel, as a convolution with ``in`` groups: ``(outputs, cols)``."""
    return conv(x, _as_grouped(kernel), strides, dilation_rate, pads, groups=kernel.shape[-2])


def depthwise_conv_grads(cols, grad_outputs, kernel, strides, dilation_rate, pads, spatial):
    """Gradients ``(inputs, kernel)`` of ``depthwise_conv``."""
    grouped = _as_grouped(kernel)
    grad_x = conv_input_grad(grad_outputs, grouped, strides, dilation_rate, pads, spatial, groups=kernel.shape[-2])
    return grad_x, conv_kernel_grad(cols, grad_outputs, grouped.shape).reshape(kernel.shape)


def _as_grouped(kernel):
    """``(*kernel_size, in, multiplier)`` as a grouped kernel ``(*kernel_size, 1, in * multiplier)``."""
    return kernel.reshape(kernel.shape[:-2] + (1, -1))
