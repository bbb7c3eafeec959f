"""What the convolution and pooling layers share: Keras' argument checks, the
channels layout (the arithmetic runs channels-last), and, for the convolutions,
the bias and activation that end every forward pass."""

import numpy as np

from engine import InputSpec, Layer
from engine.training import constraints, regularizers
from engine.network import initializers
from layers import activations
from layers.convolutional._im2col import effective_size, output_spatial, padding_pads
from layers._arguments import is_int, standardize_data_format, standardize_tuple


def standardize_padding(padding, allowed, owner):
    """The lower-cased ``padding`` name, one of ``allowed``."""
    value = padding.lower() if isinstance(padding, str) else padding
    if value not in allowed:
        hint = " ('causal' padding exists only for Conv1D)" if value == "causal" else ""
        raise ValueError(
            f"The `padding` argument of {owner} must be one of {', '.join(map(repr, allowed))}{hint}. "
            f"Received: padding={padding!r}"
        )
    return value


def positive_int(value, name):
    """``value`` as an int, which must be positive (Keras' message otherwise)."""
    if not is_int(value) or value <= 0:
        raise ValueError(
            f"Invalid value for argument `{name}`. Expected a strictly positive integer. Received {name}={value!r}."
        )
    return int(value)


def check_strides_and_dilation(strides, dilation_rate):
    if max(strides) > 1 and max(dilation_rate) > 1:
        raise ValueError(
            "`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
            f"Received: strides={strides} and dilation_rate={dilation_rate}"
        )


def check_output_size(layer, spatial, out, window, padding):
    """Raises when some known axis of ``out`` is empty: the input is too small for the window."""
    if any(o is not None and o <= 0 for o in out):
        raise ValueError(
            f"Layer {layer.name!r} ({type(layer).__name__}) received an input of spatial size {tuple(spatial)}, "
            f"too small for {window} and padding={padding!r}: the output would have spatial size {tuple(out)}. "
            "Use a larger input, a smaller window, or padding='same'."
        )


def to_channels_last(x, data_format):
    """``(batch, channels, *spatial)`` as ``(batch, *spatial, channels)`` (a view)."""
    return np.moveaxis(x, 1, -1) if data_format == "channels_first" else x


def from_channels_last(x, data_format):
    """Inverse of ``to_channels_last`` (a view)."""
    return np.moveaxis(x, -1, 1) if data_format == "channels_first" else x


def spatial_shape(shape, data_format):
    return tuple(shape[2:]) if data_format == "channels_first" else tuple(shape[1:-1])


def channels_shape(batch, spatial, channels, data_format):
    """The full shape of a tensor given its parts, in ``data_format`` order."""
    if data_format == "channels_first":
        return (batch, channels) + tuple(spatial)
    return (batch,) + tuple(spatial) + (channels,)


class _BaseConv(Layer):
    """Base of the convolutions: the arguments they all take, the input's channels,
    the bias and the activation.

    Subclasses create their kernels in ``build`` (after ``_build_input``, and
    ``_add_bias``) and compute a channels-last pre-activation ``z``; ``_finish``
    and ``_finish_backward`` add the bias and apply the activation in the
    ``data_format`` layout (softmax's axis -1 is the layout's last axis, as in Keras).
    """

    def __init__(self, rank, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                 bias_initializer, bias_regularizer, bias_constraint, paddings=("valid", "same"), **kwargs):
        super().__init__(**kwargs)
        self.rank = rank
        self.kernel_size = standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = standardize_tuple(strides, rank, "strides")
        self.dilation_rate = standardize_tuple(dilation_rate, rank, "dilation_rate")
        self.padding = standardize_padding(padding, paddings, type(self).__name__)
        self.data_format = standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.bias_initializer = initializers.get(bias_initializer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(ndim=rank + 2)

    @property
    def _window(self):
        return (f"kernel_size={self.kernel_size} with dilation_rate={self.dilation_rate} "
                f"(spanning {effective_size(self.kernel_size, self.dilation_rate)})")

    def _geometry(self, spatial):
        """The pads and the output spatial size for inputs of spatial size ``spatial``."""
        pads = padding_pads(spatial, self.kernel_size, self.strides, self.dilation_rate, self.padding)
        out = output_spatial(spatial, self.kernel_size, self.strides, self.dilation_rate, pads)
        check_output_size(self, spatial, out, self._window, self.padding)
        return pads, out

    def _output_channels(self, channels):
        return self.filters

    def compute_output_shape(self, input_shape):
        channels = input_shape[1 if self.data_format == "channels_first" else -1]
        _, out = self._geometry(spatial_shape(input_shape, self.data_format))
        return channels_shape(input_shape[0], out, self._output_channels(channels), self.data_format)

    def _build_input(self, input_shape):
        """Checks the input's channels and fixes them in the input spec; returns them."""
        channel_axis = 1 if self.data_format == "channels_first" else -1
        channels = input_shape[channel_axis]
        if channels is None:
            raise ValueError(
                f"Layer {self.name!r} ({type(self).__name__}) needs a known channels axis ({self.data_format}) "
                f"to create its kernel, received input shape {tuple(input_shape)}."
            )
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={channel_axis: channels})
        return channels

    def _add_bias(self, size):
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(shape=(size,), initializer=self.bias_initializer, name="bias",
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def _finish(self, z):
        """Bias and activation of a channels-last ``z``; returns ``(outputs, z in data_format)``, or
        ``(outputs, None)`` where the outputs alone give the activation's gradient (relu): backward
        then keeps no ``z``."""
        if self.bias is not None:
            z += self.bias.value
        z = from_channels_last(z, self.data_format)
        return self.activation(z), z if self.activation.gradient_reads_input() else None

    def _finish_backward(self, z, outputs, grad_outputs):
        """Returns the channels-last gradient of ``z`` and ``{bias: gradient}``."""
        grad_z = to_channels_last(self.activation.gradient(z, outputs, grad_outputs), self.data_format)
        grads = {}
        if self.bias is not None:
            grads[self.bias] = grad_z.reshape(-1, grad_z.shape[-1]).sum(axis=0)
        return grad_z, grads

    def call(self, inputs, training=False):
        return self.forward(inputs, training=training)[0]

    def get_config(self):
        config = super().get_config()
        config.update(
            kernel_size=self.kernel_size,
            strides=self.strides,
            padding=self.padding,
            data_format=self.data_format,
            dilation_rate=self.dilation_rate,
            activation=activations.serialize(self.activation),
            use_bias=self.use_bias,
            bias_initializer=initializers.serialize(self.bias_initializer),
            bias_regularizer=regularizers.serialize(self.bias_regularizer),
            bias_constraint=constraints.serialize(self.bias_constraint),
        )
        return config
