"""Image resizing as Keras 3 on jax does it (``jax.image.resize``), and its backward pass.

Resizing one spatial axis from ``m`` to ``n`` pixels is a fixed ``(m, n)`` matrix:
output pixel ``j`` has its center at input coordinate ``(j + 0.5) * m / n - 0.5``
and takes kernel weights from the input pixels around it, normalized to sum to 1.
So the forward pass multiplies each spatial axis by its matrix, and the backward
pass by the transposes. Keras' ``crop_to_aspect_ratio`` crops a centered box first
and ``pad_to_aspect_ratio`` pads with ``fill_value`` first; their backward passes
pad and crop the gradient back.
"""

import functools
import math

import numpy as np

from layers.reshaping._spatial import crop, zero_pad

INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "lanczos3", "lanczos5")


def _triangle(x):
    return np.maximum(0.0, 1.0 - x)


def _keys_cubic(x):
    # Keys' cubic convolution kernel with a = -0.5 (jax's "cubic").
    inner = ((1.5 * x - 2.5) * x) * x + 1.0
    outer = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return np.where(x >= 2.0, 0.0, np.where(x >= 1.0, outer, inner))


def _lanczos(radius):
    def kernel(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            y = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius) / (np.pi ** 2 * x ** 2)
        return np.where(x > radius, 0.0, np.where(x > 1e-3, y, 1.0))

    return kernel


_KERNELS = {"bilinear": _triangle, "bicubic": _keys_cubic, "lanczos3": _lanczos(3), "lanczos5": _lanczos(5)}


@functools.lru_cache(maxsize=256)
def interpolation_matrix(in_size, out_size, interpolation, antialias=False):
    """The read-only ``(in_size, out_size)`` float64 matrix resizing one axis.

    ``"nearest"`` takes input pixel ``floor((j + 0.5) * in_size / out_size)``
    (computed in float32, as jax does); the others weigh the pixels around
    each output's center with their kernel, widened by the downscaling factor
    when ``antialias``, and give 0 to outputs centered outside the input.
    """
    if interpolation == "nearest":
        centers = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * np.float32(in_size)
        sources = np.floor(centers / np.float32(out_size)).astype(np.int64)
        weights = np.zeros((in_size, out_size))
        weights[sources, np.arange(out_size)] = 1.0
    else:
        inv_scale = in_size / out_size
        kernel_scale = max(inv_scale, 1.0) if antialias else 1.0
        centers = (np.arange(out_size) + 0.5) * inv_scale - 0.5
        weights = _KERNELS[interpolation](np.abs(centers[None, :] - np.arange(in_size)[:, None]) / kernel_scale)
        totals = weights.sum(axis=0, keepdims=True)
        weights = np.where(np.abs(totals) > 1000.0 * np.finfo(np.float32).eps,
                           weights / np.where(totals != 0, totals, 1.0), 0.0)
        weights = np.where((centers >= -0.5) & (centers <= in_size - 0.5), weights, 0.0)
    weights.flags.writeable = False
    return weights


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
                images = _matmul_along(images, axis, matrix)
        return images

    def backward(self, input_shape, grad_outputs):
        pairs = self._pairs(input_shape)
        grad = grad_outputs
        for axis, matrix in zip(self.axes, self._matrices(self._boxed_shape(input_shape, pairs))):
            if matrix is not None:
                grad = _matmul_along(grad, axis, matrix.T)
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


def _matmul_along(x, axis, matrix):
    """``y[..., j, ...] = sum_i x[..., i, ...] * matrix[i, j]`` along ``axis``."""
    return np.moveaxis(np.tensordot(x, matrix.astype(x.dtype), axes=(axis, 0)), -1, axis)
