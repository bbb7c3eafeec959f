"""Loading in bounded time and memory (issue 16): how long a config of N layers
takes to replay when its layers are listed in saved, reverse and shuffled order
(the replay is a work queue, so all three should be linear), and the time and
peak memory of a fresh process refusing small files that inflate to gigabytes,
beside the same process loading a genuine model file."""

from benchmarks.harness import pin_threads

pin_threads()

import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import zipfile  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A child that loads one file and reports how long it took and its peak memory.
CHILD = """
import json, resource, sys, time
from engine import ModelFormatError, load_model
start = time.perf_counter()
try:
    load_model(sys.argv[1])
    outcome = "loaded"
except ModelFormatError as error:
    outcome = "refused: " + str(error)[:90]
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "outcome": outcome}))
"""


def chain_config(depth):
    from engine import Input, Model
    from layers import Dense

    x = Input(shape=(8,), name="x")
    y = x
    for index in range(depth):
        y = Dense(8, name=f"d{index}")(y)
    return Model(x, y).get_config()


def replay_orders(depth, repeats):
    from benchmarks.harness import measure
    from engine import Model

    config = chain_config(depth)
    layers = config["layers"]
    shuffled = layers[:1] + random.Random(0).sample(layers[1:], len(layers) - 1)
    orders = {"saved": layers, "reverse": layers[::-1], "shuffled": shuffled}
    result = measure({name: (lambda listed=listed: Model.from_config({**config, "layers": listed}))
                      for name, listed in orders.items()}, repeats=repeats, warmup=0)
    return {name: {k: v / depth * 1e6 for k, v in timing.items()} for name, timing in result.items()}


def hostile_files(folder, bomb_bytes):
    """{label: path}: a genuine model file and small files that inflate to ``bomb_bytes``."""
    from engine import Input, Model
    from layers import Dense

    x = Input(shape=(784,), name="x")
    genuine = os.path.join(folder, "genuine.nw")
    Model(x, Dense(10, name="out")(Dense(256, name="h")(x))).save(genuine)
    with zipfile.ZipFile(genuine) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    files = {"genuine 784-256-10 model": genuine}

    def write(label, replace, huge_member, fill):
        path = os.path.join(folder, f"{len(files)}.nw")
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as target:
            for name, content in members.items():
                if name != huge_member:
                    target.writestr(name, replace.get(name, content))
            if huge_member:
                with target.open(huge_member, "w") as member:
                    piece = fill * 2**22
                    for _ in range(bomb_bytes // len(piece)):
                        member.write(piece)
        files[label] = path

    write(f"config.json inflating to {bomb_bytes >> 20} MiB", {}, "config.json", b" ")
    write(f"weights.npz inflating to {bomb_bytes >> 20} MiB", {}, "weights.npz", b"\0")
    config = json.loads(members["config.json"])
    for layer in config["config"]["layers"]:
        if layer["name"] == "h":
            layer["config"]["units"] = 10**6
    write("config asking for 3 GB of weights", {"config.json": json.dumps(config).encode()}, None, b"")
    return files


def load_in_child(path):
    env = {**os.environ, "PYTHONPATH": ROOT}
    done = subprocess.run([sys.executable, "-c", CHILD, path], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True, timeout=600)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(smoke=False):
    from benchmarks.harness import save

    depth = 200 if smoke else 4000
    print(f"replaying a {depth}-layer config, us per layer (median, spread)")
    replay = replay_orders(depth, repeats=1 if smoke else 3)
    for name, timing in replay.items():
        print(f"{name:>10} {timing['median']:8.1f}  {timing['min']:.1f}-{timing['max']:.1f}")
    rows = [{"case": f"replay {depth} layers, {name} order", "us_per_layer": timing} for name, timing in replay.items()]
    folder = tempfile.mkdtemp()
    print(f"\n{'file':>40} {'KiB':>8} {'ms':>9} {'peak MB':>8}  outcome")
    for label, path in hostile_files(folder, 2**24 if smoke else 1536 * 2**20).items():
        result = load_in_child(path)
        size = os.path.getsize(path)
        print(f"{label:>40} {size / 1024:8.0f} {result['seconds'] * 1e3:9.1f} {result['peak_mb']:8.0f}  "
              f"{result['outcome'][:60]}")
        rows.append({"case": label, "file_bytes": size, **result})
    save("hostile_loads", {"rows": rows})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
