"""Sliding windows over channels-last arrays, shared by every convolution and pooling layer.

Arrays are ``(batch, *spatial, channels)``. A window geometry is a kernel size,
strides and a dilation rate per spatial axis, and ``pads``, one ``(before,
after)`` pair per axis (``after`` may be negative: the end of the input is then
never reached by a window).

- ``windows`` views a padded input as ``(batch, *out, *kernel, channels)``
  without copying (im2col before the copy); ``col2im`` sums window values,
  laid out ``(*kernel, batch, *out, channels)``, back onto the input positions,
  looping over the kernel taps only; ``tap_targets`` gives each tap's slice
  of the input, which depthwise convolutions multiply and add tap by tap.
- ``conv`` is one (grouped) matmul of the copied windows with the kernel, or
  of the inputs with every tap's weights summed back by col2im, whichever
  intermediate is smaller; ``conv_input_grad`` and ``conv_kernel_grad`` are
  its backward pass. A transposed convolution is ``conv_input_grad`` run
  forward, and its backward is ``conv`` and ``conv_kernel_grad``.
- At stride 1 with two or more spatial axes, where the im2col copy would
  outgrow the caches (``IM2COL_BYTES``), ``conv`` and the input gradient
  copy ``strips`` instead: the windows along the last axis only, a run of
  samples at a time while they are in cache, multiplied by one matmul per tap
  of the other axes (a 3x3 kernel: a 3x copy and three products, where im2col
  copies 9x); the kernel gradient makes the strips again instead of keeping them.
  The runs are split between ``engine.num_threads()`` threads (``_runs``).
- At a larger stride, 2D convolutions of ``STRIP_MIN_CHANNELS`` or more whose
  im2col copy outgrows ``STRIDED_IM2COL_BYTES`` run forward and their kernel
  gradient by ``_strided_strips``; strided input gradients run by col2im, in
  pieces of ``COL2IM_RUN_BYTES`` that stay in cache, unless one sample's tap
  products outgrow ``SAMPLE_TAPS_BYTES`` (then by strided strips).
"""

import itertools
import math

import numpy as np

from layers.convolutional._runs import KERNEL_RUNS, over_product_shares, over_runs, sample_runs
from layers.convolutional._strided_strips import (strided_strip_conv, strided_strip_input_grad,
                                                  strided_strip_kernel_grad)

STRIP_MIN_CHANNELS = 16  # 3x3 convolutions of 1 and 3 channels measured 1.2x slower by strips than by im2col
# Up to this many bytes of windows, im2col's one product (its copy kept for the kernel gradient) beats strips:
# 3x3 convolutions whose im2col copy takes 2-8 MB trained 1.1-1.6x faster by it (fwd and both gradients).
IM2COL_BYTES = 8 << 20
# Outputs this narrow or narrower leave strips' padded rows a large share of their products: im2col up to twice
# IM2COL_BYTES beat them too (7x7 at 256 and 512 channels, 14 MB: 1.3-2x faster).
NARROW_OUTPUTS = 8
# A product to fewer channels than this runs slowly in BLAS: below it, input gradients keep strips or col2im
# (an input gradient to 1 or 3 channels took 1.5x as long by im2col; to 8 channels, 2.2x less time).
IM2COL_MIN_OUTPUTS = 8
# col2im's tap products of at most this many bytes at a time, summed back while they are in cache: a transposed
# convolution 14x14 to 28x28 at 128 channels (batch 64, 103 MB of them at once) took 124 ms whole, 94 in runs.
COL2IM_RUN_BYTES = 2 << 20
# Past this many bytes of tap products per sample, a strided input gradient runs by strided strips instead of col2im.
SAMPLE_TAPS_BYTES = 1 << 20
# Up to this many bytes of windows, a strided convolution copies them by im2col and keeps the copy for the kernel
# gradient (2.25x the input at 3x3/2, where strided strips keep the input): forward and kernel gradient measured
# 1.0-1.6x faster than strided strips on one thread, 1.0-2.7x on two (3x3/2 at 16-128 channels, 2-29 MB).
STRIDED_IM2COL_BYTES = 32 << 20


def effective_size(kernel_size, dilation_rate):
    """The span of each dilated kernel axis: ``(k - 1) * d + 1``."""
    return tuple((k - 1) * d + 1 for k, d in zip(kernel_size, dilation_rate))


def output_spatial(spatial, kernel_size, strides, dilation_rate, pads):
    """Number of window positions per axis (``None`` for an unknown size)."""
    return tuple(
        None if n is None else (n + before + after - e) // s + 1
        for n, e, s, (before, after) in zip(spatial, effective_size(kernel_size, dilation_rate), strides, pads)
    )


def padding_pads(spatial, kernel_size, strides, dilation_rate, padding):
    """The ``(before, after)`` pads of Keras' ``padding`` names on jax: none for
    ``"valid"``, all before for ``"causal"``, and lax's SAME for ``"same"``: the
    fewest pads that give ``ceil(size / stride)`` outputs, the odd one at the end."""
    pads = []
    for n, e, s in zip(spatial, effective_size(kernel_size, dilation_rate), strides):
        if padding == "valid" or n is None:
            pads.append((0, 0))
        elif padding == "causal":
            pads.append((e - 1, 0))
        else:
            total = max((-(-n // s) - 1) * s + e - n, 0)
            pads.append((total // 2, total - total // 2))
    return tuple(pads)


def transpose_pads(spatial, kernel_size, strides, dilation_rate, padding, output_padding):
    """A transposed convolution as Keras computes it on jax, written as the input
    gradient of a convolution: returns ``(pads, out_spatial)``, the pads of that
    convolution and the spatial size of its input (the transposed output).

    Keras pads the stride-dilated input by ``(left, right)`` before a valid
    convolution with the flipped kernel; that is the input gradient of a
    convolution padded by ``(span - 1 - left, span - 1 - right)``.
    """
    pads, out = [], []
    output_padding = output_padding or (None,) * len(kernel_size)
    for n, e, s, extra in zip(spatial, effective_size(kernel_size, dilation_rate), strides, output_padding):
        if padding == "valid":
            left, right = e - 1, e - 1 + (max(e, s) - e if extra is None else extra)
        else:
            total = s + e - 2 if extra is None else e + e % 2 - 2 + extra
            left = min(total - total // 2, e - 1)
            right = total - left
        pads.append((e - 1 - left, e - 1 - right))
        out.append(None if n is None else (n - 1) * s + left + right - e + 2)
    return tuple(pads), tuple(out)


def pad(x, pads, value=0.0):
    """Pads the spatial axes of ``x`` by the non-negative parts of ``pads`` (no copy without pads)."""
    widths = [(before, max(after, 0)) for before, after in pads]
    if not any(before or after for before, after in widths):
        return x
    # A filled canvas and one slice assignment: several times faster than np.pad on small images.
    shape = (x.shape[0],) + tuple(n + before + after for n, (before, after) in zip(x.shape[1:-1], widths)) + x.shape[-1:]
    canvas = np.full(shape, value, x.dtype)
    canvas[(slice(None),) + tuple(slice(before, before + n) for n, (before, _) in zip(x.shape[1:-1], widths))] = x
    return canvas


def crop(x, pads, spatial):
    """Inverse of ``pad``: the ``spatial``-sized region after the ``before`` pads."""
    index = (slice(None),) + tuple(slice(before, before + n) for (before, _), n in zip(pads, spatial))
    return x[index]


def windows(padded, kernel_size, strides, dilation_rate, out):
    """Read-only view ``(batch, *out, *kernel_size, channels)`` of a padded input:
    window position ``o`` and tap ``t`` read index ``o * stride + t * dilation``."""
    rank = len(kernel_size)
    step = padded.strides
    shape = (padded.shape[0],) + tuple(out) + tuple(kernel_size) + (padded.shape[-1],)
    view_strides = ((step[0],) + tuple(step[1 + i] * strides[i] for i in range(rank))
                    + tuple(step[1 + i] * dilation_rate[i] for i in range(rank)) + (step[-1],))
    return np.lib.stride_tricks.as_strided(padded, shape, view_strides, writeable=False)


def col2im(cols, canvas_spatial, kernel_size, strides, dilation_rate):
    """Sums window values ``cols`` of shape ``(*kernel_size, batch, *out, *channels)``
    onto a zero canvas ``(batch, *canvas_spatial, *channels)``: the adjoint of
    ``windows``, one strided add per kernel tap (taps lead, so each add reads
    contiguous memory)."""
    rank = len(kernel_size)
    out = cols.shape[rank + 1:2 * rank + 1]
    canvas = np.zeros(cols.shape[rank:rank + 1] + tuple(canvas_spatial) + cols.shape[2 * rank + 1:], cols.dtype)
    for tap, target in tap_targets(kernel_size, strides, dilation_rate, out):
        canvas[target] += cols[tap]
    return canvas


def tap_targets(kernel_size, strides, dilation_rate, out):
    """Yields ``(tap, index)`` for every kernel tap: ``index`` selects, in a
    padded input, the ``(batch, *out, channels)`` values that tap reads (the
    tap's slice of ``windows``, as a basic index that can be written through)."""
    for tap in itertools.product(*(range(k) for k in kernel_size)):
        yield tap, (slice(None),) + tuple(
            slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in zip(tap, dilation_rate, out, strides)
        )


def window_grad(grad_cols, pads, spatial, kernel_size, strides, dilation_rate):
    """Gradient of an input of spatial size ``spatial`` given the gradient of its
    padded ``windows``: col2im onto the padded input, then the pads cropped."""
    canvas = tuple(n + before + max(after, 0) for n, (before, after) in zip(spatial, pads))
    return crop(col2im(grad_cols, canvas, kernel_size, strides, dilation_rate), pads, spatial)


def conv(x, kernel, strides, dilation_rate, pads, groups=1):
    """Cross-correlation of ``x`` (``(batch, *spatial, in)``) with ``kernel``
    (``(*kernel_size, in // groups, out)``): returns ``(outputs, saved)``, outputs
    ``(batch, *out_spatial, out)`` and what ``conv_kernel_grad`` needs.

    Of the two ways to write it as one matmul, the one with the smaller
    intermediate runs: the im2col copy of the inputs' windows times the kernel
    (``taps * in`` values per output position, a view without a copy for 1x1
    kernels at stride 1), or, at stride 1 with fewer outputs than inputs, each
    input times every tap's weights (``taps * out`` values per position) added
    back onto the outputs, which is the input gradient of the convolution by
    the flipped kernel. Other stride-1 convolutions run by ``strips``.
    """
    small = groups == 1 and _im2col_fits(x, kernel, strides, dilation_rate, pads)
    if (_stride_one(strides, groups) and kernel.shape[-1] < kernel.shape[-2] and kernel[..., 0, 0].size > 1
            and not small):
        out = output_spatial(x.shape[1:-1], kernel.shape[:-2], strides, dilation_rate, pads)
        flipped, flipped_pads = _flipped(kernel, dilation_rate, pads)
        return _col2im_conv(x, flipped, strides, dilation_rate, flipped_pads, out, groups), ("inputs", x)
    if not small and _strips_fit(kernel, strides, groups):
        return _strip_conv(x, kernel, dilation_rate, pads), ("strips", x)
    if not small and _strided_strips_fit(kernel, strides, dilation_rate, groups):
        out = output_spatial(x.shape[1:-1], kernel.shape[:-2], strides, dilation_rate, pads)
        return strided_strip_conv(x, kernel, strides, pads, out), ("strided strips", x)
    outputs, cols = _im2col_conv(x, kernel, strides, dilation_rate, pads, groups)
    return outputs, ("cols", cols)


def conv_input_grad(grad_outputs, kernel, strides, dilation_rate, pads, spatial, groups=1):
    """Gradient of ``conv``'s input of spatial size ``spatial`` given the gradient
    of its outputs, as one matmul: the output gradient times every tap's weights
    added back onto the inputs (col2im), or, at stride 1, the convolution of the
    output gradient by the flipped kernel: by strips when they fit it and the
    input has two or more channels (3x3 from 2-16 channels to 16-64 measured
    1.3-2.1x faster than col2im; from 1 channel 2-3x slower), else by its im2col
    copy when that is no larger or none (it reads and writes less than col2im's adds). At a larger stride,
    col2im in runs of ``COL2IM_RUN_BYTES`` where one sample's tap products take at most ``SAMPLE_TAPS_BYTES``
    (measured 1.0-1.4x faster than strided strips on one thread, 1.0-2.7x on two), else strided strips
    where they fit (a 4x4/2 transposed convolution 14x14 to 28x28 at 128 channels, 1.6 MB a sample: 1.1x)."""
    if _stride_one(strides, groups):
        flipped, flipped_pads = _flipped(kernel, dilation_rate, pads)
        small = _im2col_fits(grad_outputs, flipped, strides, dilation_rate, flipped_pads)
        if not small and _strips_fit(flipped, strides, groups) and kernel.shape[-2] > 1:
            return _strip_conv(grad_outputs, flipped, dilation_rate, flipped_pads)
        if kernel.shape[-1] <= kernel.shape[-2] or kernel[..., 0, 0].size == 1 or small:
            return _im2col_conv(grad_outputs, flipped, strides, dilation_rate, flipped_pads, groups)[0]
    if (_strided_strips_fit(kernel, strides, dilation_rate, groups)
            and _sample_taps_bytes(grad_outputs, kernel, groups) > SAMPLE_TAPS_BYTES):
        return strided_strip_input_grad(grad_outputs, kernel, strides, pads, spatial)
    return _col2im_conv(grad_outputs, kernel, strides, dilation_rate, pads, spatial, groups)


def _sample_taps_bytes(grad_outputs, kernel, groups):
    """The bytes of col2im's tap products (every tap's contribution) for one sample of ``grad_outputs``."""
    positions = grad_outputs[:1].size // kernel.shape[-1]
    return positions * groups * kernel[..., 0].size * np.result_type(grad_outputs, kernel).itemsize


def conv_kernel_grad(saved, grad_outputs, kernel, strides, dilation_rate, pads):
    """Gradient of ``conv``'s kernel given what ``conv`` saved: ``cols^T @ grad_outputs``
    per group, the strips' products, or, for the flipped form, the flipped
    kernel's gradient flipped back."""
    form, array = saved
    if form == "inputs":
        flipped, flipped_pads = _flipped(kernel, dilation_rate, pads)
        cols = _im2col_conv(grad_outputs, flipped, strides, dilation_rate, flipped_pads)[1]
        return _flipped(_cols_kernel_grad(cols, array, flipped.shape), dilation_rate, pads)[0]
    if form == "strips":
        return _strip_kernel_grad(array, grad_outputs, kernel.shape, dilation_rate, pads)
    if form == "strided strips":
        return strided_strip_kernel_grad(array, grad_outputs, kernel.shape, strides, pads)
    return _cols_kernel_grad(array, grad_outputs, kernel.shape)


def _stride_one(strides, groups):
    """Whether the convolution has an adjoint form (``_flipped``): stride 1, one group."""
    return groups == 1 and max(strides) == 1


def _flipped(kernel, dilation_rate, pads):
    """The kernel of the adjoint stride-1 convolution (taps reversed, in and out
    swapped) and its pads: a span-1 window less the original pads on each side."""
    rank = kernel.ndim - 2
    flipped = np.swapaxes(kernel[(slice(None, None, -1),) * rank], -1, -2)
    spans = effective_size(kernel.shape[:-2], dilation_rate)
    return flipped, tuple((span - 1 - before, span - 1 - after) for span, (before, after) in zip(spans, pads))


def _strips_fit(kernel, strides, groups):
    """Whether ``_strip_conv`` can run for ``kernel``: stride 1, one group, two or
    more spatial axes, more than one tap, and at least ``STRIP_MIN_CHANNELS`` input
    channels (with fewer, im2col's one wider product is faster). Callers take
    im2col instead where its copy is small (``_im2col_fits``)."""
    return (_stride_one(strides, groups) and kernel.ndim > 3 and kernel[..., 0, 0].size > 1
            and kernel.shape[-2] >= STRIP_MIN_CHANNELS)


def _im2col_fits(x, kernel, strides, dilation_rate, pads):
    """Whether the im2col copy of ``x``'s windows for ``kernel`` takes at most
    ``IM2COL_BYTES`` (twice that for outputs of ``NARROW_OUTPUTS`` or fewer along
    the last axis; ``STRIDED_IM2COL_BYTES`` at a larger stride) and the product has
    ``IM2COL_MIN_OUTPUTS`` or more output channels: its one product then runs
    faster than strips or col2im."""
    if kernel.shape[-1] < IM2COL_MIN_OUTPUTS:
        return False
    out = output_spatial(x.shape[1:-1], kernel.shape[:-2], strides, dilation_rate, pads)
    cols_bytes = x.shape[0] * math.prod(out) * kernel[..., 0].size * x.itemsize
    if max(strides) > 1:
        return cols_bytes <= STRIDED_IM2COL_BYTES
    return cols_bytes <= IM2COL_BYTES * (2 if out[-1] <= NARROW_OUTPUTS else 1)


def _strided_strips_fit(kernel, strides, dilation_rate, groups):
    """Whether ``_strided_strips`` runs for ``kernel``: a 2D kernel of more than one
    tap at a stride above 1 (dilation 1: Keras allows no other), one group, at
    least ``STRIP_MIN_CHANNELS`` input channels."""
    return (groups == 1 and kernel.ndim == 4 and max(strides) > 1 and max(dilation_rate) == 1
            and kernel[..., 0, 0].size > 1 and kernel.shape[-2] >= STRIP_MIN_CHANNELS)


def strips(x, kernel_size, dilation_rate, pads, out):
    """The windows of ``x`` along its last spatial axis only, copied:
    ``(batch, *padded leading axes, out[-1], kernel_size[-1] * channels)``.

    A stride-1 convolution reads its windows from these rows at fixed flat
    offsets (one per tap of the leading axes), so the copy is ``kernel_size[-1]``
    times the input where im2col's is ``prod(kernel_size)`` times.

    Example:
        >>> x = np.arange(4.0).reshape(1, 1, 4, 1)
        >>> strips(x, (1, 3), (1, 1), ((0, 0), (1, 1)), (1, 4))[0, 0]
        array([[0., 0., 1.],
               [0., 1., 2.],
               [1., 2., 3.],
               [2., 3., 0.]])
    """
    lead = tuple(n + before + max(after, 0) for n, (before, after) in zip(x.shape[1:-2], pads[:-1]))
    taps, dilation, before, width = kernel_size[-1], dilation_rate[-1], pads[-1][0], x.shape[-2]
    rows = np.zeros((x.shape[0],) + lead + (out[-1], taps, x.shape[-1]), x.dtype)
    inside = (slice(None),) + tuple(slice(b, b + n) for n, (b, _) in zip(x.shape[1:-2], pads[:-1]))
    for tap in range(taps):
        shift = tap * dilation - before  # output column j reads input column j + shift
        first, last = max(0, -shift), min(out[-1], width - shift)
        if first < last:
            rows[inside + (slice(first, last), tap)] = x[..., first + shift:last + shift, :]
    return rows.reshape(rows.shape[:-2] + (taps * x.shape[-1],))


def _strip_offsets(rows, kernel_size, dilation_rate):
    """``(tap, offset)`` per tap of the leading kernel axes: the flat row of ``rows``
    (``strips``' output) that the tap reads for output row 0."""
    lead = len(kernel_size) - 1
    steps = [math.prod(rows.shape[2 + axis:-1]) for axis in range(lead)]
    for tap in itertools.product(*(range(k) for k in kernel_size[:-1])):
        yield tap, sum(t * d * step for t, d, step in zip(tap, dilation_rate, steps))


def _strip_chunks(x, kernel_size, pads, out, least_bytes=0):
    """``sample_runs`` of ``x``'s ``strips``: each run's strips are made and
    multiplied while they are still in the core's cache."""
    lead = math.prod(n + before + max(after, 0) for n, (before, after) in zip(x.shape[1:-2], pads[:-1]))
    return sample_runs(x.shape[0], lead * out[-1] * kernel_size[-1] * x.shape[-1] * x.itemsize, least_bytes)


def _strip_conv(x, kernel, dilation_rate, pads):
    """Stride-1 ``conv`` over ``strips``, a run of samples at a time: one matmul
    per tap of the leading kernel axes, each of a contiguous run of rows (no
    copy) with that tap's ``(kernel_size[-1] * in, out)`` weights, added up.
    The flat rows include the padded leading positions no output reads, which
    are cropped."""
    kernel_size, filters = kernel.shape[:-2], kernel.shape[-1]
    out = output_spatial(x.shape[1:-1], kernel_size, (1,) * len(kernel_size), dilation_rate, pads)
    outputs = np.empty((x.shape[0],) + out + (filters,), np.result_type(x, kernel))
    crop_rows = (slice(None),) + tuple(slice(n) for n in out[:-1])

    def run(start, stop):
        rows = strips(x[start:stop], kernel_size, dilation_rate, pads, out)
        flat = rows.reshape(-1, rows.shape[-1])
        offsets = list(_strip_offsets(rows, kernel_size, dilation_rate))
        count = flat.shape[0] - offsets[-1][1]  # the rows past it only feed cropped positions
        z = np.empty((flat.shape[0], filters), outputs.dtype)
        part = np.empty((count, filters), outputs.dtype)
        for i, (tap, offset) in enumerate(offsets):
            weights = kernel[tap].reshape(-1, filters)
            if i == 0:
                np.matmul(flat[offset:offset + count], weights, out=z[:count])
            else:
                z[:count] += np.matmul(flat[offset:offset + count], weights, out=part)
        outputs[start:stop] = z.reshape(rows.shape[:-1] + (filters,))[crop_rows]

    over_runs(run, _strip_chunks(x, kernel_size, pads, out))
    return outputs


def _strip_kernel_grad(x, grad_outputs, kernel_shape, dilation_rate, pads):
    """Gradient of ``_strip_conv``'s kernel, the strips made again run by run:
    per tap of the leading axes, the output gradient (zero on the cropped
    positions) times its run of rows."""
    kernel_size, filters = kernel_shape[:-2], kernel_shape[-1]
    out = grad_outputs.shape[1:-1]
    dtype = np.result_type(x, grad_outputs)
    inside = (slice(None),) + tuple(slice(n) for n in out[:-1])

    def run(start, stop):
        rows = strips(x[start:stop], kernel_size, dilation_rate, pads, out)
        grad = np.zeros(rows.shape[:-1] + (filters,), grad_outputs.dtype)
        grad[inside] = grad_outputs[start:stop]
        flat, flat_grad = rows.reshape(-1, rows.shape[-1]), grad.reshape(-1, filters)
        offsets = list(_strip_offsets(rows, kernel_size, dilation_rate))
        count = flat.shape[0] - offsets[-1][1]
        kernel_grad = np.empty(kernel_shape, dtype)
        for tap, offset in offsets:
            kernel_grad[tap] = (flat_grad[:count].T @ flat[offset:offset + count]).T.reshape(kernel_shape[-3:])
        return kernel_grad

    runs = _strip_chunks(x, kernel_size, pads, out, KERNEL_RUNS * math.prod(kernel_shape) * np.dtype(dtype).itemsize)
    return sum(over_runs(run, runs), np.zeros(kernel_shape, dtype))


def _im2col_conv(x, kernel, strides, dilation_rate, pads, groups=1):
    """``conv`` by im2col: returns ``(outputs, cols)``, the im2col matrices
    ``(groups, positions, taps * in // groups)``; a view of ``x`` for a 1x1
    kernel at stride 1 in one group, else copied and multiplied in
    ``product_shares`` of the batch."""
    kernel_size = kernel.shape[:-2]
    padded = pad(x, pads)
    out = output_spatial(x.shape[1:-1], kernel_size, strides, dilation_rate, pads)
    view = windows(padded, kernel_size, strides, dilation_rate, out)
    view = np.moveaxis(view.reshape(view.shape[:-1] + (groups, x.shape[-1] // groups)), -2, 0)
    batch, per_sample, width = x.shape[0], math.prod(out), kernel[..., 0].size
    weights = _grouped_kernel(kernel, groups)
    if groups == 1 and width == x.shape[-1] and max(strides) == 1 and padded is x:
        cols = view.reshape(1, batch * per_sample, width)  # the inputs themselves, no copy
    else:
        cols = np.empty((groups, batch * per_sample, width), x.dtype)
    outputs = np.empty((groups, batch * per_sample, weights.shape[-1]), np.result_type(x, kernel))

    def run(start, stop):
        rows = slice(start * per_sample, stop * per_sample)
        if not np.may_share_memory(cols, x):
            np.copyto(cols[:, rows].reshape(view[:, start:stop].shape), view[:, start:stop])
        np.matmul(cols[:, rows], weights, out=outputs[:, rows])

    over_product_shares(run, batch, 2 * cols.size * weights.shape[-1])
    return np.moveaxis(outputs, 0, 1).reshape((batch,) + out + (kernel.shape[-1],)), cols


def _col2im_conv(grad_outputs, kernel, strides, dilation_rate, pads, spatial, groups=1):
    """``conv_input_grad`` by col2im: one matmul per group giving every kernel tap's
    contribution at once, summed back onto the input, in ``product_shares`` of the batch,
    each share in runs whose tap products take up to ``COL2IM_RUN_BYTES``."""
    kernel_size, (in_per_group, filters) = kernel.shape[:-2], kernel.shape[-2:]
    rank, taps = len(kernel_size), math.prod(kernel_size)
    per_group = kernel.reshape(taps, in_per_group, groups, filters // groups).transpose(2, 3, 0, 1)
    per_group = per_group.reshape(groups, -1, taps * in_per_group)
    batch = grad_outputs.shape[0]
    grad = np.empty((batch,) + tuple(spatial) + (groups * in_per_group,), np.result_type(grad_outputs, kernel))
    run_samples = max(1, COL2IM_RUN_BYTES // max(_sample_taps_bytes(grad_outputs, kernel, groups), 1))

    def run(start, stop):
        for first in range(start, stop, run_samples):
            one_run(first, min(first + run_samples, stop))

    def one_run(start, stop):
        part = grad_outputs[start:stop]
        grad_cols = np.matmul(_grouped_outputs(part, groups), per_group)
        grad_cols = grad_cols.reshape((groups,) + part.shape[:-1] + kernel_size + (in_per_group,))
        # (*kernel_size, batch, *out, groups, in_per_group): the taps lead, as col2im wants
        grad_cols = np.moveaxis(grad_cols, (*range(rank + 2, 2 * rank + 2), 0), (*range(rank), 2 * rank + 1))
        part_grad = window_grad(grad_cols, pads, spatial, kernel_size, strides, dilation_rate)
        grad[start:stop] = part_grad.reshape(part_grad.shape[:1 + rank] + (groups * in_per_group,))

    over_product_shares(run, batch, 2 * grad_outputs.size * taps * in_per_group)
    return grad


def _cols_kernel_grad(cols, grad_outputs, kernel_shape):
    """Gradient of ``_im2col_conv``'s kernel: ``cols^T @ grad_outputs`` per group, the
    ``product_shares`` of the batch added up."""
    groups, batch = cols.shape[0], grad_outputs.shape[0]
    per_sample = cols.shape[1] // max(batch, 1)
    grouped = _grouped_outputs(grad_outputs, groups)

    def run(start, stop):
        rows = slice(start * per_sample, stop * per_sample)
        return np.matmul(np.swapaxes(cols[:, rows], 1, 2), grouped[:, rows])

    grad = sum(over_product_shares(run, batch, 2 * cols.size * grad_outputs.shape[-1] // groups))
    grad = grad.reshape((groups,) + tuple(kernel_shape[:-1]) + (-1,))
    return np.moveaxis(grad, 0, -2).reshape(kernel_shape)


def _grouped_kernel(kernel, groups):
    """``(*kernel_size, in_per_group, out)`` as ``(groups, taps * in_per_group, out_per_group)``."""
    split = kernel.reshape(kernel.shape[:-1] + (groups, -1))
    return np.moveaxis(split, -2, 0).reshape(groups, kernel[..., 0].size, -1)


def _grouped_outputs(outputs, groups):
    """``(batch, *out, channels)`` as ``(groups, positions, channels_per_group)``."""
    positions = math.prod(outputs.shape[:-1])
    return np.moveaxis(outputs.reshape(positions, groups, outputs.shape[-1] // groups), 1, 0)
