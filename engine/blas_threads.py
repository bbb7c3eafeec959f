"""How many threads nodeweave's arithmetic may use: every core of the machine by default.

PyTorch and Keras use all cores unless told otherwise, and so does nodeweave:
NumPy's BLAS (OpenBLAS or MKL) starts one thread per core and splits large
matrix products between them, and nodeweave's own kernels that split a batch
between threads use as many as ``num_threads()`` says.

``set_num_threads(n)`` (or ``NODEWEAVE_NUM_THREADS=n`` in the environment before
``import engine``) holds both to ``n`` threads for the whole process, as
``torch.set_num_threads`` does. One thread gives steady timings on a shared
machine and in benchmarks: with two OpenBLAS threads on two cores that other
processes keep busy, each split product waits for its slowest thread, and a
ResNet50 batch-1 call took anywhere from 0.1 to 0.9 s against a steady 0.12 s
on one thread. ``set_num_threads(None)`` gives the cores back. A count set with
``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` or ``OMP_NUM_THREADS`` before
starting Python is the user's choice: nodeweave reads it and leaves BLAS alone.
"""

import contextlib
import functools
import os
import threading

from threadpoolctl import ThreadpoolController

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")

_lock = threading.Lock()
_chosen = None  # the count set with set_num_threads, or None for the machine's cores
_original = ()  # each BLAS library and its thread count before set_num_threads held it


def machine_threads():
    """The cores this process may run on (its CPU affinity, which containers and
    ``taskset`` narrow), or a count a BLAS environment variable set.

    >>> machine_threads() >= 1
    True
    """
    for name in THREAD_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def num_threads():
    """The threads nodeweave's arithmetic may use: ``set_num_threads``' count, or
    every core (``machine_threads``, read at import and by ``set_num_threads(None)``)
    when none was set.

    >>> num_threads() >= 1
    True
    """
    return _every_core if _chosen is None else _chosen


def set_num_threads(count):
    """Holds BLAS and nodeweave's own kernels to ``count`` threads in this process;
    ``None`` gives BLAS back the threads it had before and nodeweave every core.

    Args:
        count: a positive int, or None.

    Example:
        >>> from engine import set_num_threads, num_threads
        >>> set_num_threads(1); num_threads()
        1
        >>> set_num_threads(None)
    """
    global _chosen, _original, _every_core
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValueError(f"set_num_threads expects a positive int or None (every core), received {count!r}.")
    with _lock:
        if count is None:
            for library, threads in _original:
                library.set_num_threads(threads)
            _original = ()
            _every_core = machine_threads()
        else:
            libraries = ThreadpoolController().select(user_api="blas").lib_controllers
            if _chosen is None:
                _original = [(library, library.get_num_threads()) for library in libraries]
            for library in libraries:
                library.set_num_threads(count)
        _chosen = count


@contextlib.contextmanager
def one_blas_thread():
    """Holds BLAS to one thread inside the block and gives back each library's
    count after it, for work that splits a batch between nodeweave's own threads.
    It sets the libraries' counts directly: 2 us a call where threadpoolctl's
    ``limit`` took 12, a tenth of a small convolution.

    Example:
        >>> import numpy as np
        >>> with one_blas_thread():
        ...     product = np.ones((2, 3)) @ np.ones((3, 2))
        >>> float(product[0, 0])
        3.0
    """
    libraries = _loaded_blas()
    counts = [library.num_threads for library in libraries]
    for library in libraries:
        library.set_num_threads(1)
    try:
        yield
    finally:
        for library, count in zip(libraries, counts):
            library.set_num_threads(count)


@functools.cache
def _loaded_blas():
    """The BLAS libraries loaded at the first call (a scan takes milliseconds)."""
    return ThreadpoolController().select(user_api="blas").lib_controllers


def _from_environment():
    value = os.environ.get("NODEWEAVE_NUM_THREADS", "").strip()
    if not value:
        return
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"NODEWEAVE_NUM_THREADS must be a positive whole number of threads, received {value!r}; "
                         "unset it to use every core.")
    set_num_threads(int(value))


_every_core = machine_threads()  # read here and by set_num_threads(None): reading it takes 3 us, per kernel
_from_environment()
