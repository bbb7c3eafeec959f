"""Peak memory (and time) of one ``fit`` epoch over a 2 GiB float32 array on
disk, streamed from a ``numpy.memmap`` against loaded into memory first
(issue 14). Each contender runs in a fresh child process, which reports its
peak resident set size (VmHWM, Linux) after the epoch, so one never counts the
other's memory.
"""

from benchmarks.harness import pin_threads

pin_threads()

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

FEATURES = 256
CHILD = """
import json, sys, time
import numpy as np
from engine import Input, Model
from layers import Dense

path, rows, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
x = np.memmap(path, "float32", "r", shape=(rows, {features}))
if how == "in memory":
    x = np.array(x)
y = np.zeros((rows, 1), "float32")
inputs = Input(shape=({features},))
model = Model(inputs, Dense(1)(Dense(16, activation="relu")(inputs)))
model.compile(optimizer="sgd", loss="mse")
start = time.perf_counter()
model.fit(x, y, batch_size=4096, epochs=1, shuffle=True, verbose=0)
seconds = time.perf_counter() - start
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({{"seconds": seconds, "peak_mb": peak / 1024}}))
"""


def run(path, rows, how):
    out = subprocess.run([sys.executable, "-c", CHILD.format(features=FEATURES), str(path), str(rows), how],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(smoke=False):
    from benchmarks.harness import save

    rows = (64 if smoke else 2048) * 2**20 // (4 * FEATURES)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "x.f32"
        data = np.memmap(path, "float32", "w+", shape=(rows, FEATURES))
        rng = np.random.default_rng(0)
        for start in range(0, rows, 2**16):
            data[start:start + 2**16] = rng.random((min(2**16, rows - start), FEATURES), dtype="float32")
        data.flush()
        del data
        size_mb = rows * FEATURES * 4 / 2**20
        print(f"one shuffled fit epoch over {rows:,} x {FEATURES} float32 ({size_mb:,.0f} MiB), batch 4096")
        print(f"{'data':>10} {'peak RSS MiB':>13} {'seconds':>8}")
        results = []
        for how in ("in memory", "memmap"):
            started = time.perf_counter()
            result = run(path, rows, how)
            print(f"{how:>10} {result['peak_mb']:13,.0f} {result['seconds']:8.2f}"
                  f"  (process {time.perf_counter() - started:.1f} s)")
            results.append({"data": how, "array_mb": size_mb, **result})
    print(f"results: {save('streaming_memory', {'rows': results})}")


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
