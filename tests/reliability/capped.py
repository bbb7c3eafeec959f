"""Running a piece of the adversarial suite in a child process under a memory
cap and a time limit, so that a regression fails the test instead of taking the
machine down."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_capped(module, *args, memory=1536 * 2**20, timeout=300):
    """Runs ``python -m module *args`` from the project root with its address
    space capped at ``memory`` bytes and one BLAS thread; returns the completed
    process (``stdout``/``stderr`` as text). A child that overruns ``timeout``
    seconds is killed and raises ``subprocess.TimeoutExpired``.

    The child caps itself as its first statement: a ``preexec_fn`` would run
    Python in a fork of the test process, whose other threads (JAX's) may hold
    locks."""
    launcher = (f"import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory})); "
                f"sys.argv[0] = {module!r}; runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONPATH": ROOT}
    return subprocess.run([sys.executable, "-c", launcher, *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)
