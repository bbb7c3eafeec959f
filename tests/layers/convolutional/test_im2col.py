import gc
import sys

import numpy as np
import pytest

from layers.convolutional import Conv2D, _im2col, _runs


@pytest.mark.parametrize("kernel_size, strides, dilation_rate", [((3, 2), (1, 1), (1, 1)),
                                                                 ((2, 3), (2, 3), (1, 1)),
                                                                 ((2, 2), (1, 1), (3, 2))])
def test_col2im_is_the_adjoint_of_windows(kernel_size, strides, dilation_rate):
    # <windows(x), c> == <x, col2im(c)> for all x and c.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 9, 8, 3))
    out = _im2col.output_spatial(x.shape[1:-1], kernel_size, strides, dilation_rate, ((0, 0), (0, 0)))
    view = _im2col.windows(x, kernel_size, strides, dilation_rate, out)
    cols = rng.normal(size=kernel_size + (2,) + out + (3,))  # taps leading
    adjoint = _im2col.col2im(cols, x.shape[1:-1], kernel_size, strides, dilation_rate)
    tap_major = np.moveaxis(view, (3, 4), (0, 1))
    np.testing.assert_allclose(np.sum(tap_major * cols), np.sum(x * adjoint))


def test_same_pads_put_the_odd_pad_at_the_end():
    # lax's SAME: 7 inputs, stride 2, kernel 4 -> 4 outputs need 3 pads: 1 before, 2 after.
    assert _im2col.padding_pads((7,), (4,), (2,), (1,), "same") == ((1, 2),)
    assert _im2col.padding_pads((6,), (3,), (1,), (2,), "causal") == ((4, 0),)


def test_conv_forward_and_backward_do_no_python_work_per_pixel(monkeypatch):
    """A design check: Conv2D's forward + backward is three matmuls per kernel row
    (by strips), and the Python lines it runs do not depend on the image size
    (the loops are over kernel taps and over runs of samples that fill
    ``RUN_BYTES``, one run for both sizes here)."""
    monkeypatch.setattr(_im2col, "IM2COL_BYTES", 0)  # strips at any size
    layer = Conv2D(16, 3, padding="same", strides=1)
    small, large = np.ones((4, 8, 8, 16), "float32"), np.ones((4, 16, 16, 16), "float32")
    layer(small)
    matmuls = []
    real_matmul = np.matmul

    def counting_matmul(*args, **kwargs):
        matmuls.append(args[0].shape)
        return real_matmul(*args, **kwargs)

    monkeypatch.setattr(_im2col.np, "matmul", counting_matmul)

    def lines_run(x):
        count = [0]

        def tracer(frame, event, arg):
            count[0] += event == "line"
            return tracer

        # No collection while tracing: one can run Python finalizers of earlier tests' objects, lines of
        # neither count (the likely cause of a two-line difference seen once in a pytest-xdist worker).
        gc.collect()
        gc.disable()
        sys.settrace(tracer)
        try:
            outputs, cache = layer.forward(x)
            layer.backward(cache, np.ones_like(outputs))
        finally:
            sys.settrace(None)
            gc.enable()
        return count[0]

    assert lines_run(small) == lines_run(large)
    assert len(matmuls) == 12  # forward and input gradient, three kernel rows each, for each image size


@pytest.mark.parametrize("shape, kernel_size, dilation_rate, pads", [
    ((3, 6, 7, 16), (3, 3), (1, 1), ((1, 1), (1, 1))),
    ((3, 6, 7, 16), (3, 2), (2, 1), ((0, 0), (2, 1))),
    ((2, 6, 7, 16), (3, 3), (1, 1), ((2, -1), (1, -1))),
    ((2, 5, 6, 4, 16), (3, 2, 2), (1, 1, 1), ((1, 1), (0, 1), (1, 0))),
])
def test_strips_match_im2col_in_runs_of_samples(monkeypatch, shape, kernel_size, dilation_rate, pads):
    # Runs of one sample (a tiny chunk size) and of the whole batch give im2col's outputs and kernel gradient.
    rng = np.random.default_rng(0)
    x, kernel = rng.normal(size=shape), rng.normal(size=kernel_size + (shape[-1], 24))
    strides = (1,) * len(kernel_size)
    expected, cols = _im2col._im2col_conv(x, kernel, strides, dilation_rate, pads)
    grad = rng.normal(size=expected.shape)
    expected_kernel_grad = _im2col._cols_kernel_grad(cols, grad, kernel.shape)
    monkeypatch.setattr(_im2col, "IM2COL_BYTES", 0)  # strips at any size
    for chunk_bytes in (1, 1 << 30):
        monkeypatch.setattr(_runs, "RUN_BYTES", chunk_bytes)
        outputs, saved = _im2col.conv(x, kernel, strides, dilation_rate, pads)
        assert saved[0] == "strips"
        np.testing.assert_allclose(outputs, expected, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(_im2col.conv_kernel_grad(saved, grad, kernel, strides, dilation_rate, pads),
                                   expected_kernel_grad, rtol=1e-10, atol=1e-10)
    assert len(_im2col._strip_chunks(x, kernel_size, pads, expected.shape[1:-1])) == 1


@pytest.mark.parametrize("filters, large", [(8, "inputs"), (16, "strips"), (64, "strips")])
def test_small_windows_run_by_im2col_and_large_ones_by_strips_or_col2im(filters, large):
    # im2col up to IM2COL_BYTES of windows (twice that for outputs 8 wide or less); above, fewer outputs than
    # inputs run by col2im ("inputs"), others by strips.
    def route(batch, size):
        x, kernel = np.ones((batch, size, size, 16), "float32"), np.ones((3, 3, 16, filters), "float32")
        return _im2col.conv(x, kernel, (1, 1), (1, 1), ((1, 1), (1, 1)))[1][0]

    window_bytes = 9 * 16 * 4  # per output position
    narrow = _im2col.IM2COL_BYTES * 2 // (window_bytes * 64)  # samples of 8x8 that fit
    wide = _im2col.IM2COL_BYTES // (window_bytes * 256)  # samples of 16x16 that fit
    assert (route(narrow, 8), route(narrow + 1, 8)) == ("cols", large)
    assert (route(wide, 16), route(wide + 1, 16)) == ("cols", large)


def test_products_to_few_channels_never_take_im2col_by_size():
    grad, kernel = np.ones((1, 4, 4, 16)), np.ones((3, 3, 16, _im2col.IM2COL_MIN_OUTPUTS))
    assert _im2col._im2col_fits(grad, kernel, (1, 1), (1, 1), ((1, 1), (1, 1)))
    assert not _im2col._im2col_fits(grad, kernel[..., 1:], (1, 1), (1, 1), ((1, 1), (1, 1)))


def test_thin_inputs_keep_im2col():
    x, kernel = np.ones((2, 8, 8, 3)), np.ones((3, 3, 3, 16))
    assert _im2col.conv(x, kernel, (1, 1), (1, 1), ((1, 1), (1, 1)))[1][0] == "cols"


@pytest.mark.parametrize("in_channels, strips", [(3, True), (1, False)])
def test_input_gradient_of_few_channels_by_strips_matches_col2im(monkeypatch, in_channels, strips):
    rng = np.random.default_rng(0)
    kernel, grad = rng.normal(size=(3, 3, in_channels, 16)), rng.normal(size=(2, 6, 7, 16))
    pads = ((1, 1), (1, 1))
    expected = _im2col._col2im_conv(grad, kernel, (1, 1), (1, 1), pads, (6, 7))
    calls = []
    monkeypatch.setattr(_im2col, "_strip_conv", lambda *args, real=_im2col._strip_conv: calls.append(1) or real(*args))
    np.testing.assert_allclose(_im2col.conv_input_grad(grad, kernel, (1, 1), (1, 1), pads, (6, 7)), expected,
                               rtol=1e-10, atol=1e-10)
    assert bool(calls) == strips


@pytest.mark.parametrize("kernel_size, strides, padding", [((4, 4), (2, 2), "same"), ((3, 3), (2, 2), "valid"),
                                                           ((5, 5), (1, 1), "same")])
def test_col2im_in_runs_of_samples_adds_up_as_in_one_piece(monkeypatch, kernel_size, strides, padding):
    # COL2IM_RUN_BYTES only bounds how many samples' tap products exist at once: runs of one sample or of
    # three (over a batch of 7, the last run shorter) give the whole batch's input gradient.
    rng = np.random.default_rng(0)
    kernel = rng.normal(size=kernel_size + (5, 6))
    spatial = (9, 8)
    pads = _im2col.padding_pads(spatial, kernel_size, strides, (1, 1), padding)
    out = _im2col.output_spatial(spatial, kernel_size, strides, (1, 1), pads)
    grad_outputs = rng.normal(size=(7,) + out + (6,))
    whole = _im2col._col2im_conv(grad_outputs, kernel, strides, (1, 1), pads, spatial)
    sample_bytes = np.prod(out) * np.prod(kernel_size) * 5 * 8
    for samples in (1, 3):
        monkeypatch.setattr(_im2col, "COL2IM_RUN_BYTES", samples * sample_bytes)
        np.testing.assert_allclose(_im2col._col2im_conv(grad_outputs, kernel, strides, (1, 1), pads, spatial), whole,
                                   rtol=1e-12, atol=1e-12)
