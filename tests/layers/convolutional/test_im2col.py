import sys

import numpy as np
import pytest

from layers.convolutional import Conv2D, _im2col


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
    """A design check: Conv2D's forward + backward is three matmuls, and the
    Python lines it runs do not depend on the image size (the loops, in col2im,
    are over kernel taps only)."""
    layer = Conv2D(8, 3, padding="same", strides=1)
    small, large = np.ones((8, 16, 16, 8), "float32"), np.ones((8, 32, 32, 8), "float32")
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

        sys.settrace(tracer)
        try:
            outputs, cache = layer.forward(x)
            layer.backward(cache, np.ones_like(outputs))
        finally:
            sys.settrace(None)
        return count[0]

    assert lines_run(small) == lines_run(large)
    assert len(matmuls) == 6  # forward, input gradient and kernel gradient, for each image size
