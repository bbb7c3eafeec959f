"""Cropping1D and Cropping2D: remove rows at both ends of the spatial axes."""

from engine import InputSpec, Layer
from layers._arguments import standardize_data_format, standardize_tuple
from layers.reshaping._spatial import crop, spatial_axes, standardize_pairs, zero_pad


class _Cropping(Layer):
    """Crops ``self._pairs[i] = (before, after)`` along spatial axis ``i``; the
    backward pass zero-pads the gradient back to the input's size."""

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, pair in zip(spatial_axes(self.data_format, len(shape)), self._pairs):
            if shape[axis] is None:
                continue
            if sum(pair) >= shape[axis]:
                raise ValueError(
                    f"Layer {self.name!r} ({type(self).__name__}) cannot crop {self.cropping} from an input "
                    f"of shape {tuple(input_shape)}: values in `cropping` should be smaller than the "
                    "corresponding spatial dimension of the input."
                )
            shape[axis] -= sum(pair)
        return tuple(shape)

    def call(self, inputs, training=False):
        self.compute_output_shape(inputs.shape)  # checks the cropping fits
        return crop(inputs, spatial_axes(self.data_format, inputs.ndim), self._pairs)

    def backward(self, cache, grad_outputs):
        return zero_pad(grad_outputs, spatial_axes(self.data_format, cache.ndim), self._pairs), {}

    def flops(self, input_shapes, output_shapes):
        """0: cropping moves values, it computes nothing."""
        return 0


class Cropping1D(_Cropping):
    """Crops a sequence ``(batch, steps, features)`` along its steps axis.

    Args:
        cropping: an int (the same at both ends) or ``(start_crop, end_crop)``.

    Example:
        >>> import numpy as np
        >>> Cropping1D(cropping=(1, 2))(np.ones((2, 5, 3))).shape
        (2, 2, 3)
    """

    data_format = "channels_last"

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = standardize_tuple(cropping, 2, "cropping", allow_zero=True)
        self._pairs = (self.cropping,)
        self.input_spec = InputSpec(ndim=3)

    def get_config(self):
        config = super().get_config()
        config["cropping"] = self.cropping
        return config


class Cropping2D(_Cropping):
    """Crops images along their height and width.

    Args:
        cropping: an int (the same everywhere), ``(symmetric_height_crop,
            symmetric_width_crop)`` or ``((top_crop, bottom_crop), (left_crop, right_crop))``.
        data_format: ``"channels_last"`` (default, ``(batch, height, width,
            channels)``) or ``"channels_first"`` (``(batch, channels, height, width)``).

    Example:
        >>> import numpy as np
        >>> Cropping2D(cropping=((1, 0), (2, 2)))(np.ones((2, 4, 6, 3))).shape
        (2, 3, 2, 3)
    """

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.cropping = standardize_pairs(cropping, "cropping")
        self._pairs = self.cropping
        self.input_spec = InputSpec(ndim=4)

    def get_config(self):
        config = super().get_config()
        config.update(cropping=self.cropping, data_format=self.data_format)
        return config
