"""Graph construction time against width: one input fanned out to N Dense layers
whose outputs are fanned back in by one Concatenate, plus Model(...); nodeweave
against Keras 3 (numpy backend)."""

from benchmarks.harness import pin_threads

pin_threads()

import os  # noqa: E402
import sys  # noqa: E402

os.environ["KERAS_BACKEND"] = "numpy"


def build_nodeweave(width):
    from engine import Input, Model
    from layers import Concatenate, Dense

    x = Input(shape=(8,))
    return Model(x, Concatenate()([Dense(4)(x) for _ in range(width)]))


def build_keras(width):
    import keras

    x = keras.Input(shape=(8,))
    return keras.Model(x, keras.layers.Concatenate()([keras.layers.Dense(4)(x) for _ in range(width)]))


def main(smoke=False):
    from benchmarks.harness import measure, save

    rows = []
    print(f"{'width':>7} {'nodeweave us/branch':>20} {'keras us/branch':>16} {'keras/nodeweave':>16}")
    for width in ([4, 16] if smoke else [10, 100, 1_000, 10_000]):
        contenders = {"nodeweave": lambda: build_nodeweave(width)}
        if width <= 1_000:
            contenders["keras"] = lambda: build_keras(width)
        result = measure(contenders, repeats=1 if width >= 10_000 else 5, warmup=0 if width >= 1_000 else 1,
                         freeze=False)
        ours = result["nodeweave"]["median"] / width * 1e6
        theirs = result["keras"]["median"] / width * 1e6 if "keras" in result else None
        versus = f"{theirs / ours:16.1f}" if theirs else f"{'not run':>16}"
        print(f"{width:>7} {ours:20.1f} {theirs if theirs else float('nan'):16.1f} {versus}")
        rows.append({"width": width, "seconds": result, "nodeweave_us_per_branch": ours, "keras_us_per_branch": theirs})
    save("graph_width", {"rows": rows})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
