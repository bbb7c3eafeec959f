"""A numpy.memmap whose file another process truncates while fit reads it:
fit raises a ValueError naming the file instead of the process dying of SIGBUS.

Each case runs ``truncated_fit.py`` in a child process and truncates its file
once the child has trained on its first batch (with no read in flight).
"""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "truncated_fit.py")
ROWS = 4096  # 128 KiB of float64: 16 batches of 256 rows, 8 KiB (two pages) each


@pytest.mark.skipif(not hasattr(signal, "SIGBUS"), reason="mapped files past their end raise SIGBUS on POSIX only")
@pytest.mark.parametrize("shuffle, kept", [(False, ROWS * 32 // 2), (True, 0)])
def test_a_memmap_truncated_during_fit_raises_a_value_error_not_sigbus(tmp_path, shuffle, kept):
    path = tmp_path / "x.f64"
    x = np.memmap(path, "float64", "w+", shape=(ROWS, 4))
    x[:] = 1.0
    x.flush()
    del x
    child = subprocess.Popen([sys.executable, CHILD, str(path), str(ROWS), str(int(shuffle))], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": ROOT})
    try:
        assert child.stdout.readline() == "batch 0\n", child.stderr.read()
        os.truncate(path, kept)
        out, err = child.communicate("truncated\n", timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 1, f"the child ended with {child.returncode} (-{int(signal.SIGBUS)} is SIGBUS): {err}"
    assert "fit returned" not in out
    assert err.splitlines()[-1] == (
        f"ValueError: The file {str(path)!r} of a numpy.memmap that fit reads holds {kept} bytes, but the array "
        f"maps {ROWS * 32} of it (from offset 0): the file was truncated while fit read it. Reading on would kill "
        "the process (SIGBUS). Keep the file whole while fit reads it, or fit from a copy."
    )
