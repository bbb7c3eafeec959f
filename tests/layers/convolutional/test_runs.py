import numpy as np
import pytest
from threadpoolctl import ThreadpoolController

from layers.convolutional import _im2col, _runs


def test_sample_runs_cover_the_batch_once_with_at_least_one_sample_each(monkeypatch):
    monkeypatch.setattr(_runs, "num_threads", lambda: 1)  # runs of RUN_BYTES
    assert _runs.sample_runs(5, _runs.RUN_BYTES // 2) == [(0, 2), (2, 4), (4, 5)]
    assert _runs.sample_runs(3, 10 * _runs.RUN_BYTES) == [(0, 1), (1, 2), (2, 3)]
    assert _runs.sample_runs(0, 10) == []


def test_runs_split_between_threads_hold_blas_to_one_thread(monkeypatch):
    monkeypatch.setattr(_runs, "num_threads", lambda: 2)

    def work(start, stop):
        return stop - start, [lib["num_threads"] for lib in ThreadpoolController().select(user_api="blas").info()]

    results = _runs.over_runs(work, [(0, 3), (3, 4), (4, 6)])
    assert [size for size, _ in results] == [3, 1, 2]
    assert all(threads == [1] * len(threads) for _, threads in results)


def test_strip_convolution_split_between_threads_matches_one_thread(monkeypatch):
    rng = np.random.default_rng(0)
    x, kernel = rng.normal(size=(5, 6, 7, 16)), rng.normal(size=(3, 3, 16, 16))
    pads, grad = ((1, 1), (1, 1)), rng.normal(size=(5, 6, 7, 16))
    monkeypatch.setattr(_runs, "RUN_BYTES", 1)  # one sample per run
    monkeypatch.setattr(_im2col, "IM2COL_BYTES", 0)  # strips at any size
    monkeypatch.setattr(_runs, "num_threads", lambda: 1)
    expected, saved = _im2col.conv(x, kernel, (1, 1), (1, 1), pads)
    expected_kernel_grad = _im2col.conv_kernel_grad(saved, grad, kernel, (1, 1), (1, 1), pads)
    monkeypatch.setattr(_runs, "num_threads", lambda: 2)
    outputs, saved = _im2col.conv(x, kernel, (1, 1), (1, 1), pads)
    np.testing.assert_allclose(outputs, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_im2col.conv_kernel_grad(saved, grad, kernel, (1, 1), (1, 1), pads),
                               expected_kernel_grad, rtol=1e-12, atol=1e-12)


def test_products_below_the_threaded_size_hold_blas_to_one_thread_and_large_ones_keep_its_threads(monkeypatch):
    monkeypatch.setattr(_runs, "num_threads", lambda: 2)
    blas = ThreadpoolController().select(user_api="blas")

    def threads_in(flops):
        with _runs.blas_for(flops):
            return [lib["num_threads"] for lib in ThreadpoolController().select(user_api="blas").info()]

    with blas.limit(limits=2):
        assert set(threads_in(_runs.THREADED_FLOPS - 1)) == {1}
        assert {lib["num_threads"] for lib in blas.info()} == {2}  # given back on leaving
        assert set(threads_in(_runs.THREADED_FLOPS)) == {2}
        with pytest.raises(ZeroDivisionError), _runs.blas_for(1):
            1 / 0
        assert {lib["num_threads"] for lib in blas.info()} == {2}  # and when the product raised
    monkeypatch.setattr(_runs, "num_threads", lambda: 1)
    with blas.limit(limits=2):
        assert set(threads_in(1)) == {2}  # one thread chosen: BLAS is already held by set_num_threads, left alone


def test_an_im2col_convolution_below_the_threaded_size_gives_the_same_result_held_to_one_thread(monkeypatch):
    rng = np.random.default_rng(1)
    x, kernel, grad = rng.normal(size=(4, 6, 6, 3)), rng.normal(size=(3, 3, 3, 8)), rng.normal(size=(4, 3, 3, 8))
    pads = ((1, 0), (1, 0))
    monkeypatch.setattr(_runs, "num_threads", lambda: 1)
    expected, saved = _im2col.conv(x, kernel, (2, 2), (1, 1), pads)
    expected_grads = (_im2col.conv_input_grad(grad, kernel, (2, 2), (1, 1), pads, (6, 6)),
                      _im2col.conv_kernel_grad(saved, grad, kernel, (2, 2), (1, 1), pads))
    monkeypatch.setattr(_runs, "num_threads", lambda: 2)
    outputs, saved = _im2col.conv(x, kernel, (2, 2), (1, 1), pads)
    np.testing.assert_allclose(outputs, expected, rtol=1e-12)
    np.testing.assert_allclose(_im2col.conv_input_grad(grad, kernel, (2, 2), (1, 1), pads, (6, 6)),
                               expected_grads[0], rtol=1e-12)
    np.testing.assert_allclose(_im2col.conv_kernel_grad(saved, grad, kernel, (2, 2), (1, 1), pads),
                               expected_grads[1], rtol=1e-12)


def test_runs_are_dealt_in_one_contiguous_share_per_thread_the_caller_working_the_first(monkeypatch):
    import threading

    monkeypatch.setattr(_runs, "num_threads", lambda: 2)
    runs = [(i, i + 1) for i in range(5)]
    workers = _runs.over_runs(lambda start, stop: (start, threading.get_ident()), runs)
    assert [start for start, _ in workers] == list(range(5))
    first, second = workers[:2], workers[2:]  # shares of 2 and 3 runs
    assert {ident for _, ident in first} == {threading.get_ident()}
    assert len({ident for _, ident in second}) == 1 and second[0][1] != threading.get_ident()


def test_shares_give_each_thread_at_least_the_smallest_piece(monkeypatch):
    monkeypatch.setattr(_runs, "num_threads", lambda: 4)
    assert _runs.shares(10, 8) == [(0, 10)]
    assert _runs.shares(16, 8) == [(0, 8), (8, 16)]
    assert _runs.shares(100, 8) == [(0, 25), (25, 50), (50, 75), (75, 100)]
    assert _runs.shares(0, 8) == [(0, 0)]


@pytest.mark.parametrize("kernel_size, strides, groups, pads", [
    ((3, 3), (2, 2), 1, ((1, 0), (1, 0))),  # strided: im2col forward, col2im input gradient
    ((1, 1), (1, 1), 1, ((0, 0), (0, 0))),  # 1x1: the inputs are the im2col matrix, no copy
    ((3, 3), (1, 1), 2, ((1, 1), (0, 0))),  # grouped
    ((3, 3), (1, 1), 1, ((1, 1), (1, 1))),  # 3 channels: im2col forward, by the flipped kernel backward
])
def test_im2col_and_col2im_products_shared_between_threads_match_one_thread(monkeypatch, kernel_size, strides,
                                                                            groups, pads):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 7, 6, 4 if groups > 1 else 3))
    kernel = rng.normal(size=kernel_size + (x.shape[-1] // groups, 6))
    out = _im2col.output_spatial(x.shape[1:-1], kernel_size, strides, (1, 1), pads)
    grad = rng.normal(size=(5,) + out + (6,))

    def everything():
        outputs, saved = _im2col.conv(x, kernel, strides, (1, 1), pads, groups)
        return (outputs, _im2col.conv_input_grad(grad, kernel, strides, (1, 1), pads, x.shape[1:-1], groups),
                _im2col.conv_kernel_grad(saved, grad, kernel, strides, (1, 1), pads))

    monkeypatch.setattr(_runs, "num_threads", lambda: 1)
    expected = everything()
    monkeypatch.setattr(_runs, "num_threads", lambda: 2)
    monkeypatch.setattr(_runs, "SHARE_FLOPS", 1)  # every sample a share of its own
    calls = []
    real = _runs.over_runs
    monkeypatch.setattr(_runs, "over_runs", lambda work, runs: calls.append(runs) or real(work, runs))
    for got, want in zip(everything(), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert calls and all(runs == [(0, 2), (2, 5)] for runs in calls)


def test_elementwise_operations_split_between_threads_match_one_piece(monkeypatch):
    from layers.activations import relu

    rng = np.random.default_rng(3)
    x, g = rng.normal(size=(4, 5, 6)).astype("float32"), rng.normal(size=(4, 5, 6)).astype("float32")
    monkeypatch.setattr(_runs, "num_threads", lambda: 2)
    monkeypatch.setattr(_runs, "SHARE_ELEMENTS", 7)
    calls = []
    monkeypatch.setattr(_runs, "over_runs", lambda work, runs: calls.append(runs) or [work(*run) for run in runs])
    np.testing.assert_array_equal(relu(x), np.maximum(x, 0))
    np.testing.assert_array_equal(relu.gradient(x, relu(x), g), g * (x > 0))
    assert calls == [[(0, 60), (60, 120)]] * 3
    calls.clear()
    np.testing.assert_array_equal(relu(x[:, ::2]), np.maximum(x[:, ::2], 0))  # not contiguous: at once
    assert relu(x).dtype == np.float32 and calls == [[(0, 60), (60, 120)]]


def test_a_single_run_holds_blas_to_one_thread_too_when_threads_are_used(monkeypatch):
    # OpenBLAS threads products from 64x64x64 on; its woken threads then spin, taking our threads' core.
    def blas_threads(start, stop):
        return [lib["num_threads"] for lib in ThreadpoolController().select(user_api="blas").info()]

    with ThreadpoolController().limit(limits=2, user_api="blas"):
        monkeypatch.setattr(_runs, "num_threads", lambda: 2)
        assert all(set(threads) == {1} for threads in _runs.over_runs(blas_threads, [(0, 4)]))
        monkeypatch.setattr(_runs, "num_threads", lambda: 1)
        assert all(set(threads) == {2} for threads in _runs.over_runs(blas_threads, [(0, 4)]))


def test_dense_products_below_the_threaded_size_hold_blas_to_one_thread(monkeypatch):
    from layers import Dense
    from layers.core import dense

    seen = []

    def recording(flops):
        seen.append(flops)
        return _runs.blas_for(flops)

    monkeypatch.setattr(dense, "blas_for", recording)
    layer = Dense(3)
    layer.build((4, 5))
    outputs, cache = layer.forward(np.ones((4, 5), "float32"))
    layer.backward(cache, np.ones_like(outputs))
    assert seen == [2 * 4 * 5 * 3] * 2


@pytest.mark.parametrize("strides, pads", [((1, 1), ((1, 1), (1, 1))), ((2, 2), ((0, 1), (0, 1)))])
def test_depthwise_convolution_shared_between_threads_matches_one_thread(monkeypatch, strides, pads):
    from layers.convolutional import depthwise_conv2d

    rng = np.random.default_rng(4)
    x, kernel = rng.normal(size=(5, 6, 7, 4)), rng.normal(size=(3, 3, 4, 2))
    out = _im2col.output_spatial(x.shape[1:-1], (3, 3), strides, (1, 1), pads)
    grad = rng.normal(size=(5,) + out + (8,))

    def everything():
        outputs, padded = depthwise_conv2d.depthwise_conv(x, kernel, strides, (1, 1), pads)
        return (outputs,) + depthwise_conv2d.depthwise_conv_grads(padded, grad, kernel, strides, (1, 1), pads,
                                                                  x.shape[1:-1])

    monkeypatch.setattr(_runs, "num_threads", lambda: 1)
    expected = everything()
    monkeypatch.setattr(_runs, "num_threads", lambda: 2)
    monkeypatch.setattr(_runs, "SHARE_FLOPS", 1)
    calls = []
    real = _runs.over_runs
    monkeypatch.setattr(_runs, "over_runs", lambda work, runs: calls.append(runs) or real(work, runs))
    for got, want in zip(everything(), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert calls == [[(0, 2), (2, 5)]] * 3


def test_kernel_gradient_runs_copy_several_kernels_but_leave_every_thread_a_run(monkeypatch):
    monkeypatch.setattr(_runs, "num_threads", lambda: 2)
    sample = _runs.RUN_BYTES
    assert _runs.run_bytes() == 4 * sample  # split between threads, runs of four times RUN_BYTES
    assert _runs.sample_runs(16, sample, least_bytes=16 * sample) == [(0, 8), (8, 16)]
    assert _runs.sample_runs(16, sample, least_bytes=6 * sample) == [(0, 6), (6, 12), (12, 16)]
    assert _runs.sample_runs(16, sample, least_bytes=2 * sample) == [(0, 4), (4, 8), (8, 12), (12, 16)]
    assert _runs.sample_runs(3, 10 * sample, least_bytes=1) == [(0, 1), (1, 2), (2, 3)]
