"""Resizing: resizes images to a fixed height and width, as Keras 3 on jax does."""

from engine import InputSpec, Layer
from layers._arguments import is_int, standardize_data_format
from layers._interpolation import INTERPOLATIONS
from layers.preprocessing._floating import floating
from layers.preprocessing._resize import ImageResize


def image_axes(data_format):
    """The height and width axes of batched or single images (counted from the end)."""
    return (-2, -1) if data_format == "channels_first" else (-3, -2)


def resized_shape(input_shape, size, data_format):
    """``input_shape`` with its height and width replaced by ``size``."""
    shape = list(input_shape)
    for axis, value in zip(image_axes(data_format), size):
        shape[axis] = value
    return tuple(shape)


def check_size(layer_name, height, width):
    for name, value in (("height", height), ("width", width)):
        if not is_int(value) or value <= 0:
            raise ValueError(f"{layer_name} expects `{name}` to be a positive integer. Received: {name}={value!r}")


class Resizing(Layer):
    """Resizes images ``(batch, height, width, channels)`` (or one image) to ``(height, width)``.

    The interpolations are jax's (half-pixel centers): one fixed matrix per
    spatial axis, so the backward pass multiplies by its transpose. Outputs
    are floating (the layer's dtype), integer images included.

    Args:
        height, width: the size of the outputs.
        interpolation: ``"bilinear"`` (default), ``"nearest"``, ``"bicubic"``,
            ``"lanczos3"`` or ``"lanczos5"``.
        crop_to_aspect_ratio: crop the largest centered box of the target's
            aspect ratio first, so that images are not distorted.
        pad_to_aspect_ratio: pad with ``fill_value`` to the target's aspect
            ratio first (at most one of the two).
        fill_mode: ``"constant"``, the only mode (Keras on jax has no other).
        fill_value: the value of the padding.
        antialias: widen the kernel when downscaling, against aliasing.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.

    Example:
        >>> import numpy as np
        >>> Resizing(4, 6)(np.ones((2, 8, 8, 3))).shape
        (2, 4, 6, 3)
    """

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False, pad_to_aspect_ratio=False,
                 fill_mode="constant", fill_value=0.0, antialias=False, data_format=None, **kwargs):
        super().__init__(**kwargs)
        check_size(f"Layer {self.name!r} (Resizing)", height, width)
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"Invalid value for argument `interpolation`. Expected one of {INTERPOLATIONS}. "
                             f"Received: interpolation={interpolation!r}")
        if fill_mode != "constant":
            raise ValueError("Invalid value for argument `fill_mode`. Only `'constant'` is supported. "
                             f"Received: fill_mode={fill_mode!r}")
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be `True`.")
        self.height, self.width = int(height), int(width)
        self.interpolation = interpolation
        self.crop_to_aspect_ratio, self.pad_to_aspect_ratio = bool(crop_to_aspect_ratio), bool(pad_to_aspect_ratio)
        self.fill_mode, self.fill_value, self.antialias = fill_mode, fill_value, bool(antialias)
        self.data_format = standardize_data_format(data_format)
        self._resize = ImageResize((self.height, self.width), image_axes(self.data_format), interpolation,
                                   self.antialias, self.crop_to_aspect_ratio, self.pad_to_aspect_ratio, fill_value)
        self.input_spec = InputSpec(min_ndim=3, max_ndim=4)

    def compute_output_shape(self, input_shape):
        return resized_shape(input_shape, (self.height, self.width), self.data_format)

    def call(self, inputs, training=False):
        return self._resize.forward(floating(inputs, self.dtype))

    def backward(self, cache, grad_outputs):
        return self._resize.backward(cache.shape, grad_outputs), {}

    def flops(self, input_shapes, output_shapes):
        """Interpolating rows, then columns: 2 per kernel tap of each output of a pass; 0 for ``"nearest"``."""
        return self._resize.flops(input_shapes[0], output_shapes[0])

    def get_config(self):
        config = super().get_config()
        config.update(data_format=self.data_format, height=self.height, width=self.width,
                      interpolation=self.interpolation, crop_to_aspect_ratio=self.crop_to_aspect_ratio,
                      pad_to_aspect_ratio=self.pad_to_aspect_ratio, fill_mode=self.fill_mode,
                      fill_value=self.fill_value, antialias=self.antialias)
        return config
