"""DepthwiseConv2D: one small convolution per input channel, computed tap by tap."""

import math

import numpy as np

from engine.training import constraints, regularizers
from engine.network import initializers
from layers.convolutional._base import _BaseConv, from_channels_last, positive_int, to_channels_last
from layers.convolutional._im2col import crop, effective_size, output_spatial, pad, tap_targets
from layers.convolutional._runs import over_product_shares

# einsum's loops take about 10 times a BLAS product's time per multiply-add (3-4 GFLOP/s against 40):
# the factor by which a depthwise product counts in over_product_shares' threshold.
EINSUM_COST = 10


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
        z, padded = depthwise_conv(x, self.kernel.value, self.strides, self.dilation_rate, pads)
        outputs, z = self._finish(z)
        return outputs, (x.shape[1:-1], pads, padded, z, outputs)

    def backward(self, cache, grad_outputs):
        spatial, pads, padded, z, outputs = cache
        grad_z, grads = self._finish_backward(z, outputs, grad_outputs)
        grad_x, grads[self.kernel] = depthwise_conv_grads(padded, grad_z, self.kernel.value, self.strides,
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
    multiplier)`` kernel: returns ``(outputs, the padded input)``.

    One ``einsum`` over a view of the windows' rows (no copies, no temporaries),
    in ``product_shares`` of the batch between threads; as a grouped im2col
    convolution it would be one tiny matmul per channel.
    """
    kernel_size = kernel.shape[:-2]
    padded = pad(x, pads)
    out = output_spatial(x.shape[1:-1], kernel_size, strides, dilation_rate, pads)
    rows = row_windows(padded, kernel_size, strides, dilation_rate, out)
    per_row = _per_row(kernel, rows)
    outputs = np.empty(rows.shape[:2] + rows.shape[4:] + kernel.shape[-1:], np.result_type(x, kernel))

    def run(start, stop):
        np.einsum("bhij...,ij...m->bh...m", rows[start:stop], per_row, out=outputs[start:stop])

    over_product_shares(run, x.shape[0], EINSUM_COST * 2 * outputs.size * math.prod(kernel_size))
    return outputs.reshape((x.shape[0],) + out + (math.prod(kernel.shape[-2:]),)), padded  # explicit: batch 0


def depthwise_conv_grads(padded, grad_outputs, kernel, strides, dilation_rate, pads, spatial):
    """Gradients ``(inputs, kernel)`` of ``depthwise_conv``. The kernel's sums the
    input windows times the output gradients; the input's is, at stride 1, the
    depthwise convolution of the padded output gradient with the flipped kernel,
    and otherwise the output gradients times each tap's weights added back tap by tap."""
    kernel_size, (channels, multiplier) = kernel.shape[:-2], kernel.shape[-2:]
    out, batch = grad_outputs.shape[1:-1], grad_outputs.shape[0]
    rows = row_windows(padded, kernel_size, strides, dilation_rate, out)
    grad = grad_outputs.reshape(grad_outputs.shape[:2] + rows.shape[4:] + (multiplier,))
    flops = EINSUM_COST * 2 * grad_outputs.size * math.prod(kernel_size)

    def kernel_run(start, stop):
        return np.einsum("bhij...,bh...m->ij...m", rows[start:stop], grad[start:stop])

    grad_kernel = sum(over_product_shares(kernel_run, batch, flops))
    grad_kernel = grad_kernel.reshape(kernel_size + (-1, channels, multiplier)).sum(axis=2)
    if max(strides) > 1:
        grad = grad_outputs.reshape(grad_outputs.shape[:-1] + (channels, multiplier))
        grad_padded = np.zeros(padded.shape, grad.dtype)

        def strided_run(start, stop):
            for tap, target in tap_targets(kernel_size, strides, dilation_rate, out):
                grad_padded[start:stop][target] += np.einsum("bhwcm,cm->bhwc", grad[start:stop], kernel[tap])

        over_product_shares(strided_run, batch, flops)
        return crop(grad_padded, pads, spatial), grad_kernel
    spans = effective_size(kernel_size, dilation_rate)
    grad_pads = tuple((span - 1 - before, span - 1 - after) for span, (before, after) in zip(spans, pads))
    padded_grad = pad(grad_outputs, grad_pads)
    grad_rows = row_windows(padded_grad, kernel_size, strides, dilation_rate, spatial)
    grad_rows = grad_rows.reshape(grad_rows.shape[:-1] + (grad_rows.shape[-1] // multiplier, multiplier))
    per_row = _per_row(kernel[::-1, ::-1], grad_rows[..., 0])
    grad_x = np.empty(grad_rows.shape[:2] + grad_rows.shape[4:-1], np.result_type(grad_outputs, kernel))

    def input_run(start, stop):
        np.einsum("bhij...m,ij...m->bh...", grad_rows[start:stop], per_row, out=grad_x[start:stop])

    over_product_shares(input_run, batch, flops)
    return grad_x.reshape(grad_x.shape[:1] + tuple(spatial) + (channels,)), grad_kernel


def row_windows(padded, kernel_size, strides, dilation_rate, out):
    """Read-only view ``(batch, out_rows, kh, kw, out_cols * channels)`` of a padded
    input: window ``(h, w)``'s tap ``(i, j)``, channel ``c``, is ``[:, h, i, j, w * channels + c]``.
    Each tap's row is one contiguous run, so that einsum's inner loop is long;
    with a column stride above 1 the last axis stays split, ``(out_cols, channels)``."""
    (_, row_step, col_step, channel_step), channels = padded.strides, padded.shape[-1]
    shape = padded.shape[:1] + (out[0],) + tuple(kernel_size)
    steps = (padded.strides[0], row_step * strides[0], row_step * dilation_rate[0], col_step * dilation_rate[1])
    if strides[1] == 1:
        return np.lib.stride_tricks.as_strided(padded, shape + (out[1] * channels,), steps + (channel_step,),
                                               writeable=False)
    return np.lib.stride_tricks.as_strided(padded, shape + (out[1], channels),
                                           steps + (col_step * strides[1], channel_step), writeable=False)


def _per_row(kernel, rows):
    """The ``(kh, kw, in, multiplier)`` kernel laid out along ``row_windows``' last axes:
    repeated for each output column when they are flattened, else broadcast over them."""
    if rows.ndim == 5:
        return np.tile(kernel, (1, 1, rows.shape[-1] // kernel.shape[-2], 1))
    return kernel[:, :, None]
