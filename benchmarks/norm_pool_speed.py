"""BatchNormalization, pooling and the optimizers' update step against PyTorch (issue 29).

Per case, the forward plus backward of one layer (or one optimizer step over a
model's weights) in nodeweave and in PyTorch, timed side by side. PyTorch gets
its own default layout (NCHW, contiguous); nodeweave gets NHWC. Threads are
pinned for both (``NODEWEAVE_BENCH_THREADS``). Goal: ratio <= 1.0 with one thread
and with all threads. ``peak_mb`` is the memory nodeweave allocates for the step
beyond its inputs (tracemalloc, which NumPy reports to), a count the machine's
load does not change.
"""

from benchmarks.harness import pin_threads

pin_threads()

import sys  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

GOAL = 1.0

# (case, layer kind, NHWC input shape)
LAYER_CASES = [
    ("BN train digits", "bn", (32, 8, 8, 32)),
    ("BN train cifar", "bn", (32, 32, 32, 16)),
    ("BN train cifar b128", "bn", (128, 16, 16, 64)),
    ("BN train r50 stem", "bn", (16, 112, 112, 64)),
    ("BN train r50 56x56x256", "bn", (16, 56, 56, 256)),
    ("BN infer r50 56x56x256", "bn_infer", (16, 56, 56, 256)),
    ("MaxPool 2x2 digits", "max2", (32, 8, 8, 32)),
    ("MaxPool 2x2 cifar b128", "max2", (128, 32, 32, 16)),
    ("MaxPool 3x3/2 same r50", "max3", (16, 112, 112, 64)),
    ("AvgPool 2x2 cifar b128", "avg2", (128, 32, 32, 16)),
    ("GAP cifar b128", "gap", (128, 8, 8, 64)),
    ("GAP r50", "gap", (16, 7, 7, 2048)),
    ("GMP gan", "gmp", (64, 7, 7, 128)),
]
SMOKE_SHAPES = {"bn": (2, 4, 4, 3), "bn_infer": (2, 4, 4, 3), "max2": (2, 4, 4, 3), "max3": (2, 5, 5, 3),
                "avg2": (2, 4, 4, 3), "gap": (2, 3, 3, 4), "gmp": (2, 3, 3, 4)}


def nodeweave_layer(kind):
    from layers import (AveragePooling2D, BatchNormalization, GlobalAveragePooling2D, GlobalMaxPooling2D,
                        MaxPooling2D)

    return {
        "bn": lambda: BatchNormalization(),
        "bn_infer": lambda: BatchNormalization(),
        "max2": lambda: MaxPooling2D(2),
        "max3": lambda: MaxPooling2D(3, strides=2, padding="same"),
        "avg2": lambda: AveragePooling2D(2),
        "gap": lambda: GlobalAveragePooling2D(),
        "gmp": lambda: GlobalMaxPooling2D(),
    }[kind]()


def torch_module(torch, kind, channels):
    nn = torch.nn
    return {
        "bn": lambda: nn.BatchNorm2d(channels, eps=1e-3, momentum=0.01).train(),
        "bn_infer": lambda: nn.BatchNorm2d(channels, eps=1e-3, momentum=0.01).eval(),
        "max2": lambda: nn.MaxPool2d(2),
        "max3": lambda: nn.MaxPool2d(3, stride=2, padding=1),
        "avg2": lambda: nn.AvgPool2d(2),
        "gap": lambda: nn.AdaptiveAvgPool2d(1),
        "gmp": lambda: nn.AdaptiveMaxPool2d(1),
    }[kind]()


def layer_step(kind, shape):
    """Forward and backward of one nodeweave layer on random NHWC inputs."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape).astype("float32")
    layer = nodeweave_layer(kind)
    y = layer(x)
    g = rng.normal(size=y.shape).astype("float32")
    training = kind != "bn_infer"

    def step():
        _, cache = layer.forward(x, training=training)
        return layer.backward(cache, g)

    return step, x, g


def torch_layer_step(torch, kind, x, g):
    module = torch_module(torch, kind, x.shape[-1])
    data = torch.tensor(x).permute(0, 3, 1, 2).contiguous().requires_grad_(True)
    grad = torch.tensor(g.reshape(g.shape[0], 1, 1, -1) if g.ndim == 2 else g).permute(0, 3, 1, 2).contiguous()

    def step():
        module.zero_grad(set_to_none=True)
        data.grad = None
        module(data).backward(grad)

    return step


OPTIMIZER_CASES = [("Adam", "adam"), ("SGD momentum", "sgd"), ("RMSprop", "rmsprop")]


def model_weight_shapes(smoke):
    """The trainable weight shapes of a CIFAR ResNet-sized model (smoke) or ResNet50."""
    if smoke:
        return [(3, 3, 3, 16), (16,), (16,), (3, 3, 16, 16), (64, 10), (10,)]
    from layers.applications.resnet import ResNet50

    return [w.shape for w in ResNet50(weights=None).trainable_weights]


def optimizer_steps(torch, kind, shapes):
    """One update step of a nodeweave optimizer and of its torch twin over weights of ``shapes``."""
    from engine.training.optimizers import SGD, Adam, RMSprop
    from engine.network.variable import Variable

    rng = np.random.default_rng(0)
    values = [rng.normal(size=s).astype("float32") for s in shapes]
    grads = [rng.normal(size=s).astype("float32") * 1e-2 for s in shapes]
    variables = [Variable(v.copy(), name=f"w{i}") for i, v in enumerate(values)]
    ours = {"adam": lambda: Adam(1e-3), "sgd": lambda: SGD(1e-2, momentum=0.9),
            "rmsprop": lambda: RMSprop(1e-3)}[kind]()
    ours.build(variables)
    contenders = {"nodeweave": lambda: ours.apply(grads, variables)}
    if torch is not None:
        params = [torch.nn.Parameter(torch.tensor(v)) for v in values]
        for param, grad in zip(params, grads):
            param.grad = torch.tensor(grad)
        theirs = {"adam": lambda: torch.optim.Adam(params, 1e-3, eps=1e-7),
                  "sgd": lambda: torch.optim.SGD(params, 1e-2, momentum=0.9),
                  "rmsprop": lambda: torch.optim.RMSprop(params, 1e-3, alpha=0.9, eps=1e-7)}[kind]()
        contenders["torch"] = theirs.step
    return contenders


def peak_mb(fn):
    """The peak of the memory ``fn`` allocates (tracemalloc), in MB."""
    fn()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def report(name, result, peak, rows, extra):
    ours = result["nodeweave"]["median"] * 1e3
    theirs = result["torch"]["median"] * 1e3 if "torch" in result else None
    ratio = None if theirs is None else ours / theirs
    print(f"{name:>24} {ours:13.3f} {theirs if theirs is not None else float('nan'):9.3f} "
          f"{ratio if ratio is not None else float('nan'):6.2f} {peak:8.1f}")
    rows.append({"case": name, **extra, "seconds": result, "ratio_to_torch": ratio, "goal": GOAL,
                 "peak_mb": peak})


def main(smoke=False):
    from benchmarks.harness import load_torch, measure, save

    torch = load_torch()
    repeats = 3 if smoke else 9
    rows = []
    print(f"{'forward+backward':>24} {'nodeweave ms':>13} {'torch ms':>9} {'ratio':>6} {'peak MB':>8}")
    for name, kind, shape in LAYER_CASES:
        shape = SMOKE_SHAPES[kind] if smoke else shape
        ours, x, g = layer_step(kind, shape)
        contenders = {"nodeweave": ours}
        if torch is not None:
            contenders["torch"] = torch_layer_step(torch, kind, x, g)
        result = measure(contenders, repeats=repeats, number=1)
        report(name, result, peak_mb(ours), rows, {"shape": list(shape)})
    shapes = model_weight_shapes(smoke)
    size = sum(int(np.prod(s)) for s in shapes)
    for name, kind in OPTIMIZER_CASES:
        contenders = optimizer_steps(torch, kind, shapes)
        result = measure(contenders, repeats=repeats)
        report(f"{name} step {size / 1e6:.1f}M", result, peak_mb(contenders["nodeweave"]), rows,
               {"parameters": size})
    save("norm_pool_speed", {"rows": rows, "torch": None if torch is None else torch.__version__})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
