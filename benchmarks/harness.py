"""The measuring method every benchmark shares.

Contenders are timed side by side in one process: after a warm-up, the
repetitions alternate between contenders (A B C A B C ...), so a slow moment of
the machine hits all of them alike. Each figure is the median with its spread
(min and max); the ratio to the reference is the ratio of medians.
"""

import gc
import json
import os
import platform
import statistics
import time
from pathlib import Path

THREADS = os.environ.get("NODEWEAVE_BENCH_THREADS", "1")
RESULTS = Path(os.environ.get("NODEWEAVE_BENCH_RESULTS", Path(__file__).parent / "results"))


def pin_threads():
    """Pins every BLAS/OpenMP pool to THREADS; call before importing numpy."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS_THREADS"):
        os.environ[var] = THREADS
    os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=" + THREADS


def machine():
    import numpy as np

    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return {
        "cores": os.cpu_count(),
        "threads": THREADS if THREADS == "all" else int(THREADS),  # "all": each library's default
        "blas": f"{blas.get('name')} {blas.get('version')}",
        "python": platform.python_version(),
        "numpy": np.__version__,
    }


def measure(contenders, repeats=7, warmup=1, number=1, freeze=True):
    """Times each ``{name: fn}`` contender; returns ``{name: {median, min, max}}`` in seconds per call.

    The contenders take turns, and the garbage collector runs (untimed) before
    each turn, so that none pays for collecting what the one before it left.
    With ``freeze``, what exists before the timing (the libraries, the models) is
    frozen out of the collector's walks meanwhile (``gc.freeze``): with PyTorch and
    Keras imported, each of those collections took 0.1 s of walking objects that
    stay. Graph building passes ``freeze=False``: a user's build pays for the
    collector walking what their process holds, and the benchmark measures that.
    A process that froze objects itself (the test suite's workers) keeps them frozen."""
    samples = {name: [] for name in contenders}
    freeze = freeze and not gc.get_freeze_count()
    if freeze:
        gc.collect()
        gc.freeze()
    try:
        for _ in range(warmup):
            for fn in contenders.values():
                fn()
        for _ in range(repeats):
            for name, fn in contenders.items():
                gc.collect()
                start = time.perf_counter()
                for _ in range(number):
                    fn()
                samples[name].append((time.perf_counter() - start) / number)
    finally:
        if freeze:
            gc.unfreeze()
    return {name: summarize(values) for name, values in samples.items()}


def summarize(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def ratio(result, contender, reference):
    return result[contender]["median"] / result[reference]["median"]


def save(name, payload):
    """Writes the results as JSON (benchmarks/results/NAME.json) for later comparison."""
    RESULTS.mkdir(exist_ok=True)
    payload = {"benchmark": name, "date": time.strftime("%Y-%m-%d %H:%M"), "machine": machine(), **payload}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2))
    return path


def row(*cells):
    print("  ".join(f"{c:>14}" if not isinstance(c, str) else f"{c:>14}" for c in cells))


def load_torch():
    """PyTorch with its threads pinned like everyone else's, or None when it is not installed
    (it comes with the ``bench`` extra)."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(int(THREADS))
    return torch
