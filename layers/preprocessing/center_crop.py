"""CenterCrop: the central ``(height, width)`` box of images."""

from engine import InputSpec, Layer
from layers._arguments import standardize_data_format
from layers.preprocessing._floating import floating
from layers.preprocessing._resize import ImageResize
from layers.preprocessing.resizing import check_size, image_axes, resized_shape
from layers.reshaping._spatial import crop, zero_pad


class CenterCrop(Layer):
    """Crops the central ``(height, width)`` box of images ``(batch, height, width, channels)`` (or one image).

    An image smaller than the box on either side is instead cropped to the
    box's aspect ratio and resized to it (bilinear), as Keras does.

    Args:
        height, width: the size of the outputs.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.

    Example:
        >>> import numpy as np
        >>> CenterCrop(2, 3)(np.arange(20.0).reshape(1, 4, 5, 1))[0, :, :, 0]
        array([[ 6.,  7.,  8.],
               [11., 12., 13.]], dtype=float32)
    """

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        check_size(f"Layer {self.name!r} (CenterCrop)", height, width)
        self.height, self.width = int(height), int(width)
        self.data_format = standardize_data_format(data_format)
        self._axes = image_axes(self.data_format)
        self._resize = ImageResize((self.height, self.width), self._axes, crop_to_aspect_ratio=True)
        self.input_spec = InputSpec(min_ndim=3, max_ndim=4)

    def _crop_pairs(self, shape):
        """(before, after) per axis when the box fits in an image of ``shape``, else None (resize)."""
        pairs = []
        for axis, size in zip(self._axes, (self.height, self.width)):
            excess = shape[axis] - size
            if excess < 0:
                return None
            pairs.append((excess // 2, excess - excess // 2))
        return pairs

    def compute_output_shape(self, input_shape):
        return resized_shape(input_shape, (self.height, self.width), self.data_format)

    def call(self, inputs, training=False):
        inputs = floating(inputs, self.dtype)
        pairs = self._crop_pairs(inputs.shape)
        return self._resize.forward(inputs) if pairs is None else crop(inputs, self._axes, pairs)

    def backward(self, cache, grad_outputs):
        pairs = self._crop_pairs(cache.shape)
        if pairs is None:
            return self._resize.backward(cache.shape, grad_outputs), {}
        return zero_pad(grad_outputs, self._axes, pairs), {}

    def flops(self, input_shapes, output_shapes):
        """0 when cropping (values move); a resize's count when the image is smaller than the box."""
        if self._crop_pairs(input_shapes[0]) is not None:
            return 0
        return self._resize.flops(input_shapes[0], output_shapes[0])

    def get_config(self):
        config = super().get_config()
        config.update(data_format=self.data_format, height=self.height, width=self.width)
        return config
