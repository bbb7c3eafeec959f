"""Peak memory of eager inference against depth: a chain of Dense(256) layers at
batch 256. The plan frees every intermediate after its last reader, so the peak
should stay flat as depth grows (goal of issue 2). Measured with tracemalloc,
which sees NumPy's allocations."""

from benchmarks.harness import pin_threads

pin_threads()

import sys  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

WIDTH, BATCH = 256, 256


def chain(depth):
    from engine import Input, Model
    from layers import Dense

    x = Input(shape=(WIDTH,))
    y = x
    for _ in range(depth):
        y = Dense(WIDTH, activation="tanh")(y)
    return Model(x, y)


def peak_bytes(fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def main(smoke=False):
    from benchmarks.harness import save

    x = np.random.default_rng(0).normal(size=(BATCH, WIDTH)).astype("float32")
    activation_mb = x.nbytes / 2**20
    rows = []
    print(f"{'depth':>6} {'peak MB':>9} {'peak / one activation':>22} {'all activations kept, MB':>25}")
    for depth in ([2, 8] if smoke else [10, 100, 1000]):
        model = chain(depth)
        peak = peak_bytes(lambda: model(x)) / 2**20
        print(f"{depth:>6} {peak:9.2f} {peak / activation_mb:22.1f} {depth * activation_mb:25.1f}")
        rows.append({"depth": depth, "peak_mb": peak, "activation_mb": activation_mb})
    save("memory", {"width": WIDTH, "batch": BATCH, "rows": rows})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
