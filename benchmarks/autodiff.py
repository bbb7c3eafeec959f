"""Automatic differentiation of plain NumPy against the same gradients written by hand.

Two cases, single thread, forward plus backward: a Dense layer written as a user
would, ``np.maximum(np.matmul(x, W) + b, 0)`` 784->256 at batch 128 in float32
(goal: within 1.3x of NumPy by hand), and a 13-op softmax network at batch 1 with
8 units, where the tracer's cost per op shows (goal: at most 5 us per op over
NumPy by hand).
"""

from benchmarks.harness import pin_threads

pin_threads()

import sys

import numpy as np

DENSE_GOAL = 1.3
PER_OP_GOAL_US = 5.0
SMALL_OPS = 13  # matmul add tanh matmul add max subtract exp sum divide getitem log negative


def dense_case(batch, units_in, units):
    from engine import Variable
    from engine.autodiff import GradientTape

    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, units_in)).astype("float32")
    w = Variable((rng.normal(size=(units_in, units)) * 0.05).astype("float32"), "kernel", "dense/kernel")
    b = Variable(np.zeros(units, "float32"), "bias", "dense/bias")

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
    rows.append({"case": "dense", "seconds": result, "ratio_to_numpy": ratio, "goal": DENSE_GOAL})

    by_hand, traced = small_case()
    result = measure({"numpy": by_hand, "traced": traced}, repeats=3 if smoke else 31, number=10 if smoke else 500)
    us = {k: v["median"] * 1e6 for k, v in result.items()}
    per_op = (us["traced"] - us["numpy"]) / SMALL_OPS
    print(f"{'softmax net b1, 13 ops':>28} {us['numpy']:11.1f} us {us['traced']:7.1f} us "
          f"{us['traced'] / us['numpy']:7.2f} {per_op:16.2f} {PER_OP_GOAL_US:>8.1f}us")
    rows.append({"case": "small", "seconds": result, "ratio_to_numpy": us["traced"] / us["numpy"],
                 "us_per_op": per_op, "goal": PER_OP_GOAL_US})
    save("autodiff", {"rows": rows})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
