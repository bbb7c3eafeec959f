"""Running a piece of the adversarial suite in a child process under a memory
cap and a time limit, so that a regression fails the test instead of taking the
machine down."""

import os
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_capped(module, *args, memory=1536 * 2**20, timeout=300):
    """Runs ``python -m module *args`` from the project root with its address
    space capped at ``memory`` bytes and one BLAS thread; returns the completed
    process (``stdout``/``stderr`` as text). A child that overruns ``timeout``
    seconds is killed and raises ``subprocess.TimeoutExpired``."""

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONPATH": ROOT}
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT, env=env,
                          preexec_fn=cap, capture_output=True, text=True, timeout=timeout, check=False)
