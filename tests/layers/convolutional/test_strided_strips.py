import numpy as np
import pytest

from layers.convolutional import _im2col, _runs, _strided_strips


@pytest.mark.parametrize("shape, kernel_size, strides, padding", [
    ((3, 8, 8, 16), (3, 3), (2, 2), "same"),  # even sizes: the odd 'same' pad at the end
    ((3, 7, 9, 16), (3, 3), (2, 2), "same"),  # odd sizes: one pad each side
    ((3, 7, 9, 16), (3, 3), (2, 2), "valid"),
    ((2, 9, 8, 16), (2, 4), (3, 2), "same"),  # even kernel, uneven strides
    ((2, 11, 10, 16), (5, 3), (2, 3), "valid"),  # taps beyond one phase
    ((2, 6, 7, 16), (3, 1), (2, 2), "same"),  # one kernel column: a column stride larger than the kernel
])
@pytest.mark.parametrize("threads, run_bytes", [(1, 1), (1, 1 << 30), (2, 1)])
def test_strided_strips_match_im2col_forward_and_kernel_gradient(monkeypatch, shape, kernel_size, strides, padding,
                                                                  threads, run_bytes):
    # Runs of one sample and of the whole batch, one thread and two, give im2col's results.
    rng = np.random.default_rng(0)
    x, kernel = rng.normal(size=shape), rng.normal(size=kernel_size + (shape[-1], 5))
    pads = _im2col.padding_pads(shape[1:-1], kernel_size, strides, (1, 1), padding)
    expected, cols = _im2col._im2col_conv(x, kernel, strides, (1, 1), pads)
    grad = rng.normal(size=expected.shape)
    expected_kernel_grad = _im2col._cols_kernel_grad(cols, grad, kernel.shape)
    monkeypatch.setattr(_im2col, "STRIDED_IM2COL_BYTES", 0)  # strided strips at any size
    monkeypatch.setattr(_runs, "RUN_BYTES", run_bytes)
    monkeypatch.setattr(_runs, "num_threads", lambda: threads)
    outputs, saved = _im2col.conv(x, kernel, strides, (1, 1), pads)
    assert saved[0] == "strided strips"
    np.testing.assert_allclose(outputs, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(_im2col.conv_kernel_grad(saved, grad, kernel, strides, (1, 1), pads),
                               expected_kernel_grad, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("threads, run_bytes", [(1, 1), (1, 1 << 30), (2, 1)])
@pytest.mark.parametrize("shape, kernel_size, strides, padding", [
    ((3, 8, 8, 16), (3, 3), (2, 2), "same"), ((2, 9, 8, 16), (2, 4), (3, 2), "same"),
    ((2, 11, 10, 16), (5, 3), (2, 3), "valid"), ((2, 6, 7, 16), (3, 1), (2, 2), "same")])
def test_strided_strips_input_gradient_matches_col2im(monkeypatch, shape, kernel_size, strides, padding, threads,
                                                      run_bytes):
    rng = np.random.default_rng(0)
    kernel = rng.normal(size=kernel_size + (shape[-1], 5))
    pads = _im2col.padding_pads(shape[1:-1], kernel_size, strides, (1, 1), padding)
    out = _im2col.output_spatial(shape[1:-1], kernel_size, strides, (1, 1), pads)
    grad = rng.normal(size=(shape[0],) + out + (5,))
    expected = _im2col._col2im_conv(grad, kernel, strides, (1, 1), pads, shape[1:-1])
    calls = []
    real = _im2col.strided_strip_input_grad
    monkeypatch.setattr(_im2col, "strided_strip_input_grad", lambda *args: calls.append(1) or real(*args))
    monkeypatch.setattr(_im2col, "SAMPLE_TAPS_BYTES", 0)  # strided strips for any sample's tap products
    monkeypatch.setattr(_runs, "RUN_BYTES", run_bytes)
    monkeypatch.setattr(_runs, "num_threads", lambda: threads)
    np.testing.assert_allclose(_im2col.conv_input_grad(grad, kernel, strides, (1, 1), pads, shape[1:-1]), expected,
                               rtol=1e-10, atol=1e-10)
    assert calls


def test_unstrip_is_the_adjoint_of_phase_strips():
    rng = np.random.default_rng(1)
    kernel_size, strides, pads, out = (3, 2), (2, 3), ((1, 0), (0, 1)), (4, 3)
    x = rng.normal(size=(2, 7, 8, 3))
    strips = _strided_strips.phase_strips(x, kernel_size, strides, pads, out)
    y = rng.normal(size=strips.shape)
    assert np.isclose((strips * y).sum(), (x * _strided_strips.unstrip(y, kernel_size, strides, pads, (7, 8))).sum())


@pytest.mark.parametrize("size, route", [(16, "col2im"), (128, "strided strips")])
def test_strided_input_gradients_by_col2im_unless_a_samples_tap_products_outgrow_the_cache(monkeypatch, size, route):
    # 3x3/2 from 16 channels: 9 * 16 float32 of tap products per output position, 576 bytes; 16x16 inputs have
    # 64 positions (36 KB a sample), 128x128 inputs 4,096 (2.4 MB), past SAMPLE_TAPS_BYTES.
    kernel = np.ones((3, 3, 16, 8), "float32")
    pads = _im2col.padding_pads((size, size), (3, 3), (2, 2), (1, 1), "same")
    grad = np.ones((1, size // 2, size // 2, 8), "float32")
    routes = []
    for name in ("strided_strip_input_grad", "_col2im_conv"):
        real = getattr(_im2col, name)
        monkeypatch.setattr(_im2col, name, lambda *args, real=real, name=name: routes.append(name) or real(*args))
    _im2col.conv_input_grad(grad, kernel, (2, 2), (1, 1), pads, (size, size))
    assert routes == [{"col2im": "_col2im_conv", "strided strips": "strided_strip_input_grad"}[route]]


@pytest.mark.parametrize("batch, route", [(2, "cols"), (64, "strided strips")])
def test_strided_convolutions_keep_their_im2col_copy_up_to_its_budget(batch, route):
    # 3x3/2 from 16x16x16 to 8x8: 36 KB of windows per sample, so 2 samples fit STRIDED_IM2COL_BYTES and,
    # with the budget lowered to 1 MB, 64 do not.
    x, kernel = np.ones((batch, 16, 16, 16), "float32"), np.ones((3, 3, 16, 8), "float32")
    pads = _im2col.padding_pads((16, 16), (3, 3), (2, 2), (1, 1), "same")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_im2col, "STRIDED_IM2COL_BYTES", 1 << 20)
        assert _im2col.conv(x, kernel, (2, 2), (1, 1), pads)[1][0] == route


def test_the_strided_strips_copy_less_than_im2col():
    x = np.ones((4, 32, 32, 16), "float32")
    strips = _strided_strips.phase_strips(x, (3, 3), (2, 2), ((0, 1), (0, 1)), (16, 16))
    assert strips.size / x.size == pytest.approx(1.5 * 17 / 16)  # im2col: 9 / 4 = 2.25


@pytest.mark.parametrize("kernel_shape, strides, dilation_rate, groups", [
    ((3, 3, 8, 4), (2, 2), (1, 1), 1),  # few channels: im2col's one wider product
    ((3, 3, 16, 4), (1, 1), (1, 1), 1),  # stride 1: the stride-1 strips
    ((3, 3, 8, 4), (2, 2), (1, 1), 2),  # grouped
    ((1, 1, 16, 4), (2, 2), (1, 1), 1),  # one tap
    ((3, 16, 4), (2,), (1,), 1),  # 1D
])
def test_other_convolutions_keep_their_paths(kernel_shape, strides, dilation_rate, groups):
    assert not _im2col._strided_strips_fit(np.ones(kernel_shape), strides, dilation_rate, groups)
