import os
import subprocess
import sys

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from engine import Input, Model, blas_threads, num_threads, set_num_threads
from layers import Dense

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
def restored():
    """Whatever a test sets, the process gets back BLAS' threads and its own setting afterwards
    (the suite may run with NODEWEAVE_NUM_THREADS=1)."""
    previous = blas_threads._chosen
    with threadpool_limits(None, user_api="blas"):
        set_num_threads(None)
        yield
        set_num_threads(None)
    set_num_threads(previous)


def _probe_model():
    Probe.seen = []
    x = Input((8,))
    model = Model(x, Probe(2)(Dense(8)(x)))
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_a_model_runs_on_the_threads_blas_has(restored):
    with threadpool_limits(3, user_api="blas"):
        model = _probe_model()
        model(np.ones((2, 8), "float32"))
        model.train_on_batch(np.ones((2, 8), "float32"), np.zeros((2, 2), "float32"))
    assert Probe.seen == [{3}] * 3  # the call, training's forward and its backward: nothing lowered


def test_set_num_threads_holds_blas_and_none_gives_the_threads_back(restored):
    with threadpool_limits(3, user_api="blas"):
        set_num_threads(1)
        assert num_threads() == 1 and blas_threads_now() == {1}
        model = _probe_model()
        model.train_on_batch(np.ones((2, 8), "float32"), np.zeros((2, 2), "float32"))
        assert Probe.seen == [{1}] * 2
        set_num_threads(None)
        assert blas_threads_now() == {3}
    assert num_threads() == blas_threads.machine_threads()


@pytest.mark.parametrize("count", [0, -2, 1.5, "2", True])
def test_set_num_threads_refuses_what_is_not_a_positive_int(count):
    with pytest.raises(ValueError, match=r"positive int or None .* received"):
        set_num_threads(count)


def test_the_default_is_every_core_this_process_may_use(monkeypatch):
    for name in blas_threads.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert blas_threads.machine_threads() == len(os.sched_getaffinity(0))
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    assert blas_threads.machine_threads() == 3  # the user's own BLAS setting is the machine's count for us


def test_every_core_is_read_again_at_set_num_threads_none_not_on_every_call(restored, monkeypatch):
    # restored first: its teardown reads the cores after monkeypatch has put the environment back
    for name in blas_threads.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    set_num_threads(None)
    cores = len(os.sched_getaffinity(0))
    assert num_threads() == cores
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", str(cores + 2))
    assert num_threads() == cores
    set_num_threads(None)
    assert num_threads() == cores + 2


def _in_fresh_python(code, **environment):
    env = {**os.environ, "PYTHONPATH": ROOT, **environment}
    for name in blas_threads.THREAD_VARIABLES:
        env.pop(name, None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)


def test_the_environment_variable_sets_the_count_at_import():
    code = ("import engine; from threadpoolctl import threadpool_info; "
            "print(engine.num_threads(), {i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'})")
    result = _in_fresh_python(code, NODEWEAVE_NUM_THREADS="1")
    assert result.stdout.split() == ["1", "{1}"], result.stderr


def test_a_bad_environment_variable_is_named_at_import():
    result = _in_fresh_python("import engine", NODEWEAVE_NUM_THREADS="many")
    assert result.returncode != 0 and "NODEWEAVE_NUM_THREADS must be a positive whole number" in result.stderr
