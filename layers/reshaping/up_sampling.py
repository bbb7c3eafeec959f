"""UpSampling1D and UpSampling2D: enlarge the spatial axes by integer factors."""

import math

import numpy as np

from engine import InputSpec, Layer
from layers._arguments import is_int, standardize_data_format, standardize_tuple
from layers._interpolation import interpolation_matrix, matmul_along
from layers.reshaping._spatial import spatial_axes

_INTERPOLATIONS = ("nearest", "bilinear")


class UpSampling1D(Layer):
    """Repeats each step of a sequence ``(batch, steps, features)`` ``size`` times.

    Args:
        size: positive integer, the upsampling factor.

    Example:
        >>> import numpy as np
        >>> UpSampling1D(size=3)(np.ones((2, 4, 5))).shape
        (2, 12, 5)
    """

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        if not is_int(size):
            raise TypeError(f"Expected an integer value for `size`, got {type(size)}.")
        if size <= 0:
            raise ValueError(f"Argument `size` should be a positive integer. Received: size={size}")
        self.size = int(size)
        self.input_spec = InputSpec(ndim=3)

    def compute_output_shape(self, input_shape):
        steps = None if input_shape[1] is None else input_shape[1] * self.size
        return (input_shape[0], steps, input_shape[2])

    def call(self, inputs, training=False):
        return np.repeat(inputs, self.size, axis=1)

    def backward(self, cache, grad_outputs):
        return _sum_repeats(grad_outputs, 1, self.size), {}

    def flops(self, input_shapes, output_shapes):
        """0: repeating steps copies values, it computes nothing."""
        return 0

    def get_config(self):
        config = super().get_config()
        config["size"] = self.size
        return config


class UpSampling2D(Layer):
    """Enlarges images by ``size = (rows, cols)`` factors.

    ``"nearest"`` repeats rows and columns; ``"bilinear"`` interpolates as
    Keras 3 on jax does (``jax.image.resize``: half-pixel centers, a triangle
    kernel, edges clamped), which is one fixed matrix per spatial axis.

    Args:
        size: an int or two positive ints, the factors for rows and columns.
        data_format: ``"channels_last"`` (default, ``(batch, rows, cols,
            channels)``) or ``"channels_first"`` (``(batch, channels, rows, cols)``).
        interpolation: ``"nearest"`` or ``"bilinear"``.

    Example:
        >>> import numpy as np
        >>> UpSampling2D(size=(2, 3), interpolation="bilinear")(np.ones((1, 2, 2, 1))).shape
        (1, 4, 6, 1)
    """

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.size = standardize_tuple(size, 2, "size")
        if not isinstance(interpolation, str) or interpolation.lower() not in _INTERPOLATIONS:
            raise ValueError(
                f"Received an invalid value for `interpolation`, expected one of {_INTERPOLATIONS} "
                f"(Keras' 'bicubic', 'lanczos3' and 'lanczos5' are not implemented). "
                f"Received: interpolation={interpolation!r}"
            )
        self.interpolation = interpolation.lower()
        self.input_spec = InputSpec(ndim=4)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, factor in zip(spatial_axes(self.data_format, 4), self.size):
            if shape[axis] is not None:
                shape[axis] *= factor
        return tuple(shape)

    def call(self, inputs, training=False):
        for axis, factor in zip(spatial_axes(self.data_format, 4), self.size):
            if self.interpolation == "nearest":
                inputs = np.repeat(inputs, factor, axis=axis)
            else:
                size = inputs.shape[axis]
                inputs = matmul_along(inputs, axis, interpolation_matrix(size, size * factor, "bilinear"))
        return inputs

    def backward(self, cache, grad_outputs):
        for axis, factor in zip(spatial_axes(self.data_format, 4), self.size):
            if self.interpolation == "nearest":
                grad_outputs = _sum_repeats(grad_outputs, axis, factor)
            else:
                size = cache.shape[axis]
                grad_outputs = matmul_along(grad_outputs, axis, interpolation_matrix(size, size * factor, "bilinear").T)
        return grad_outputs, {}

    def flops(self, input_shapes, output_shapes):
        """0 for ``"nearest"`` (a copy); ``"bilinear"`` interpolates rows, then columns, each output
        of a pass taking 2 taps (2 multiply-adds, 4 FLOPs), whatever the matrix the code multiplies by."""
        if self.interpolation == "nearest":
            return 0
        outputs = math.prod(output_shapes[0])
        return 4 * (outputs // self.size[1] + outputs)

    def get_config(self):
        config = super().get_config()
        config.update(size=self.size, data_format=self.data_format, interpolation=self.interpolation)
        return config


def _sum_repeats(grad, axis, factor):
    """Backward of ``np.repeat(x, factor, axis)``: sums each run of ``factor`` gradients."""
    shape = grad.shape[:axis] + (grad.shape[axis] // factor, factor) + grad.shape[axis + 1:]
    return grad.reshape(shape).sum(axis=axis + 1)
