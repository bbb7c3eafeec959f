"""Conv1D, Conv2D and Conv3D: (grouped) cross-correlations by im2col and one matmul."""

import math

from engine.training import constraints, regularizers
from engine.network import initializers
from layers.convolutional._base import (_BaseConv, check_strides_and_dilation, from_channels_last,
                                        positive_int, to_channels_last)
from layers.convolutional._im2col import conv, conv_input_grad, conv_kernel_grad


class _Conv(_BaseConv):
    """``activation(conv(inputs, kernel) + bias)`` with a kernel of shape
    ``(*kernel_size, in_channels // groups, filters)``."""

    def __init__(self, rank, filters, kernel_size, strides, padding, data_format, dilation_rate, groups, activation,
                 use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                 kernel_constraint, bias_constraint, paddings, **kwargs):
        super().__init__(rank, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         bias_initializer, bias_regularizer, bias_constraint, paddings, **kwargs)
        self.filters = positive_int(filters, "filters")
        self.groups = positive_int(groups, "groups")
        if self.filters % self.groups:
            raise ValueError(
                "The number of filters must be evenly divisible by the number of groups. "
                f"Received: groups={self.groups}, filters={self.filters}."
            )
        check_strides_and_dilation(self.strides, self.dilation_rate)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)

    def build(self, input_shape):
        channels = self._build_input(input_shape)
        if channels % self.groups:
            raise ValueError(
                "The number of input channels must be evenly divisible by the number of groups. "
                f"Received groups={self.groups}, but the input has {channels} channels (full input shape is "
                f"{tuple(input_shape)})."
            )
        self.compute_output_shape(input_shape)
        self.kernel = self.add_weight(
            shape=self.kernel_size + (channels // self.groups, self.filters), initializer=self.kernel_initializer,
            name="kernel", regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
        )
        self._add_bias(self.filters)

    def forward(self, inputs, training=True):
        x = to_channels_last(inputs, self.data_format)
        pads, _ = self._geometry(x.shape[1:-1])
        z, saved = conv(x, self.kernel.value, self.strides, self.dilation_rate, pads, self.groups)
        outputs, z = self._finish(z)
        return outputs, (x.shape[1:-1], pads, saved, z, outputs)

    def backward(self, cache, grad_outputs, input_gradient=True):
        """``input_gradient=False`` (the plan's, when no earlier layer reads it) leaves
        out the input gradient, returning None for it."""
        spatial, pads, saved, z, outputs = cache
        grad_z, grads = self._finish_backward(z, outputs, grad_outputs)
        grads[self.kernel] = conv_kernel_grad(saved, grad_z, self.kernel.value, self.strides, self.dilation_rate, pads)
        if not input_gradient:
            return None, grads
        grad_x = conv_input_grad(grad_z, self.kernel.value, self.strides, self.dilation_rate, pads, spatial,
                                 self.groups)
        return from_channels_last(grad_x, self.data_format), grads

    def flops(self, input_shapes, output_shapes):
        """Per output element, the kernel's multiply-adds over its taps and input channels, and the bias."""
        taps = math.prod(self.kernel.shape[:-1])
        return math.prod(output_shapes[0]) * (2 * taps + (self.bias is not None))

    def get_config(self):
        config = super().get_config()
        config.update(
            filters=self.filters,
            groups=self.groups,
            kernel_initializer=initializers.serialize(self.kernel_initializer),
            kernel_regularizer=regularizers.serialize(self.kernel_regularizer),
            kernel_constraint=constraints.serialize(self.kernel_constraint),
        )
        return config


class Conv1D(_Conv):
    """1D convolution (cross-correlation) over the steps of a sequence.

    Args:
        filters: number of output channels.
        kernel_size: an int or a tuple of 1 int, the window length.
        strides: an int or a tuple of 1 int; ``strides > 1`` excludes ``dilation_rate > 1``.
        padding: ``"valid"`` (no padding), ``"same"`` (``ceil(steps / strides)``
            outputs, the odd pad at the end) or ``"causal"`` (all the padding
            before the first step, so output ``t`` never sees inputs after ``t``).
        data_format: ``"channels_last"`` (default, ``(batch, steps, channels)``)
            or ``"channels_first"`` (``(batch, channels, steps)``).
        dilation_rate: an int or a tuple of 1 int, the spacing of the kernel taps.
        groups: splits the channels in ``groups`` independent convolutions;
            the input channels and ``filters`` must be multiples of it.
        activation: an activation name or function; None is linear.
        use_bias: whether to add a bias vector.
        kernel_initializer, bias_initializer: initializers of the weights.
        kernel_regularizer, bias_regularizer: penalties on the weights.
        kernel_constraint, bias_constraint: projections applied after each update.

    Weights, in order: ``kernel`` of shape ``(kernel_size, in_channels // groups,
    filters)`` and ``bias`` of shape ``(filters,)``, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> Conv1D(4, 3, padding="causal")(np.ones((2, 10, 3))).shape
        (2, 10, 4)
    """

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(1, filters, kernel_size, strides, padding, data_format, dilation_rate, groups, activation,
                         use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         kernel_constraint, bias_constraint, ("valid", "same", "causal"), **kwargs)


class Conv2D(_Conv):
    """2D convolution (cross-correlation) over the rows and columns of images.

    Args:
        filters: number of output channels.
        kernel_size: an int or a tuple of 2 ints, the window's height and width.
        strides: an int or a tuple of 2 ints; ``strides > 1`` excludes ``dilation_rate > 1``.
        padding: ``"valid"`` (no padding) or ``"same"`` (``ceil(size / strides)``
            outputs per axis; an odd total pad puts the extra row/column at the
            bottom/right, as lax's SAME padding does).
        data_format: ``"channels_last"`` (default, ``(batch, rows, cols, channels)``)
            or ``"channels_first"`` (``(batch, channels, rows, cols)``).
        dilation_rate: an int or a tuple of 2 ints, the spacing of the kernel taps.
        groups: splits the channels in ``groups`` independent convolutions;
            the input channels and ``filters`` must be multiples of it.
        activation: an activation name or function; None is linear.
        use_bias: whether to add a bias vector.
        kernel_initializer, bias_initializer: initializers of the weights.
        kernel_regularizer, bias_regularizer: penalties on the weights.
        kernel_constraint, bias_constraint: projections applied after each update.

    Weights, in order: ``kernel`` of shape ``(*kernel_size, in_channels // groups,
    filters)`` and ``bias`` of shape ``(filters,)``, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> Conv2D(8, 3, strides=2, padding="same", activation="relu")(np.ones((2, 9, 9, 3))).shape
        (2, 5, 5, 8)
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(2, filters, kernel_size, strides, padding, data_format, dilation_rate, groups, activation,
                         use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         kernel_constraint, bias_constraint, ("valid", "same"), **kwargs)


class Conv3D(_Conv):
    """3D convolution (cross-correlation) over volumes (depth, rows, columns).

    Args:
        filters: number of output channels.
        kernel_size: an int or a tuple of 3 ints, the window's depth, height and width.
        strides: an int or a tuple of 3 ints; ``strides > 1`` excludes ``dilation_rate > 1``.
        padding: ``"valid"`` (no padding) or ``"same"`` (``ceil(size / strides)``
            outputs per axis, the odd pad at the end, as lax's SAME padding).
        data_format: ``"channels_last"`` (default, ``(batch, depth, rows, cols,
            channels)``) or ``"channels_first"`` (``(batch, channels, depth, rows, cols)``).
        dilation_rate: an int or a tuple of 3 ints, the spacing of the kernel taps.
        groups: splits the channels in ``groups`` independent convolutions;
            the input channels and ``filters`` must be multiples of it.
        activation: an activation name or function; None is linear.
        use_bias: whether to add a bias vector.
        kernel_initializer, bias_initializer: initializers of the weights.
        kernel_regularizer, bias_regularizer: penalties on the weights.
        kernel_constraint, bias_constraint: projections applied after each update.

    Weights, in order: ``kernel`` of shape ``(*kernel_size, in_channels // groups,
    filters)`` and ``bias`` of shape ``(filters,)``, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> Conv3D(2, 3, padding="same")(np.ones((1, 4, 5, 6, 3))).shape
        (1, 4, 5, 6, 2)
    """

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(3, filters, kernel_size, strides, padding, data_format, dilation_rate, groups, activation,
                         use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         kernel_constraint, bias_constraint, ("valid", "same"), **kwargs)
