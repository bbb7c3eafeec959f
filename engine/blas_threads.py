"""One BLAS thread while a model runs, so that its call times stay steady.

NumPy's BLAS (OpenBLAS, or MKL) starts one thread per core and splits every
matmul between them. When the cores are shared (other processes, fit's data
threads, Dask running blocks side by side), each split matmul waits for its
slowest thread, and the BLAS threads spin between matmuls on the cores that the
model's own NumPy work needs. On two busy cores a ResNet50 batch-1 call took
0.1 to 0.9 s with two BLAS threads, burning 1.5 to 3 times the CPU time of one
thread, and a steady 0.12 s with one; with the cores free, two threads gained 13%.

So while an execution plan runs (inference, and training's forward and
backward), nodeweave limits the BLAS libraries to one thread and restores their
setting afterwards. An inference whose largest product BLAS would run on one
thread anyway skips both, and so does one whose largest product is so large
(2 GFLOPs, ResNet50 at batch 16) that splitting it pays even on busy cores
(engine/plan.py). The first plan to start sets the limit and the last to end
restores it, whatever the threads or nesting. Setting ``OPENBLAS_NUM_THREADS``,
``MKL_NUM_THREADS`` or ``OMP_NUM_THREADS`` before starting Python is a choice
nodeweave keeps: BLAS is then left alone. So is a ``threadpoolctl.threadpool_limits``
block another thread holds: OpenBLAS' pool is process-wide, threadpoolctl lets one
thread at a time set it, and nodeweave hands that control back after each change.
"""

import os
import threading

from threadpoolctl import OpenBLASController, ThreadpoolController

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


class _OneBlasThread:
    """Context manager: BLAS on one thread inside, restored when the outermost exits."""

    def __init__(self):
        self.user_choice = any(os.environ.get(name) for name in THREAD_VARIABLES)
        self._controller = None
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self):
        self._lock = threading.Lock()
        self._depth = 0
        self._original = None  # each BLAS library's thread count when the outermost run started

    def __enter__(self):
        if self.user_choice:
            return
        with self._lock:
            if self._depth == 0:
                if self._controller is None:  # the libraries loaded by now: NumPy's BLAS is among them
                    self._controller = ThreadpoolController().select(user_api="blas").lib_controllers
                # Each library's own setter, not threadpoolctl's limit(): a third of the cost,
                # which a batch-1 call of a small model pays on every run.
                self._original = [library.get_num_threads() for library in self._controller]
                for library in self._controller:
                    library.set_num_threads(1)
                OpenBLASController.clear_controlling_thread()
            self._depth += 1

    def __exit__(self, *exc_info):
        if self.user_choice:
            return
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                for library, threads in zip(self._controller, self._original):
                    library.set_num_threads(threads)
                OpenBLASController.clear_controlling_thread()
                self._original = None


one_blas_thread = _OneBlasThread()
