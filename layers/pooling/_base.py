"""What the windowed pooling layers share: Keras' arguments (``pool_size``,
``strides``, ``padding``, ``data_format``), the window geometry and the output shape."""

import math

from engine import InputSpec, Layer
from layers.convolutional._base import channels_shape, check_output_size, spatial_shape, standardize_padding
from layers.convolutional._im2col import output_spatial, padding_pads
from layers._arguments import standardize_data_format, standardize_tuple


class _BasePooling(Layer):
    """Base of MaxPooling and AveragePooling: windows of ``pool_size`` moved by
    ``strides`` (``pool_size`` when None) over the spatial axes, padded as lax
    pads them (``"same"``: the odd pad at the end)."""

    def __init__(self, rank, pool_size, strides, padding, data_format, **kwargs):
        super().__init__(**kwargs)
        self.rank = rank
        self.pool_size = standardize_tuple(pool_size, rank, "pool_size")
        self.strides = standardize_tuple(self.pool_size if strides is None else strides, rank, "strides")
        self.padding = standardize_padding(padding, ("valid", "same"), type(self).__name__)
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)

    def _geometry(self, spatial):
        """The pads and the output spatial size for inputs of spatial size ``spatial``."""
        ones = (1,) * self.rank
        pads = padding_pads(spatial, self.pool_size, self.strides, ones, self.padding)
        out = output_spatial(spatial, self.pool_size, self.strides, ones, pads)
        check_output_size(self, spatial, out, f"pool_size={self.pool_size}", self.padding)
        return pads, out

    def compute_output_shape(self, input_shape):
        channels = input_shape[1 if self.data_format == "channels_first" else -1]
        _, out = self._geometry(spatial_shape(input_shape, self.data_format))
        return channels_shape(input_shape[0], out, channels, self.data_format)

    def flops(self, input_shapes, output_shapes):
        """One per window tap for each output element: the comparisons of a max, or the
        adds and the divide of a mean."""
        return math.prod(output_shapes[0]) * math.prod(self.pool_size)

    def get_config(self):
        config = super().get_config()
        config.update(pool_size=self.pool_size, strides=self.strides, padding=self.padding,
                      data_format=self.data_format)
        return config
