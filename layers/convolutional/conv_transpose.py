"""Conv1DTranspose and Conv2DTranspose: the input gradient of a convolution, run forward.

A transposed convolution maps each input position to a kernel-sized patch of
the output, which is exactly how a convolution's output gradient flows back to
its input. So the forward pass is ``conv_input_grad`` and the backward pass is a
convolution (for the inputs) and that convolution's kernel gradient.
"""

import math

from engine.training import constraints, regularizers
from engine.network import initializers
from layers.convolutional._base import (_BaseConv, check_strides_and_dilation, from_channels_last,
                                        positive_int, to_channels_last)
from layers.convolutional._im2col import conv, conv_input_grad, conv_kernel_grad, transpose_pads
from layers._arguments import standardize_tuple


class _ConvTranspose(_BaseConv):
    """``activation(conv_transpose(inputs, kernel) + bias)`` with a kernel of
    shape ``(*kernel_size, filters, in_channels)``."""

    def __init__(self, rank, filters, kernel_size, strides, padding, output_padding, data_format, dilation_rate,
                 activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                 kernel_constraint, bias_constraint, **kwargs):
        super().__init__(rank, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         bias_initializer, bias_regularizer, bias_constraint, **kwargs)
        self.filters = positive_int(filters, "filters")
        self.output_padding = None
        if output_padding is not None:
            self.output_padding = standardize_tuple(output_padding, rank, "output_padding", allow_zero=True)
            for axis, (extra, stride) in enumerate(zip(self.output_padding, self.strides)):
                if extra >= stride:
                    raise ValueError(
                        "`output_padding` must be strictly less than `strides` for all dimensions. "
                        f"At dimension {axis}, `output_padding` is {extra} but `strides` is {stride}. "
                        f"Received: output_padding={self.output_padding}, strides={self.strides}"
                    )
        check_strides_and_dilation(self.strides, self.dilation_rate)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)

    def build(self, input_shape):
        channels = self._build_input(input_shape)
        self.kernel = self.add_weight(
            shape=self.kernel_size + (self.filters, channels), initializer=self.kernel_initializer, name="kernel",
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
        )
        self._add_bias(self.filters)

    def _geometry(self, spatial):
        return transpose_pads(spatial, self.kernel_size, self.strides, self.dilation_rate, self.padding,
                              self.output_padding)

    def forward(self, inputs, training=True):
        x = to_channels_last(inputs, self.data_format)
        pads, out = self._geometry(x.shape[1:-1])
        z = conv_input_grad(x, self.kernel.value, self.strides, self.dilation_rate, pads, out)
        outputs, z = self._finish(z)
        return outputs, (x, pads, z, outputs)

    def backward(self, cache, grad_outputs):
        x, pads, z, outputs = cache
        grad_z, grads = self._finish_backward(z, outputs, grad_outputs)
        grad_x, saved = conv(grad_z, self.kernel.value, self.strides, self.dilation_rate, pads)
        grads[self.kernel] = conv_kernel_grad(saved, x, self.kernel.value, self.strides, self.dilation_rate, pads)
        return from_channels_last(grad_x, self.data_format), grads

    def flops(self, input_shapes, output_shapes):
        """Every input value times every kernel tap and filter (the multiply-adds that land in
        the cropped border included), and the bias per output element."""
        multiply_adds = math.prod(input_shapes[0]) * math.prod(self.kernel_size) * self.filters
        return 2 * multiply_adds + math.prod(output_shapes[0]) * (self.bias is not None)

    def get_config(self):
        config = super().get_config()
        config.update(
            filters=self.filters,
            output_padding=self.output_padding,
            kernel_initializer=initializers.serialize(self.kernel_initializer),
            kernel_regularizer=regularizers.serialize(self.kernel_regularizer),
            kernel_constraint=constraints.serialize(self.kernel_constraint),
        )
        return config


class Conv1DTranspose(_ConvTranspose):
    """Transposed 1D convolution: upsamples sequences with a learned kernel.

    Args:
        filters: number of output channels.
        kernel_size: an int or a tuple of 1 int, the size of each input's output patch.
        strides: an int or a tuple of 1 int, the upsampling factors;
            ``strides > 1`` excludes ``dilation_rate > 1``.
        padding: ``"valid"`` (outputs ``(size - 1) * strides + max(span, strides)``)
            or ``"same"`` (outputs ``size * strides``), ``span`` being the dilated kernel size.
        output_padding: None, or an int or a tuple of 1 int smaller than ``strides``:
            the output size is then ``(size - 1) * strides + span + output_padding``
            (``"valid"``) or ``(size - 1) * strides + span % 2 + output_padding`` (``"same"``).
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        dilation_rate: an int or a tuple of 1 int, the spacing of the kernel taps.
        activation: an activation name or function; None is linear.
        use_bias: whether to add a bias vector.
        kernel_initializer, bias_initializer: initializers of the weights.
        kernel_regularizer, bias_regularizer: penalties on the weights.
        kernel_constraint, bias_constraint: projections applied after each update.

    Weights, in order: ``kernel`` of shape ``(*kernel_size, filters, in_channels)``
    and ``bias`` of shape ``(filters,)``, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> Conv1DTranspose(4, 3, strides=2, padding="same")(np.ones((2, 5, 3))).shape
        (2, 10, 4)
    """

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(1, filters, kernel_size, strides, padding, output_padding, data_format, dilation_rate,
                         activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                         bias_regularizer, kernel_constraint, bias_constraint, **kwargs)


class Conv2DTranspose(_ConvTranspose):
    """Transposed 2D convolution: upsamples images with a learned kernel.

    Args:
        filters: number of output channels.
        kernel_size: an int or a tuple of 2 ints, the size of each input's output patch.
        strides: an int or a tuple of 2 ints, the upsampling factors;
            ``strides > 1`` excludes ``dilation_rate > 1``.
        padding: ``"valid"`` (outputs ``(size - 1) * strides + max(span, strides)``)
            or ``"same"`` (outputs ``size * strides``), ``span`` being the dilated kernel size.
        output_padding: None, or an int or a tuple of 2 ints smaller than ``strides``:
            the output size is then ``(size - 1) * strides + span + output_padding``
            (``"valid"``) or ``(size - 1) * strides + span % 2 + output_padding`` (``"same"``).
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        dilation_rate: an int or a tuple of 2 ints, the spacing of the kernel taps.
        activation: an activation name or function; None is linear.
        use_bias: whether to add a bias vector.
        kernel_initializer, bias_initializer: initializers of the weights.
        kernel_regularizer, bias_regularizer: penalties on the weights.
        kernel_constraint, bias_constraint: projections applied after each update.

    Weights, in order: ``kernel`` of shape ``(*kernel_size, filters, in_channels)``
    and ``bias`` of shape ``(filters,)``, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> Conv2DTranspose(4, 3, strides=2)(np.ones((2, 5, 5, 3))).shape
        (2, 11, 11, 4)
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(2, filters, kernel_size, strides, padding, output_padding, data_format, dilation_rate,
                         activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                         bias_regularizer, kernel_constraint, bias_constraint, **kwargs)
