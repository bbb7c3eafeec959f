"""Priming glibc's malloc for NumPy's large temporaries.

glibc serves a block larger than its mmap threshold (128 KiB when a process
starts) with a fresh ``mmap``. Every page of that block then faults in on first
touch, and ``free`` returns the block to the system. A CNN step allocates dozens of such
temporaries (a 32 x 8 x 8 x 32 float32 activation is 256 KiB), so a fresh
process pays those page faults on every step: about a third of the digits CNN's
training time. glibc raises the threshold by itself after it frees a large mmap'd
block (up to 32 MiB), after which such temporaries are reused from the heap.
``prime`` does that once, at import. It allocates and frees 16 MiB, never touched, so it
costs no memory. On other C libraries it is a harmless allocation.
"""

import numpy as np


def prime():
    """Allocates and frees one untouched 16 MiB block (see the module docstring)."""
    np.empty(4 * 1024 * 1024, np.float32)


prime()
