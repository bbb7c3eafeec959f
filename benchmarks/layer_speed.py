"""Forward plus backward of single layers against the same arithmetic written
directly in NumPy. Goal (issue 3): Dense 1024->1024 at batch 256 and
BatchNormalization within 1.2x of NumPy."""

from benchmarks.harness import pin_threads

pin_threads()

import sys  # noqa: E402

import numpy as np  # noqa: E402

GOAL = 1.2


def dense_case(batch, units):
    from layers import Dense

    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, units)).astype("float32")
    g = rng.normal(size=(batch, units)).astype("float32")
    layer = Dense(units)
    layer(x)
    w, b = layer.kernel.value, layer.bias.value

    def ours():
        _, cache = layer.forward(x)
        return layer.backward(cache, g)

    def reference():
        z = x @ w + b
        return z, g @ w.T, x.T @ g, g.sum(axis=0)

    return ours, reference


def batchnorm_case(batch, units):
    from layers import BatchNormalization

    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, units)).astype("float32")
    g = rng.normal(size=(batch, units)).astype("float32")
    layer = BatchNormalization()
    layer(x)
    gamma, beta = layer.gamma.value, layer.beta.value
    moving = [layer.moving_mean.value.copy(), layer.moving_variance.value.copy()]

    def ours():
        _, cache = layer.forward(x, training=True)
        return layer.backward(cache, g)

    def reference():
        mean = x.mean(axis=0, keepdims=True)
        var = x.var(axis=0, keepdims=True)
        inv = 1.0 / np.sqrt(var + 1e-3)
        xhat = (x - mean) * inv
        y = xhat * gamma + beta
        moving[0] = moving[0] * 0.99 + mean[0] * 0.01
        moving[1] = moving[1] * 0.99 + var[0] * 0.01
        dxhat = g * gamma
        dx = inv * (dxhat - dxhat.mean(axis=0) - xhat * (dxhat * xhat).mean(axis=0))
        return y, dx, (g * xhat).sum(axis=0), g.sum(axis=0)

    return ours, reference


def main(smoke=False):
    from benchmarks.harness import measure, save

    size = (8, 16) if smoke else (256, 1024)
    rows = []
    print(f"{'layer':>20} {'numpy ms':>10} {'nodeweave ms':>13} {'ratio':>7} {'goal':>6}")
    for name, case in (("Dense", dense_case), ("BatchNormalization", batchnorm_case)):
        ours, reference = case(*size)
        result = measure({"numpy": reference, "nodeweave": ours}, repeats=3 if smoke else 21, number=1 if smoke else 5)
        ms = {k: v["median"] * 1e3 for k, v in result.items()}
        ratio = ms["nodeweave"] / ms["numpy"]
        print(f"{name:>20} {ms['numpy']:10.3f} {ms['nodeweave']:13.3f} {ratio:7.2f} {GOAL:6.2f}")
        rows.append({"layer": name, "batch": size[0], "units": size[1], "seconds": result, "ratio_to_numpy": ratio,
                     "goal": GOAL})
    save("layer_speed", {"rows": rows})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
