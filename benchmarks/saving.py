"""Model save and load time and file size: nodeweave's .nw against Keras 3's .keras
(jax backend), for the digits CNN and a 784-256-256-10 MLP with the same weights.

A smoke run (``--smoke``, tests/benchmarks) checks that every row is measured and
written, with Keras on its NumPy backend, which loads without compiling a kernel
per weight shape."""

from benchmarks.harness import pin_threads

pin_threads()

import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

os.environ["KERAS_BACKEND"] = "numpy" if "--smoke" in sys.argv else "jax"


def keras_twin(model):
    """The same architecture in Keras, rebuilt from nodeweave's layer configs of Dense-only models,
    or the digits CNN written out by hand."""
    import keras

    if model.name == "digits_cnn":
        pixels = keras.Input(shape=(8, 8, 1))
        stem = keras.layers.BatchNormalization()(keras.layers.Conv2D(32, 3, padding="same", activation="relu")(pixels))
        merged = keras.layers.add([keras.layers.Conv2D(32, 3, padding="same", activation="relu")(stem),
                                   keras.layers.Conv2D(32, 1, activation="relu")(stem)])
        hidden = keras.layers.Flatten()(keras.layers.MaxPooling2D(2)(merged))
        hidden = keras.layers.Dense(64, activation="relu")(keras.layers.Dropout(0.25)(hidden))
        twin = keras.Model(pixels, keras.layers.Dense(10, activation="softmax")(hidden))
    else:
        x = keras.Input(shape=(784,))
        h = keras.layers.Dense(256, activation="relu")(x)
        h = keras.layers.Dense(256, activation="relu")(h)
        twin = keras.Model(x, keras.layers.Dense(10, activation="softmax")(h))
    twin.set_weights(model.get_weights())
    return twin


def main(smoke=False):
    import keras

    from benchmarks.harness import measure, save
    from benchmarks.inference import nodeweave_mlp
    from engine import load_model
    from graph.demo import build_digits_model

    folder = tempfile.mkdtemp()
    rows = []
    print(f"{'model':>12} {'':>6} {'nodeweave':>10} {'keras':>10} {'ratio':>6}")
    for model in (build_digits_model(), nodeweave_mlp()):
        twin = keras_twin(model)
        ours_path, theirs_path = os.path.join(folder, "m.nw"), os.path.join(folder, "m.keras")
        repeats = 3 if smoke else 11
        saved = measure({"nodeweave": lambda: model.save(ours_path), "keras": lambda: twin.save(theirs_path)},
                        repeats=repeats)
        loaded = measure({"nodeweave": lambda: load_model(ours_path),
                          "keras": lambda: keras.saving.load_model(theirs_path)}, repeats=repeats)
        sizes = {"nodeweave": os.path.getsize(ours_path), "keras": os.path.getsize(theirs_path)}
        for what, result in (("save", saved), ("load", loaded)):
            ms = {k: v["median"] * 1e3 for k, v in result.items()}
            print(f"{model.name:>12} {what + ' ms':>6} {ms['nodeweave']:10.1f} {ms['keras']:10.1f} "
                  f"{ms['nodeweave'] / ms['keras']:6.2f}")
        print(f"{model.name:>12} {'KiB':>6} {sizes['nodeweave'] / 1024:10.1f} {sizes['keras'] / 1024:10.1f} "
              f"{sizes['nodeweave'] / sizes['keras']:6.2f}")
        rows.append({"model": model.name, "params": model.count_params(), "save_seconds": saved,
                     "load_seconds": loaded, "file_bytes": sizes})
    save("saving", {"rows": rows, "keras": keras.__version__, "keras_backend": keras.backend.backend()})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
