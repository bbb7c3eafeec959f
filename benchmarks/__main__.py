"""Runs the benchmarks: ``python -m benchmarks`` (all) or ``python -m benchmarks NAME``.

Each benchmark runs in its own process, so that each can pin its threads and
pick its Keras backend before anything is imported.
"""

import subprocess
import sys

from benchmarks.harness import THREADS

BENCHMARKS = ["graph_build", "graph_width", "inference", "memory", "layer_speed", "layer_families", "training", "saving",
              "hostile_loads", "autodiff", "dask_scoring", "streaming_memory", "keras_apps", "repeats",
              "static_layout", "html_view", "onnx_export", "to_python", "model_diff",
              "surgery", "training_steps", "keras_test_parity", "conv_speed", "rnn_speed",
              "norm_pool_speed"]


def main(argv):
    names = [a for a in argv if not a.startswith("-")] or BENCHMARKS
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        sys.exit(f"Unknown benchmark(s) {unknown}; known: {BENCHMARKS}")
    flags = [a for a in argv if a.startswith("-")]
    print(f"threads pinned to {THREADS} for every contender, except in keras_apps (each library's defaults)")
    failed = []
    for name in names:
        print(f"\n== {name} ==", flush=True)
        if subprocess.call([sys.executable, "-m", f"benchmarks.{name}", *flags]) != 0:
            failed.append(name)
    if failed:
        sys.exit(f"benchmarks failed: {failed}")


if __name__ == "__main__":
    main(sys.argv[1:])
