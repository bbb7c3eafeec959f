"""Graph construction time against depth: a chain of Dense layers plus Model(...),
nodeweave against Keras 3 (numpy backend). Goal (issue 2): at most 20 us per
layer and linear in depth up to 100,000 layers. Also counts the objects a layer
of the chain leaves for the garbage collector, whose passes over them are what
grows faster than the depth (a count the machine's load does not change), and
times each depth with the collector on and off, to tell its share from ours."""

from benchmarks.harness import pin_threads

pin_threads()

import os  # noqa: E402
import sys  # noqa: E402

os.environ["KERAS_BACKEND"] = "numpy"

UNITS = 8


def build_nodeweave(depth):
    from engine import Input, Model
    from layers import Dense

    x = Input(shape=(UNITS,))
    y = x
    for _ in range(depth):
        y = Dense(UNITS)(y)
    return Model(x, y)


def build_keras(depth):
    import keras

    x = keras.Input(shape=(UNITS,))
    y = x
    for _ in range(depth):
        y = keras.layers.Dense(UNITS)(y)
    return keras.Model(x, y)


def collector_objects_per_layer(depth=1_000):
    """The objects the garbage collector tracks per layer of a built chain, with its Model."""
    import gc

    build_nodeweave(10)
    gc.collect()
    before = len(gc.get_objects())
    model = build_nodeweave(depth)
    gc.collect()
    count = (len(gc.get_objects()) - before) / depth
    del model
    return count


def collector_share(depths):
    """Microseconds per layer building each depth once with the garbage collector on and once with it
    off, and the full collections the build ran with it on: what the collector adds to the graph's own
    work, which is the same per layer at every depth."""
    import gc
    import time

    rows = []
    for depth in depths:
        row = {"depth": depth}
        for collector in ("on", "off"):
            gc.collect()
            if collector == "off":
                gc.disable()
            full = gc.get_stats()[2]["collections"]
            started = time.perf_counter()
            try:
                model = build_nodeweave(depth)
            finally:
                gc.enable()
            row[f"collector_{collector}_us_per_layer"] = (time.perf_counter() - started) / depth * 1e6
            if collector == "on":
                row["full_collections"] = gc.get_stats()[2]["collections"] - full
            del model
        rows.append(row)
    return rows


def collector_share_alone(depths):
    """``collector_share(depths)`` in a fresh process, whose heap holds nothing of this one's (the
    million objects of a 100,000-layer build, freed, still slowed the next builds of this process)."""
    import json
    import subprocess

    run = subprocess.run([sys.executable, "-m", "benchmarks.graph_build", "--collector-share", *map(str, depths)],
                         capture_output=True, text=True, check=True, env=os.environ)
    return json.loads(run.stdout.strip().splitlines()[-1])


def phases_per_layer(depth=2_000, repeats=5):
    """Microseconds of CPU time per layer in each phase of building the chain, best of ``repeats``:
    the constructors, the symbolic calls, and ``Model(inputs, outputs)`` (the collector runs as a user's
    would; it is emptied before each build)."""
    import gc
    import time

    from engine import Input, Model
    from layers import Dense

    best = {"constructor": float("inf"), "call": float("inf"), "Model": float("inf")}
    for _ in range(repeats):
        gc.collect()
        x = Input(shape=(UNITS,))
        started = time.process_time()
        layers = [Dense(UNITS) for _ in range(depth)]
        constructed = time.process_time()
        y = x
        for layer in layers:
            y = layer(y)
        called = time.process_time()
        Model(x, y)
        done = time.process_time()
        for phase, seconds in zip(best, (constructed - started, called - constructed, done - called)):
            best[phase] = min(best[phase], seconds / depth * 1e6)
    return best


def keras_fails(depth):
    try:
        build_keras(depth)
    except RecursionError:
        return "RecursionError"
    return None


def main(smoke=False):
    from benchmarks.harness import measure, save

    depths = [10, 100] if smoke else [100, 1_000, 10_000, 100_000]
    keras_max = 10 if smoke else 3_000  # the smoke run builds Keras at its smallest depth only
    sys.setrecursionlimit(10_000)
    rows = []
    lines = {}
    # The depths at which Keras is not run go first: the objects Keras keeps after building its models (about 200,000
    # after six 1,000-layer ones) would be walked by every full collection of a deep build, doubling its time
    # at 10,000 layers in this process (a cost of the benchmark's own heap, not of the graph being built).
    build_nodeweave(10)  # imports, and first-call caches, before any timing
    collector = collector_share_alone([10, 100] if smoke else [1_000, 5_000, 20_000, 100_000, 200_000])
    for depth in sorted(depths, key=lambda depth: depth <= keras_max):
        contenders = {"nodeweave": lambda: build_nodeweave(depth)}
        failure = keras_fails(depth) if depth <= keras_max else "not run"
        if failure is None:
            contenders["keras"] = lambda: build_keras(depth)
        repeats = 1 if depth >= 10_000 else 5
        result = measure(contenders, repeats=repeats, warmup=0 if depth >= 10_000 else 1, freeze=False)
        ours = {k: v / depth * 1e6 for k, v in result["nodeweave"].items()}
        theirs = {k: v / depth * 1e6 for k, v in result["keras"].items()} if "keras" in result else None
        versus = f"{theirs['median'] / ours['median']:16.1f}" if theirs else f"{failure:>16}"
        keras_cell = f"{theirs['median']:16.1f}" if theirs else f"{'-':>16}"
        spread = f"{ours['min']:.1f}-{ours['max']:.1f}"
        lines[depth] = f"{depth:>8} {ours['median']:20.1f} {spread:>16} {keras_cell} {versus}"
        rows.append({"depth": depth, "nodeweave_us_per_layer": ours, "keras_us_per_layer": theirs,
                     "keras_failure": failure})
    print(f"{'depth':>8} {'nodeweave us/layer':>20} {'spread':>16} {'keras us/layer':>16} {'keras/nodeweave':>16}")
    for depth in depths:
        print(lines[depth])
    rows.sort(key=lambda row: row["depth"])
    print(f"{'depth':>8} {'collector on us/layer':>22} {'full collections':>17} {'collector off us/layer':>23}")
    for row in collector:
        print(f"{row['depth']:>8} {row['collector_on_us_per_layer']:22.1f} {row['full_collections']:17d} "
              f"{row['collector_off_us_per_layer']:23.1f}")
    tracked = collector_objects_per_layer(100 if smoke else 1_000)
    print(f"objects tracked by the garbage collector per layer: {tracked:.1f}")
    phases = phases_per_layer(100 if smoke else 2_000)
    print("CPU us per layer by phase: " + ", ".join(f"{phase} {us:.1f}" for phase, us in phases.items()))
    save("graph_build", {"units": UNITS, "rows": rows, "goal_us_per_layer": 20, "collector_objects_per_layer": tracked,
                         "collector_rows": collector,
                         "phases_us_per_layer": phases})
    return rows


if __name__ == "__main__":
    if "--collector-share" in sys.argv:
        import json

        sys.setrecursionlimit(10_000)
        build_nodeweave(10)
        print(json.dumps(collector_share([int(depth) for depth in sys.argv[sys.argv.index("--collector-share") + 1:]])))
    else:
        main(smoke="--smoke" in sys.argv)
