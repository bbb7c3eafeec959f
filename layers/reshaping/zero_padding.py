"""ZeroPadding1D and ZeroPadding2D: add zeros at both ends of the spatial axes."""

from engine import InputSpec, Layer
from layers._arguments import standardize_data_format, standardize_tuple
from layers.reshaping._spatial import crop, spatial_axes, standardize_pairs, zero_pad


class _ZeroPadding(Layer):
    """Pads ``self._pairs[i] = (before, after)`` zeros along spatial axis ``i``;
    the backward pass crops the gradient back to the input's size."""

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, pair in zip(spatial_axes(self.data_format, len(shape)), self._pairs):
            if shape[axis] is not None:
                shape[axis] += sum(pair)
        return tuple(shape)

    def call(self, inputs, training=False):
        return zero_pad(inputs, spatial_axes(self.data_format, inputs.ndim), self._pairs)

    def backward(self, cache, grad_outputs):
        return crop(grad_outputs, spatial_axes(self.data_format, cache.ndim), self._pairs), {}

    def flops(self, input_shapes, output_shapes):
        """0: padding moves values, it computes nothing."""
        return 0

    def get_config(self):
        config = super().get_config()
        config.update(padding=self.padding, data_format=self.data_format)
        return config


class ZeroPadding1D(_ZeroPadding):
    """Pads a sequence with zeros at the start and end of its steps axis.

    Args:
        padding: an int (the same at both ends) or ``(start_pad, end_pad)``.
        data_format: ``"channels_last"`` (default, ``(batch, steps, features)``)
            or ``"channels_first"`` (``(batch, features, steps)``).

    Example:
        >>> import numpy as np
        >>> ZeroPadding1D(padding=(1, 2))(np.ones((2, 3, 4))).shape
        (2, 6, 4)
    """

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.padding = standardize_tuple(padding, 2, "padding", allow_zero=True)
        self._pairs = (self.padding,)
        self.input_spec = InputSpec(ndim=3)


class ZeroPadding2D(_ZeroPadding):
    """Pads images with rows and columns of zeros.

    Args:
        padding: an int (the same everywhere), ``(symmetric_height_pad,
            symmetric_width_pad)`` or ``((top_pad, bottom_pad), (left_pad, right_pad))``.
        data_format: ``"channels_last"`` (default, ``(batch, height, width,
            channels)``) or ``"channels_first"`` (``(batch, channels, height, width)``).

    Example:
        >>> import numpy as np
        >>> ZeroPadding2D(padding=((1, 0), (2, 2)))(np.ones((2, 4, 6, 3))).shape
        (2, 5, 10, 3)
    """

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.padding = standardize_pairs(padding, "padding")
        self._pairs = self.padding
        self.input_spec = InputSpec(ndim=4)
