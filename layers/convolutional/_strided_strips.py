"""Strided 2D convolutions by strips: the windows along the columns copied once,
the rows dealt by phase so that every kernel row reads one contiguous run.

At stride ``(sh, sw)`` output ``(i, j)`` reads padded row ``i * sh + t`` for
kernel row ``t``. ``phase_strips`` copies each padded row's column windows
(``kw * channels`` values per output column: a 1.5x copy of the input for a
3x3 kernel at stride 2, where im2col's is 2.25x) into an array
``(sh, rows per phase, samples, out columns, kw * channels)`` whose entry
``[r, q, b]`` holds padded row ``q * sh + r`` of sample ``b``. Kernel row ``t``
then reads phase ``t % sh`` from row ``t // sh`` on, for every output row and
sample at once: one contiguous block of the flat array, multiplied by one
matmul with that row's ``(kw * channels, filters)`` weights. The kernel
gradient makes the strips again; the input gradient runs the products the
other way and adds the strips back onto the input (``unstrip``), where
col2im's tap products of one sample would outgrow the cache. A run of
samples (``_runs.sample_runs``) at a time, while its strips are in cache, the
runs split between threads (``_runs.over_runs``).
"""

import math

import numpy as np

from layers.convolutional._runs import KERNEL_RUNS, over_runs, sample_runs


def phase_strips(x, kernel_size, strides, pads, out):
    """The column windows of ``x`` (``(batch, rows, cols, channels)``), rows dealt
    by phase: ``(sh, out[0] + (kh - 1) // sh, batch, out[1], kw * channels)``,
    zero where a window reads padding.

    Example:
        >>> x = np.arange(5.0).reshape(1, 1, 5, 1)
        >>> phase_strips(x, (1, 3), (1, 2), ((0, 0), (1, 1)), (1, 3))[0, 0, 0]
        array([[0., 0., 1.],
               [1., 2., 3.],
               [3., 4., 0.]])
    """
    batch, height, width, channels = x.shape
    rows = np.zeros(_shape(x, kernel_size, strides, out) + (kernel_size[1], channels), x.dtype)
    for phase, source_rows, targets in _phase_rows(height, kernel_size, strides, pads, out):
        for tap, source_cols, columns in _tap_columns(width, kernel_size, strides, pads, out):
            rows[phase, targets, :, columns, tap] = np.moveaxis(x[:, source_rows, source_cols], 0, 1)
    return rows.reshape(rows.shape[:-2] + (-1,))


def unstrip(strips, kernel_size, strides, pads, spatial):
    """The adjoint of ``phase_strips``: each strip value added back onto the input
    position it was copied from, ``(batch, *spatial, channels)``."""
    batch, channels = strips.shape[2], strips.shape[-1] // kernel_size[1]
    out = (strips.shape[1] - (kernel_size[0] - 1) // strides[0], strips.shape[3])
    strips = strips.reshape(strips.shape[:-1] + (kernel_size[1], channels))
    grad = np.zeros((batch,) + tuple(spatial) + (channels,), strips.dtype)
    for phase, source_rows, targets in _phase_rows(spatial[0], kernel_size, strides, pads, out):
        for tap, source_cols, columns in _tap_columns(spatial[1], kernel_size, strides, pads, out):
            grad[:, source_rows, source_cols] += np.moveaxis(strips[phase, targets, :, columns, tap], 0, 1)
    return grad


def strided_strip_conv(x, kernel, strides, pads, out):
    """``conv`` of ``x`` with a 2D ``kernel`` at ``strides`` (dilation 1) by ``phase_strips``."""
    (kh, kw, channels, filters), batch = kernel.shape, x.shape[0]
    outputs = np.empty((batch,) + tuple(out) + (filters,), np.result_type(x, kernel))

    def run(start, stop):
        flat = phase_strips(x[start:stop], (kh, kw), strides, pads, out).reshape(-1, kw * channels)
        z, part = np.empty((2, _count(stop - start, out), filters), outputs.dtype)
        for tap, rows in _tap_rows(stop - start, (kh, kw), strides, out):
            if tap == 0:
                np.matmul(flat[rows], kernel[tap].reshape(-1, filters), out=z)
            else:
                z += np.matmul(flat[rows], kernel[tap].reshape(-1, filters), out=part)
        outputs[start:stop] = np.moveaxis(z.reshape(out[0], stop - start, out[1], filters), 0, 1)

    over_runs(run, _runs(x, (kh, kw), strides, out))
    return outputs


def strided_strip_kernel_grad(x, grad_outputs, kernel_shape, strides, pads):
    """Gradient of ``strided_strip_conv``'s kernel: per kernel row, its block of the
    strips (made again, run by run) times the output gradient."""
    kh, kw, channels, filters = kernel_shape
    out = grad_outputs.shape[1:-1]
    dtype = np.result_type(x, grad_outputs)

    def run(start, stop):
        flat = phase_strips(x[start:stop], (kh, kw), strides, pads, out).reshape(-1, kw * channels)
        grad = np.moveaxis(grad_outputs[start:stop], 0, 1).reshape(-1, filters)
        kernel_grad = np.empty(kernel_shape, dtype)
        for tap, rows in _tap_rows(stop - start, (kh, kw), strides, out):
            kernel_grad[tap] = (grad.T @ flat[rows]).T.reshape(kw, channels, filters)
        return kernel_grad

    runs = _runs(x, (kh, kw), strides, out, KERNEL_RUNS * math.prod(kernel_shape) * np.dtype(dtype).itemsize)
    return sum(over_runs(run, runs), np.zeros(kernel_shape, dtype))


def strided_strip_input_grad(grad_outputs, kernel, strides, pads, spatial):
    """Gradient of ``strided_strip_conv``'s input of spatial size ``spatial``: per
    kernel row, the output gradient times its weights added onto that row's block
    of zero strips, which ``unstrip`` adds back onto the input."""
    (kh, kw, channels, filters), batch = kernel.shape, grad_outputs.shape[0]
    out = grad_outputs.shape[1:-1]
    grad = np.empty((batch,) + tuple(spatial) + (channels,), np.result_type(grad_outputs, kernel))

    def run(start, stop):
        g = np.moveaxis(grad_outputs[start:stop], 0, 1).reshape(-1, filters)
        strips = np.zeros(_shape(grad_outputs[start:stop], (kh, kw), strides, out) + (kw * channels,), grad.dtype)
        flat, part = strips.reshape(-1, kw * channels), np.empty((len(g), kw * channels), grad.dtype)
        for tap, rows in _tap_rows(stop - start, (kh, kw), strides, out):
            flat[rows] += np.matmul(g, kernel[tap].reshape(-1, filters).T, out=part)
        grad[start:stop] = unstrip(strips, (kh, kw), strides, pads, spatial)

    over_runs(run, _runs(grad, (kh, kw), strides, out))
    return grad


def _shape(x, kernel_size, strides, out):
    """``phase_strips``' leading axes for the samples of ``x``."""
    return (strides[0], out[0] + (kernel_size[0] - 1) // strides[0], x.shape[0], out[1])


def _count(samples, out):
    return out[0] * samples * out[1]


def _tap_rows(samples, kernel_size, strides, out):
    """``(kernel row, slice of the flat strips)`` it reads for every output position,
    laid out ``(out rows, samples, out cols)``."""
    phase_rows, block = out[0] + (kernel_size[0] - 1) // strides[0], samples * out[1]
    for tap in range(kernel_size[0]):
        start = (tap % strides[0]) * phase_rows * block + (tap // strides[0]) * block
        yield tap, slice(start, start + _count(samples, out))


def _phase_rows(height, kernel_size, strides, pads, out):
    """``(phase, input rows, strip rows)`` per phase: strip row ``q`` of phase ``r``
    is padded row ``q * sh + r``, input row ``q * sh + r - top``."""
    stride, top = strides[0], pads[0][0]
    phase_rows = out[0] + (kernel_size[0] - 1) // stride
    for phase in range(stride):
        first = max(0, -((phase - top) // stride))
        last = min(phase_rows, (height - 1 + top - phase) // stride + 1)
        if first < last:
            yield phase, slice(first * stride + phase - top, (last - 1) * stride + phase - top + 1, stride), \
                slice(first, last)


def _tap_columns(width, kernel_size, strides, pads, out):
    """``(tap, input columns, output columns)`` per kernel column: output column ``j``
    reads input column ``j * sw + tap - left``."""
    stride, left = strides[1], pads[1][0]
    for tap in range(kernel_size[1]):
        shift = tap - left
        first = max(0, -(shift // stride))
        last = min(out[1], (width - 1 - shift) // stride + 1)
        if first < last:
            yield tap, slice(first * stride + shift, (last - 1) * stride + shift + 1, stride), slice(first, last)


def _runs(x, kernel_size, strides, out, least_bytes=0):
    """``sample_runs`` of ``x`` by the bytes of one sample's strips."""
    per_sample = strides[0] * (out[0] + (kernel_size[0] - 1) // strides[0]) * out[1] * kernel_size[1] * x.shape[-1]
    return sample_runs(x.shape[0], per_sample * x.itemsize, least_bytes)
