"""Work split between ``engine.num_threads()`` threads: runs of samples whose
copies fit in a core's cache (``sample_runs``), a batch's product in one share
per thread (``product_shares``), elementwise work in flat pieces
(``over_elements``), each handed to ``over_runs``.

Split between threads, each run makes its copy and multiplies it on its own
core, with BLAS held to one thread meanwhile: the copies run in parallel too,
and no product waits for BLAS threads that other work keeps busy. Work too
small to be worth a handover (``SHARE_FLOPS``, ``SHARE_ELEMENTS``) stays on
the calling thread. The threads share the interpreter's lock, which each NumPy
call takes to start, so what a thread is handed must be a few large calls, not
many small ones (``THREADED_RUN_SCALE``).

Products outside runs use BLAS' threads only when they are large (``blas_for``):
split between two threads, a product of a few MFLOPs spent more time handing
work over than working (a small ResNet's step took twice the CPU time of one
thread, and more wall time too).
"""

import contextlib
import functools
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

from engine.blas_threads import num_threads, one_blas_thread

RUN_BYTES = 1 << 18  # a run's copy on one thread, well inside a core's L2 cache (256 KB to 2 MB on current CPUs)
# Split between threads, a run copies this many times RUN_BYTES: each NumPy call of a run waits its turn for the
# interpreter's lock, some microseconds, so runs of fewer, larger calls overlap where small ones queue (strips of
# 3x3 convolutions, 16-64 channels, batch 32-128: 1.5-1.7x faster on two threads than on one this way, 1.0-1.7x
# in runs of RUN_BYTES).
THREADED_RUN_SCALE = 4
# The least a thread is handed of an elementwise operation, 4 MB of float32: a handover costs 70-100 us. A ReLU's
# forward and backward over 1 MB took twice as long split between two threads as on one; over 8 MB, 1.6x less.
SHARE_ELEMENTS = 1 << 20
SHARE_FLOPS = 1 << 22  # 4 MFLOPs, about 0.1 ms of a core: the least a thread is handed of a batch's product
KERNEL_RUNS = 8  # a kernel gradient's run copies at least 8 times the kernel's bytes (sample_runs)
THREADED_FLOPS = 1 << 27  # 134 MFLOPs: a few milliseconds of one core, where handing work over costs microseconds


def run_bytes():
    """The bytes a run of samples copies: ``RUN_BYTES`` on one thread,
    ``THREADED_RUN_SCALE`` times that when runs are split between threads.

    Example:
        >>> run_bytes() in (RUN_BYTES, THREADED_RUN_SCALE * RUN_BYTES)
        True
    """
    return RUN_BYTES * (THREADED_RUN_SCALE if num_threads() > 1 else 1)


def sample_runs(batch, bytes_per_sample, least_bytes=0):
    """``(start, stop)`` runs of samples whose copies (``bytes_per_sample`` each)
    take about ``run_bytes()``, or ``least_bytes`` when that is more (but no more
    than a thread's share of the batch), at least one sample per run.

    A kernel gradient made run by run writes and adds up a kernel-sized array per
    run: its runs take ``least_bytes``, several times the kernel, so that those
    writes stay small beside the products (a 4x4 kernel of 128 to 128 channels,
    1 MB, at a sample per run took 77 ms where im2col's took 17).

    Example:
        >>> sample_runs(5, run_bytes() // 2)
        [(0, 2), (2, 4), (4, 5)]
    """
    usual = run_bytes()
    step = max(usual, least_bytes) // max(bytes_per_sample, 1)
    if least_bytes > usual:
        step = min(step, -(-batch // num_threads()))
    step = max(1, step)
    return [(start, min(start + step, batch)) for start in range(0, batch, step)]


def over_runs(work, runs):
    """``[work(start, stop) for each run]``, the runs dealt in contiguous shares
    to up to ``num_threads()`` threads, BLAS held to one thread while they work.

    One share per thread, the calling thread working the first: each handover
    costs tens of microseconds of the interpreter's time, so a batch of 32
    one-sample runs is handed over once per thread, not 32 times. A single run
    holds BLAS to one thread too: OpenBLAS threads a product from 64x64x64 on,
    and its woken threads then spin for about 0.1 s, taking the core our own
    threads need (a digits CNN step with both cores took 64 ms against 8).

    Args:
        work: a function of ``(start, stop)``; runs may call it in any order and
            at once, so it writes only its own samples' part of any shared array.
        runs: the ``(start, stop)`` pairs, as ``sample_runs`` or ``shares`` give them.

    Example:
        >>> over_runs(lambda start, stop: stop - start, [(0, 2), (2, 3)])
        [2, 1]
    """
    if num_threads() < 2:
        return [work(start, stop) for start, stop in runs]
    threads = min(num_threads(), len(runs))
    with one_blas_thread():
        if threads < 2:
            return _work_share(work, runs)
        dealt = [runs[len(runs) * i // threads:len(runs) * (i + 1) // threads] for i in range(threads)]
        others = [_pool(threads - 1).submit(_work_share, work, share) for share in dealt[1:]]
        try:
            first = _work_share(work, dealt[0])
        finally:
            wait(others)  # none outlives the BLAS limit, even when the first share raised
        return first + [result for future in others for result in future.result()]


def shares(size, smallest):
    """Up to ``num_threads()`` contiguous ``(start, stop)`` pieces of ``range(size)``,
    each of at least ``smallest`` items (one piece when ``size < 2 * smallest``):
    work that is worth splitting between threads only when each gets enough of it.

    Example:
        >>> shares(10, 8)
        [(0, 10)]
    """
    count = max(1, min(num_threads(), size // max(smallest, 1)))
    return [(size * i // count, size * (i + 1) // count) for i in range(count)]


def product_shares(batch, flops):
    """``shares`` of a batch whose product takes ``flops`` in all, each share at
    least ``SHARE_FLOPS`` of it (smaller ones cost more to hand over than they save).

    Example:
        >>> product_shares(32, SHARE_FLOPS // 2)
        [(0, 32)]
    """
    return shares(batch, -(-SHARE_FLOPS * batch // max(flops, 1)))


def over_product_shares(run, batch, flops):
    """``[run(start, stop) for each of the product_shares]`` of a batch whose
    product takes ``flops`` in all: split between threads, or one piece, BLAS
    threaded for it by ``blas_for``.

    Example:
        >>> over_product_shares(lambda start, stop: stop - start, 8, 100)
        [8]
    """
    pieces = product_shares(batch, flops)
    if len(pieces) > 1:
        return over_runs(run, pieces)
    with blas_for(flops):
        return [run(0, batch)]


def over_elements(function, *arrays):
    """``function(*arrays, out=out)`` for arrays of one shape, computed in ``shares``
    of their flat elements between threads (at least ``SHARE_ELEMENTS`` each) when
    they are all C-contiguous, else at once. ``out`` has the first array's dtype.

    Example:
        >>> import numpy as np
        >>> over_elements(np.add, np.ones(3), np.arange(3.0))
        array([1., 2., 3.])
    """
    out = np.empty(arrays[0].shape, arrays[0].dtype)
    pieces = shares(out.size, SHARE_ELEMENTS)
    if len(pieces) < 2 or not all(array.flags.c_contiguous for array in arrays):
        function(*arrays, out=out)
        return out
    flats, flat_out = [array.reshape(-1) for array in arrays], out.reshape(-1)
    over_runs(lambda start, stop: function(*(flat[start:stop] for flat in flats), out=flat_out[start:stop]), pieces)
    return out


def _work_share(work, runs):
    return [work(start, stop) for start, stop in runs]


def blas_for(flops):
    """A context in which a product of ``flops`` runs: BLAS held to one thread
    below ``THREADED_FLOPS``, at its own count above.

    Example:
        >>> import numpy as np
        >>> a = np.ones((4, 3))
        >>> with blas_for(2 * a.size * 3):
        ...     product = a @ a.T
        >>> float(product[0, 0])
        3.0
    """
    if flops >= THREADED_FLOPS or num_threads() < 2:
        return contextlib.nullcontext()
    return one_blas_thread()


@functools.cache
def _pool(threads):
    return ThreadPoolExecutor(threads, thread_name_prefix="nodeweave-runs")
