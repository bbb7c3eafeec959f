"""Automatic differentiation of plain NumPy against gradients written by hand.

Single thread. (1) The tape alone: a Dense written as a user would,
``np.maximum(np.matmul(x, W) + b, 0)`` 784->256 at batch 128 in float32, forward
plus backward (goal: within 1.3x of NumPy by hand), and a 13-op softmax network at
batch 1, where the tracer's cost per op shows (goal: at most 5 us per op). (2) In
layers and models: that custom layer against the built-in Dense through
``forward``/``backward`` (goal: within 2x), and one ``fit`` epoch of a subclassed
784-256-256-10 MLP built from such layers against the functional one of built-in
Dense layers (goal: within 2x). (3) Memory: the traced heap after 100 and after
1,000 training steps of the custom layer (the tape is freed after each step).
"""

from benchmarks.harness import pin_threads

pin_threads()

import sys  # noqa: E402

import numpy as np  # noqa: E402

DENSE_GOAL = 1.3
PER_OP_GOAL_US = 5.0
LAYER_GOAL = 2.0
SMALL_OPS = 13  # matmul add tanh matmul add max subtract exp sum divide getitem log negative


def dense_case(batch, units_in, units):
    from engine import Variable
    from engine.autodiff import GradientTape

    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, units_in)).astype("float32")
    w = Variable((rng.normal(size=(units_in, units)) * 0.05).astype("float32"), name="kernel", path="dense/kernel")
    b = Variable(np.zeros(units, "float32"), name="bias", path="dense/bias")

    def by_hand():
        z = x @ w.value + b.value
        loss = np.maximum(z, 0).sum()
        g = (z > 0).astype("float32")
        return loss, x.T @ g, g.sum(axis=0), g @ w.value.T

    def traced():
        with GradientTape() as tape:
            xt = tape.watch(x)
            loss = np.sum(np.maximum(np.matmul(xt, w) + b, 0))
        return loss, *tape.gradient(loss, [w, b, xt])

    for hand, ours in zip(by_hand()[1:], traced()[1:]):
        assert ours.dtype == np.float32 and np.allclose(hand, ours, rtol=1e-4, atol=1e-4)
    return by_hand, traced


def small_case():
    from engine.autodiff import GradientTape

    rng = np.random.default_rng(0)
    x = rng.normal(size=(1, 8)).astype("float32")
    w1, w2 = (rng.normal(size=(8, 8)).astype("float32") for _ in range(2))
    b1, b2 = np.zeros(8, "float32"), np.zeros(8, "float32")

    def model(x, w1, b1, w2, b2):
        h = np.tanh(np.matmul(x, w1) + b1)
        z = np.matmul(h, w2) + b2
        e = np.exp(z - np.max(z, axis=-1, keepdims=True))
        p = e / np.sum(e, axis=-1, keepdims=True)
        return -np.log(p[0, 3])

    def by_hand():
        h = np.tanh(x @ w1 + b1)
        z = h @ w2 + b2
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        loss = -np.log(p[0, 3])
        dz = p.copy()
        dz[0, 3] -= 1
        da = dz @ w2.T * (1 - h * h)
        return loss, da @ w1.T, x.T @ da, da.sum(0), h.T @ dz, dz.sum(0)

    def traced():
        with GradientTape() as tape:
            leaves = [tape.watch(a) for a in (x, w1, b1, w2, b2)]
            loss = model(*leaves)
        return loss, *tape.gradient(loss, leaves)

    for hand, ours in zip(by_hand()[1:], traced()[1:]):
        assert np.allclose(hand, ours, rtol=1e-4, atol=1e-5)
    return by_hand, traced


def plain_dense_class():
    from engine import Layer

    class PlainDense(Layer):
        """The built-in Dense(units, activation="relu") written in plain NumPy, without a backward."""

        def __init__(self, units):
            super().__init__()
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units))
            self.b = self.add_weight(shape=(self.units,), initializer="zeros")

        def call(self, inputs):
            return np.maximum(np.matmul(inputs, self.w) + self.b, 0)

    return PlainDense


def layer_case(batch, units_in, units):
    from layers import Dense

    x = np.random.default_rng(0).normal(size=(batch, units_in)).astype("float32")
    ours, builtin = plain_dense_class()(units), Dense(units, activation="relu")
    ours(x)
    builtin(x)
    builtin.set_weights(ours.get_weights())

    def step(layer):
        outputs, cache = layer.forward(x)
        return layer.backward(cache, np.ones_like(outputs))

    np.testing.assert_allclose(step(ours)[0], step(builtin)[0], rtol=1e-4, atol=1e-5)
    return (lambda: step(builtin)), (lambda: step(ours))


def mlp_epoch_case(samples):
    from engine import Input, Model
    from layers import Dense

    plain_dense = plain_dense_class()

    class MLP(Model):
        def __init__(self):
            super().__init__()
            self.hidden = [plain_dense(256), plain_dense(256)]
            self.out = Dense(10, activation="softmax")

        def call(self, x):
            return self.out(self.hidden[1](self.hidden[0](x)))

    rng = np.random.default_rng(0)
    x = rng.random((samples, 784), dtype=np.float32)
    y = rng.integers(0, 10, samples)
    inputs = Input(shape=(784,))
    functional = Model(inputs, Dense(10, activation="softmax")(
        Dense(256, activation="relu")(Dense(256, activation="relu")(inputs))))
    subclassed = MLP()
    for model in (functional, subclassed):
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        model.fit(x[:128], y[:128], epochs=1, batch_size=128, verbose=0)
    return ((lambda: functional.fit(x, y, epochs=1, batch_size=128, verbose=0)),
            (lambda: subclassed.fit(x, y, epochs=1, batch_size=128, verbose=0)))


def memory_case(steps):
    """Traced heap (KiB) after 10% of ``steps`` training steps and after all of them."""
    import gc
    import tracemalloc

    from engine import Input, Model

    inputs = Input(shape=(32,))
    model = Model(inputs, plain_dense_class()(8)(inputs))
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((16, 32), "float32"), np.zeros((16, 8), "float32")
    tracemalloc.start()
    readings = []
    for step in range(steps):
        model.train_on_batch(x, y)
        if step + 1 in (steps // 10, steps):
            gc.collect()  # tapes and their Traced values form cycles, which the collector frees in its own time
            readings.append(tracemalloc.get_traced_memory()[0] / 1024)
    tracemalloc.stop()
    return readings


def main(smoke=False):
    from benchmarks.harness import measure, save

    rows = []
    print(f"{'case':>28} {'numpy by hand':>14} {'traced':>10} {'ratio':>7} {'us/op over hand':>16} {'goal':>10}")
    by_hand, traced = dense_case(*((8, 16, 8) if smoke else (128, 784, 256)))
    result = measure({"numpy": by_hand, "traced": traced}, repeats=3 if smoke else 31, number=1 if smoke else 10)
    ms = {k: v["median"] * 1e3 for k, v in result.items()}
    ratio = ms["traced"] / ms["numpy"]
    print(f"{'Dense 784->256 b128 f32':>28} {ms['numpy']:11.3f} ms {ms['traced']:7.3f} ms {ratio:7.2f} {'':>16} "
          f"{DENSE_GOAL:>9.1f}x")
    rows.append({"case": "dense", "seconds": result, "ratio": ratio, "goal": DENSE_GOAL})

    by_hand, traced = small_case()
    result = measure({"numpy": by_hand, "traced": traced}, repeats=3 if smoke else 31, number=10 if smoke else 500)
    us = {k: v["median"] * 1e6 for k, v in result.items()}
    per_op = (us["traced"] - us["numpy"]) / SMALL_OPS
    print(f"{'softmax net b1, 13 ops':>28} {us['numpy']:11.1f} us {us['traced']:7.1f} us "
          f"{us['traced'] / us['numpy']:7.2f} {per_op:16.2f} {PER_OP_GOAL_US:>8.1f}us")
    rows.append({"case": "small", "seconds": result, "ratio": us["traced"] / us["numpy"],
                 "us_per_op": per_op, "goal": PER_OP_GOAL_US})

    print(f"\n{'case':>28} {'built-in':>12} {'plain NumPy':>12} {'ratio':>7} {'goal':>6}")
    builtin, ours = layer_case(*((8, 16, 8) if smoke else (128, 784, 256)))
    result = measure({"built-in": builtin, "plain": ours}, repeats=3 if smoke else 31, number=1 if smoke else 10)
    ratio = result["plain"]["median"] / result["built-in"]["median"]
    print(f"{'layer fwd+bwd 784->256 b128':>28} {result['built-in']['median'] * 1e3:9.3f} ms "
          f"{result['plain']['median'] * 1e3:9.3f} ms {ratio:7.2f} {LAYER_GOAL:5.1f}x")
    rows.append({"case": "custom layer vs Dense", "seconds": result, "ratio": ratio, "goal": LAYER_GOAL})
    functional, subclassed = mlp_epoch_case(256 if smoke else 4096)
    result = measure({"functional": functional, "subclassed": subclassed}, repeats=1 if smoke else 5)
    ratio = result["subclassed"]["median"] / result["functional"]["median"]
    print(f"{'MLP fit epoch, 4096 samples':>28} {result['functional']['median']:10.3f} s "
          f"{result['subclassed']['median']:10.3f} s {ratio:7.2f} {LAYER_GOAL:5.1f}x")
    rows.append({"case": "subclassed MLP epoch vs functional", "seconds": result, "ratio": ratio,
                 "goal": LAYER_GOAL})
    early, late = memory_case(100 if smoke else 1000)
    print(f"\ntraced heap after {10 if smoke else 100} and {100 if smoke else 1000} training steps: "
          f"{early:.1f} KiB, {late:.1f} KiB")
    rows.append({"case": "memory over training steps", "seconds": None, "ratio": late / early, "goal": 1.0,
                 "kib": [early, late]})
    save("autodiff", {"rows": rows})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
