"""Graph construction time against depth: a chain of Dense layers plus Model(...),
nodeweave against Keras 3 (numpy backend). Goal (issue 2): at most 20 us per
layer and linear in depth up to 100,000 layers. Also counts the objects a layer
of the chain leaves for the garbage collector, whose passes over them are what
grows faster than the depth (a count the machine's load does not change)."""

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
    keras_max = 100 if smoke else 3_000
    sys.setrecursionlimit(10_000)
    rows = []
    lines = {}
    # The depths at which Keras is not run go first: the objects Keras keeps after building its models (about 200,000
    # after six 1,000-layer ones) would be walked by every full collection of a deep build, doubling its time
    # at 10,000 layers in this process (a cost of the benchmark's own heap, not of the graph being built).
    build_nodeweave(10)  # imports, and first-call caches, before any timing
    for depth in sorted(depths, key=lambda depth: depth <= keras_max):
        contenders = {"nodeweave": lambda: build_nodeweave(depth)}
        failure = keras_fails(depth) if depth <= keras_max else "not run"
        if failure is None:
            contenders["keras"] = lambda: build_keras(depth)
        repeats = 1 if depth >= 10_000 else 5
        result = measure(contenders, repeats=repeats, warmup=0 if depth >= 10_000 else 1)
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
    tracked = collector_objects_per_layer(100 if smoke else 1_000)
    print(f"objects tracked by the garbage collector per layer: {tracked:.1f}")
    phases = phases_per_layer(100 if smoke else 2_000)
    print("CPU us per layer by phase: " + ", ".join(f"{phase} {us:.1f}" for phase, us in phases.items()))
    save("graph_build", {"units": UNITS, "rows": rows, "goal_us_per_layer": 20, "collector_objects_per_layer": tracked,
                         "phases_us_per_layer": phases})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
