"""Image resizing as Keras 3 on jax does it (``jax.image.resize``), and its backward pass.

Each spatial axis is resampled by its interpolation matrix (``layers/_interpolation.py``);
the backward pass multiplies by the transposes. Keras' ``crop_to_aspect_ratio``
crops a centered box first and ``pad_to_aspect_ratio`` pads with ``fill_value``
first; their backward passes pad and crop the gradient back.
"""

import math

import numpy as np

from layers._interpolation import interpolation_matrix, matmul_along
from layers.reshaping._spatial import crop, zero_pad


def aspect_ratio_box(height, width, target_height, target_width, pad):
    """Keras' centered box of the target's aspect ratio: ``(top, box_height, left, box_width)``.

    When cropping (``pad=False``) the box lies inside the image; when padding,
    the image lies inside the box, ``top`` and ``left`` rows of fill on each side.
    """
    box_height = int(float(width * target_height) / target_width)
    box_width = int(float(height * target_width) / target_height)
    if pad:
        box_height, box_width = max(height, box_height), max(width, box_width)
        return int(float(box_height - height) / 2), box_height, int(float(box_width - width) / 2), box_width
    box_height, box_width = max(min(height, box_height), 1), max(min(width, box_width), 1)
    return int(float(height - box_height) / 2), box_height, int(float(width - box_width) / 2), box_width


class ImageResize:
    """Resizes the spatial ``axes`` of images to ``size``, optionally to the
    target's aspect ratio first; ``forward`` and ``backward`` side by side.

    Args:
        size: ``(height, width)`` of the outputs.
        axes: the height and width axes (negative: images may be batched or not).
        interpolation: one of ``INTERPOLATIONS``.
        antialias: widen the kernel when downscaling.
        crop_to_aspect_ratio, pad_to_aspect_ratio: Keras' options (at most one).
        fill_value: the value of the padding.
    """

    def __init__(self, size, axes, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_value=0.0):
        self.size, self.axes, self.interpolation, self.antialias = tuple(size), tuple(axes), interpolation, antialias
        self.crop_to_aspect_ratio, self.pad_to_aspect_ratio = crop_to_aspect_ratio, pad_to_aspect_ratio
        self.fill_value = fill_value

    def _pairs(self, shape):
        """(before, after) rows cropped (or padded) along each axis, for an input of ``shape``."""
        height, width = (shape[axis] for axis in self.axes)
        top, box_height, left, box_width = aspect_ratio_box(height, width, *self.size, self.pad_to_aspect_ratio)
        if self.crop_to_aspect_ratio:
            return (top, height - top - box_height), (left, width - left - box_width)
        if top > 0:  # Keras pads the height, or else the width, by the same amount on both sides
            return (top, top), (0, 0)
        return (0, 0), (left, left)

    def _matrices(self, shape):
        """The interpolation matrix of each axis (None where the size does not change)."""
        return [None if shape[axis] == size else
                interpolation_matrix(shape[axis], size, self.interpolation, self.antialias)
                for axis, size in zip(self.axes, self.size)]

    def forward(self, images):
        if self.crop_to_aspect_ratio:
            images = crop(images, self.axes, self._pairs(images.shape))
        elif self.pad_to_aspect_ratio:
            widths = [(0, 0)] * images.ndim
            for axis, pair in zip(self.axes, self._pairs(images.shape)):
                widths[axis] = pair
            images = np.pad(images, widths, constant_values=self.fill_value)
        for axis, matrix in zip(self.axes, self._matrices(images.shape)):
            if matrix is not None:
                images = matmul_along(images, axis, matrix)
        return images

    def backward(self, input_shape, grad_outputs):
        pairs = self._pairs(input_shape)
        grad = grad_outputs
        for axis, matrix in zip(self.axes, self._matrices(self._boxed_shape(input_shape, pairs))):
            if matrix is not None:
                grad = matmul_along(grad, axis, matrix.T)
        if self.crop_to_aspect_ratio:
            return zero_pad(grad, self.axes, pairs)
        if self.pad_to_aspect_ratio:
            return crop(grad, self.axes, pairs)
        return grad

    def flops(self, input_shape, output_shape):
        """2 per kernel tap of each output of each pass (rows, then columns); a pass takes the
        taps of its matrix's busiest column. 0 for ``"nearest"``, which copies values."""
        if self.interpolation == "nearest":
            return 0
        shape = self._boxed_shape(input_shape, self._pairs(input_shape))
        total = 0
        for axis, size, matrix in zip(self.axes, self.size, self._matrices(shape)):
            shape[axis] = size
            if matrix is not None:
                total += 2 * int(np.count_nonzero(matrix, axis=0).max()) * math.prod(shape)
        return total

    def _boxed_shape(self, shape, pairs):
        """The shape of the images once cropped or padded to the aspect ratio (``pairs`` from ``_pairs``)."""
        shape = list(shape)
        sign = -1 if self.crop_to_aspect_ratio else int(self.pad_to_aspect_ratio)
        for axis, (before, after) in zip(self.axes, pairs):
            shape[axis] += sign * (before + after)
        return shape
