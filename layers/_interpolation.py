"""Resampling one axis of an array by a fixed matrix, as ``jax.image.resize`` (Keras 3 on jax) does.

Resizing an axis from ``m`` to ``n`` values is an ``(m, n)`` matrix: output ``j``
has its center at input coordinate ``(j + 0.5) * m / n - 0.5`` and takes
kernel weights from the inputs around it, normalized to sum to 1. The forward
pass multiplies the axis by the matrix, the backward pass by its transpose.
Resizing and UpSampling2D share it.
"""

import functools

import numpy as np

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


def matmul_along(x, axis, matrix):
    """``y[..., j, ...] = sum_i x[..., i, ...] * matrix[i, j]`` along ``axis``."""
    return np.moveaxis(np.tensordot(x, matrix.astype(x.dtype), axes=(axis, 0)), -1, axis)
