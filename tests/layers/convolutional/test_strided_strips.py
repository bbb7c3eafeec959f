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
