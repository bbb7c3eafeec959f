"""Saves SIGKILLed at random points: the model file always loads, as the old
model or the new one, and the next save clears what the killed one left.

One long-lived child process imports nodeweave once and forks a saver for each
round; the saver saves two models alternately over the same file until the test
kills it after a random short delay. The child caps its own address space as its
first statement (forked savers inherit the cap): a ``preexec_fn`` would run
Python in a fork of this test process, whose JAX threads may hold locks.
"""

import os
import queue
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np

from engine import load_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROUNDS = 120
MEMORY = 1536 * 2**20
TIMEOUT = 120

SAVER = textwrap.dedent(f"""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, ({MEMORY}, {MEMORY}))
    import os, sys
    import numpy as np
    from engine import Input, Model
    from layers import Dense

    def model(fill):
        x = Input(shape=(128,))
        built = Model(x, Dense(4)(Dense(512)(x)))
        built.set_weights([np.full(w.shape, fill, w.dtype) for w in built.get_weights()])
        return built

    target, models = sys.argv[1], [model(1.0), model(2.0)]
    models[0].save(target)
    os.write(1, b"ready\\n")
    for _ in sys.stdin:
        pid = os.fork()
        if pid == 0:
            saves, child = 0, os.getppid()
            while os.getppid() == child:  # an orphaned saver stops
                saves += 1
                models[saves % 2].save(target)
                if saves == 1:
                    os.write(1, f"saved {{os.getpid()}}\\n".encode())
            os._exit(0)
        os.waitpid(pid, 0)
        os.write(1, b"reaped\\n")
""")


class _Lines:
    """The child's stdout lines, read by a thread so every wait has a deadline."""

    def __init__(self, stream, deadline):
        self.deadline = deadline
        self._lines = queue.Queue()
        threading.Thread(target=lambda: [self._lines.put(line) for line in stream], daemon=True).start()

    def next(self):
        try:
            return self._lines.get(timeout=max(0.0, self.deadline - time.monotonic())).decode().strip()
        except queue.Empty:
            raise AssertionError(f"the saver process gave no answer within {TIMEOUT} s") from None


def _temporaries(folder):
    return [name for name in os.listdir(folder) if name != "m.nw"]


def _fill_of(path):
    values = np.unique(np.concatenate([w.ravel() for w in load_model(path).get_weights()]))
    assert values.tolist() in ([1.0], [2.0]), f"{path} holds neither saved model: weights {values[:5]}"


def test_a_save_killed_at_any_point_leaves_a_loadable_file_and_no_temporary_behind(tmp_path):
    target = tmp_path / "m.nw"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": ROOT}
    child = subprocess.Popen([sys.executable, "-c", SAVER, str(target)], cwd=ROOT, env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lines, rng, left_behind, saver = _Lines(child.stdout, time.monotonic() + TIMEOUT), random.Random(0), 0, None
    try:
        assert lines.next() == "ready"
        for _ in range(ROUNDS):
            child.stdin.write(b"go\n")
            child.stdin.flush()
            word, saver = lines.next().split()
            assert word == "saved"
            # The saver's first save removed what earlier (killed) savers left; only its own may exist.
            assert all(f"-{saver}-" in name for name in _temporaries(tmp_path)), _temporaries(tmp_path)
            time.sleep(rng.uniform(0.0, 0.01))
            os.kill(int(saver), signal.SIGKILL)
            assert lines.next() == "reaped"
            saver = None
            left_behind += bool(_temporaries(tmp_path))
            _fill_of(target)
    finally:
        if saver is not None:
            os.kill(int(saver), signal.SIGKILL)
        child.kill()
        child.wait(30)
    assert left_behind > 0, "no kill landed during a save: the test did not test anything"
    load_model(target).save(target)
    assert os.listdir(tmp_path) == ["m.nw"]
