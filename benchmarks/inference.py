"""Eager inference overhead: model(x) for a 784-256-256-10 MLP against the same
arithmetic written directly in NumPy, and Keras 3 (numpy backend) doing the same.
Goal (issue 2): at most 1.05x NumPy at batch 4096, 1.3x at 128, 3x at 1."""

from benchmarks.harness import pin_threads

pin_threads()

import os  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

os.environ["KERAS_BACKEND"] = "numpy"
SIZES = (784, 256, 256, 10)
GOALS = {1: 3.0, 128: 1.3, 4096: 1.05}


def nodeweave_mlp():
    from engine import Input, Model
    from layers import Dense

    x = Input(shape=(SIZES[0],))
    h = Dense(SIZES[1], activation="relu")(x)
    h = Dense(SIZES[2], activation="relu")(h)
    return Model(x, Dense(SIZES[3], activation="softmax")(h))


def keras_mlp(weights):
    import keras

    x = keras.Input(shape=(SIZES[0],))
    h = keras.layers.Dense(SIZES[1], activation="relu")(x)
    h = keras.layers.Dense(SIZES[2], activation="relu")(h)
    model = keras.Model(x, keras.layers.Dense(SIZES[3], activation="softmax")(h))
    model.set_weights(weights)
    return model


def numpy_mlp(weights):
    w1, b1, w2, b2, w3, b3 = weights

    def run(x):
        h = np.maximum(x @ w1 + b1, 0)
        h = np.maximum(h @ w2 + b2, 0)
        z = h @ w3 + b3
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    return run


def main(smoke=False):
    from benchmarks.harness import measure, save

    model = nodeweave_mlp()
    weights = model.get_weights()
    reference = numpy_mlp(weights)
    keras_model = keras_mlp(weights)
    rows = []
    print(f"{'batch':>6} {'numpy us':>10} {'nodeweave us':>13} {'ratio':>7} {'goal':>6} {'keras us':>10} {'keras ratio':>12}")
    for batch in ([1, 128] if smoke else [1, 128, 4096]):
        x = np.random.default_rng(0).normal(size=(batch, SIZES[0])).astype("float32")
        np.testing.assert_allclose(model(x), reference(x), rtol=1e-5, atol=1e-6)
        number = max(1, 4096 // batch) if not smoke else 2
        result = measure({
            "numpy": lambda: reference(x),
            "nodeweave": lambda: model(x),
            "keras": lambda: keras_model(x),
        }, repeats=3 if smoke else 15, number=number)
        us = {k: v["median"] * 1e6 for k, v in result.items()}
        r, rk = us["nodeweave"] / us["numpy"], us["keras"] / us["numpy"]
        print(f"{batch:>6} {us['numpy']:10.1f} {us['nodeweave']:13.1f} {r:7.2f} {GOALS[batch]:6.2f} {us['keras']:10.1f} {rk:12.2f}")
        rows.append({"batch": batch, "seconds": result, "ratio_to_numpy": r, "keras_ratio_to_numpy": rk,
                     "goal": GOALS[batch]})
    save("inference", {"sizes": SIZES, "rows": rows})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
