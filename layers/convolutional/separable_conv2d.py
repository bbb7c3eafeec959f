"""SeparableConv2D: a depthwise convolution followed by a pointwise (1x1) one."""

import math

from engine.training import constraints, regularizers
from engine.network import initializers
from layers.convolutional._base import _BaseConv, from_channels_last, positive_int, to_channels_last
from layers.convolutional.depthwise_conv2d import depthwise_conv, depthwise_conv_grads


class SeparableConv2D(_BaseConv):
    """Convolves each input channel on its own (depthwise), then mixes the
    channels with a 1x1 convolution (pointwise): far fewer weights than a Conv2D.

    Args:
        filters: number of output channels.
        kernel_size: an int or a tuple of 2 ints, the depthwise window's height and width.
        strides: an int or a tuple of 2 ints, of the depthwise convolution.
        padding: ``"valid"`` or ``"same"`` (the odd pad at the bottom/right, as lax's SAME).
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        dilation_rate: an int or a tuple of 2 ints, the spacing of the depthwise taps.
        depth_multiplier: number of depthwise filters per input channel.
        activation: an activation name or function; None is linear.
        use_bias: whether to add a bias vector (after the pointwise convolution).
        depthwise_initializer, pointwise_initializer, bias_initializer: initializers.
        depthwise_regularizer, pointwise_regularizer, bias_regularizer: penalties.
        depthwise_constraint, pointwise_constraint, bias_constraint: projections
            applied after each update.

    Weights, in order: ``depthwise_kernel`` ``(*kernel_size, in_channels,
    depth_multiplier)``, ``pointwise_kernel`` ``(1, 1, in_channels *
    depth_multiplier, filters)`` and ``bias`` ``(filters,)``, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> SeparableConv2D(8, 3, padding="same")(np.ones((2, 6, 6, 3))).shape
        (2, 6, 6, 8)
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(2, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         bias_initializer, bias_regularizer, bias_constraint, **kwargs)
        self.filters = positive_int(filters, "filters")
        self.depth_multiplier = positive_int(depth_multiplier, "depth_multiplier")
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.pointwise_constraint = constraints.get(pointwise_constraint)

    def build(self, input_shape):
        channels = self._build_input(input_shape)
        self.compute_output_shape(input_shape)
        self.depthwise_kernel = self.add_weight(
            shape=self.kernel_size + (channels, self.depth_multiplier), initializer=self.depthwise_initializer,
            name="depthwise_kernel", regularizer=self.depthwise_regularizer, constraint=self.depthwise_constraint,
        )
        self.pointwise_kernel = self.add_weight(
            shape=(1, 1, channels * self.depth_multiplier, self.filters), initializer=self.pointwise_initializer,
            name="pointwise_kernel", regularizer=self.pointwise_regularizer, constraint=self.pointwise_constraint,
        )
        self._add_bias(self.filters)

    def forward(self, inputs, training=True):
        x = to_channels_last(inputs, self.data_format)
        pads, _ = self._geometry(x.shape[1:-1])
        depthwise, padded = depthwise_conv(x, self.depthwise_kernel.value, self.strides, self.dilation_rate, pads)
        outputs, z = self._finish(depthwise @ self.pointwise_kernel.value[0, 0])
        return outputs, (x.shape[1:-1], pads, padded, depthwise, z, outputs)

    def backward(self, cache, grad_outputs):
        spatial, pads, padded, depthwise, z, outputs = cache
        grad_z, grads = self._finish_backward(z, outputs, grad_outputs)
        pointwise = self.pointwise_kernel.value[0, 0]
        flat_depthwise = depthwise.reshape(-1, pointwise.shape[0])
        grads[self.pointwise_kernel] = (flat_depthwise.T @ grad_z.reshape(-1, self.filters))[None, None]
        grad_x, grads[self.depthwise_kernel] = depthwise_conv_grads(
            padded, grad_z @ pointwise.T, self.depthwise_kernel.value, self.strides, self.dilation_rate, pads, spatial
        )
        return from_channels_last(grad_x, self.data_format), grads

    def flops(self, input_shapes, output_shapes):
        """The depthwise pass (one multiply-add per kernel tap for each of its ``in_channels *
        depth_multiplier`` channels), the pointwise one (one per depthwise channel for each output
        element) and the bias."""
        depth_channels = self.pointwise_kernel.shape[2]
        positions = math.prod(output_shapes[0]) // self.filters
        depthwise = 2 * positions * depth_channels * math.prod(self.kernel_size)
        return depthwise + math.prod(output_shapes[0]) * (2 * depth_channels + (self.bias is not None))

    def get_config(self):
        config = super().get_config()
        config.update(
            filters=self.filters,
            depth_multiplier=self.depth_multiplier,
            depthwise_initializer=initializers.serialize(self.depthwise_initializer),
            pointwise_initializer=initializers.serialize(self.pointwise_initializer),
            depthwise_regularizer=regularizers.serialize(self.depthwise_regularizer),
            pointwise_regularizer=regularizers.serialize(self.pointwise_regularizer),
            depthwise_constraint=constraints.serialize(self.depthwise_constraint),
            pointwise_constraint=constraints.serialize(self.pointwise_constraint),
        )
        return config
