import threading

import numpy as np
import pytest
from threadpoolctl import OpenBLASController, ThreadpoolController, threadpool_info, threadpool_limits

from engine import Input, Model, blas_threads
from layers import Dense


def blas_threads_now():
    return {info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}


class Probe(Dense):
    """A Dense that records the BLAS threads it runs on, in inference and in training."""

    seen = []

    def call(self, inputs):
        Probe.seen.append(blas_threads_now())
        return super().call(inputs)

    def forward(self, inputs, training=True):
        Probe.seen.append(blas_threads_now())
        return super().forward(inputs, training=training)

    def backward(self, cache, grad_outputs):
        Probe.seen.append(blas_threads_now())
        return super().backward(cache, grad_outputs)


@pytest.fixture
def three_threads(monkeypatch):
    """BLAS set to 3 threads by the user at run time (not by environment variable), and the
    control of OpenBLAS' process-wide pool released, as a threadpool_limits block does at its end."""
    monkeypatch.setattr(blas_threads.one_blas_thread, "user_choice", False)
    Probe.seen = []
    limiter = ThreadpoolController().select(user_api="blas").limit(limits=3)
    OpenBLASController.clear_controlling_thread()
    yield
    limiter.restore_original_limits()
    OpenBLASController.clear_controlling_thread()


# Wide enough that BLAS would split its product between threads (OpenBLAS: m*n*k over 65536 * 4).
WIDE = 512


def test_a_model_runs_on_one_blas_thread_and_restores_the_setting(three_threads):
    x = Input((WIDE,))
    model = Model(x, Probe(2)(Dense(WIDE)(x)))
    model(np.ones((2, WIDE), "float32"))
    model.compile(optimizer="sgd", loss="mse")
    model.train_on_batch(np.ones((2, WIDE), "float32"), np.zeros((2, 2), "float32"))
    assert Probe.seen == [{1}] * 3  # the call, training's forward and its backward
    assert blas_threads_now() == {3}


def test_nested_and_concurrent_calls_restore_the_setting_once_the_last_ends(three_threads):
    inner_input = Input((WIDE,))
    inner = Model(inner_input, Probe(WIDE)(inner_input))
    outer_input = Input((WIDE,))
    model = Model(outer_input, Dense(2)(inner(inner(outer_input))))
    errors = []

    def predict_many():
        try:
            for _ in range(20):
                model(np.ones((3, WIDE), "float32"))
        except Exception as error:  # surfaced below: an assertion in a thread would be lost
            errors.append(error)

    workers = [threading.Thread(target=predict_many) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert len(Probe.seen) == 4 * 20 * 2 and all(seen == {1} for seen in Probe.seen)
    assert blas_threads_now() == {3}


def test_a_threadpool_limits_block_of_another_thread_is_left_alone(monkeypatch):
    monkeypatch.setattr(blas_threads.one_blas_thread, "user_choice", False)
    Probe.seen = []
    x = Input((WIDE,))
    model = Model(x, Probe(WIDE)(x))
    with threadpool_limits(3, user_api="blas"):  # this thread controls OpenBLAS until the block ends
        worker = threading.Thread(target=model, args=(np.ones((2, WIDE), "float32"),))
        worker.start()
        worker.join()
        assert Probe.seen == [{3}]
        model(np.ones((2, WIDE), "float32"))  # from the controlling thread itself
        assert Probe.seen == [{3}, {1}] and blas_threads_now() == {3}


def test_a_thread_count_set_in_the_environment_is_left_alone(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    keeps_choice = blas_threads._OneBlasThread()
    assert keeps_choice.user_choice
    with threadpool_limits(3, user_api="blas"):
        with keeps_choice:
            assert blas_threads_now() == {3}


def test_an_inference_too_small_for_threaded_blas_leaves_the_setting_alone(three_threads):
    x = Input((6,))
    model = Model(x, Probe(4)(x))  # 2 * 6 * 4 FLOPs a sample: one thread in BLAS up to batches of 10,922
    model(np.ones((2, 6), "float32"))
    model(np.ones((20_000, 6), "float32"))
    assert Probe.seen == [{3}, {1}]
    assert blas_threads_now() == {3}


def test_an_inference_with_a_product_of_gigaflops_runs_on_blas_own_threads(three_threads):
    x = Input((WIDE,))
    model = Model(x, Probe(WIDE)(x))  # 2 * 512 * 512 FLOPs a sample: past 2 GFLOPs from batches of 3,815
    model(np.ones((64, WIDE), "float32"))
    model(np.ones((4_000, WIDE), "float32"))
    assert Probe.seen == [{1}, {3}]
    assert blas_threads_now() == {3}
