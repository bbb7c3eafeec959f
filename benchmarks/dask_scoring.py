"""Scoring throughput (samples/s) on Dask arrays against in-memory ``predict``
(issue 14): the 784-256-256-10 MLP and the digits CNN on 1M samples, in memory
(one process), on Dask's threaded scheduler (2 threads) and on a
``dask.distributed.LocalCluster`` of 2 worker processes with 1 thread each.

The Dask contenders read their data from blocks generated on the workers
(``dask.array.random``), so no array crosses a process; the time it takes to
generate the blocks alone is measured too and reported beside them. BLAS runs
one thread everywhere, so the parallelism is Dask's.
"""

from benchmarks.harness import pin_threads

pin_threads()

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

CHUNK = 100_000


def mlp():
    from engine import Input, Model
    from layers import Dense

    x = Input(shape=(784,))
    hidden = Dense(256, activation="relu")(Dense(256, activation="relu")(x))
    return Model(x, Dense(10, activation="softmax")(hidden), name="mlp")


def dask_data(samples, shape):
    import dask.array as da

    return da.random.default_rng(0).random((samples, *shape), chunks=(CHUNK, *shape), dtype="float32")


def seconds(fn, repeats):
    """The best of ``repeats`` runs (each run scores every sample once)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(smoke=False):
    import dask
    from distributed import Client, LocalCluster

    from benchmarks.harness import save
    from graph.demo import build_digits_model

    samples = 20_000 if smoke else 1_000_000
    repeats = 1 if smoke else 2
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster, set_as_default=False)
    rows = []
    print(f"{samples:,} samples, blocks of {min(CHUNK, samples):,}; samples/s (best of {repeats})")
    print(f"{'model':>12} {'in memory':>12} {'dask threads':>13} {'ratio':>6} {'LocalCluster':>13} {'ratio':>6} "
          f"{'(blocks alone)':>15}")
    for name, build, shape in (("MLP 784-256-256-10", mlp, (784,)), ("digits CNN", build_digits_model, (8, 8, 1))):
        model = build()
        lazy = dask_data(samples, shape)
        in_memory = np.asarray(lazy.compute())
        scored = model.predict(lazy, batch_size=1024)  # the same lazy graph for every run
        contenders = {
            "in memory": lambda: model.predict(in_memory, batch_size=1024, verbose=0),
            "dask threads": lambda: dask.compute(scored, scheduler="threads", num_workers=2),
            "LocalCluster": lambda: client.compute(scored).result(),
            "blocks alone": lambda: client.compute(lazy.sum()).result(),
        }
        rates = {label: samples / seconds(fn, repeats) for label, fn in contenders.items()}
        reference = rates["in memory"]
        print(f"{name:>12} {reference:12,.0f} {rates['dask threads']:13,.0f} {rates['dask threads'] / reference:6.2f} "
              f"{rates['LocalCluster']:13,.0f} {rates['LocalCluster'] / reference:6.2f} {rates['blocks alone']:15,.0f}")
        rows.append({"model": name, "samples": samples, "in_memory_samples_per_s": reference,
                     "dask_threads_samples_per_s": rates["dask threads"],
                     "local_cluster_samples_per_s": rates["LocalCluster"],
                     "block_generation_samples_per_s": rates["blocks alone"]})
    client.close()
    cluster.close()
    print(f"results: {save('dask_scoring', {'rows': rows})}")


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
