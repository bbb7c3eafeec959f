"""Convolution layers' training step (forward, then the input and kernel
gradients) against PyTorch's CPU convolutions, case by case, NHWC float32.

The cases are the convolutions of the models issue 29 names: the digits CNN,
a CIFAR-sized ResNet, a MobileNet block, ResNet50's stem and bottleneck, and
keras-io's GAN. Goal: at most PyTorch's time, with one thread and with all
(``NODEWEAVE_BENCH_THREADS``).
"""

from benchmarks.harness import pin_threads

pin_threads()

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

GOAL = 1.0


def cases(smoke=False):
    """``(name, batch, (h, w, c), our layer factory, torch module factory)`` per case.

    PyTorch's padding is the symmetric one that gives Keras' output size."""
    from layers import Conv1D, Conv2D, Conv2DTranspose, DepthwiseConv2D, SeparableConv2D

    def conv(filters, kernel, **kwargs):
        return lambda: Conv2D(filters, kernel, **kwargs)

    def tconv(c, filters, kernel, stride=1, padding=0, dilation=1, groups=1):
        return lambda nn: nn.Conv2d(c, filters, kernel, stride, padding, dilation, groups)

    def separable(nn, c, filters):
        return nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, groups=c, bias=False), nn.Conv2d(c, filters, 1))

    table = [
        ("digits 3x3 1->32", 32, (8, 8, 1), conv(32, 3, padding="same"), tconv(1, 32, 3, padding=1)),
        ("digits 3x3 32->32", 32, (8, 8, 32), conv(32, 3, padding="same"), tconv(32, 32, 3, padding=1)),
        ("digits 1x1 32->32", 32, (8, 8, 32), conv(32, 1), tconv(32, 32, 1)),
        ("cifar 3x3 16 b32", 32, (32, 32, 16), conv(16, 3, padding="same"), tconv(16, 16, 3, padding=1)),
        ("cifar 3x3 32 b32", 32, (16, 16, 32), conv(32, 3, padding="same"), tconv(32, 32, 3, padding=1)),
        ("cifar 3x3/2 32->64 b32", 32, (16, 16, 32), conv(64, 3, strides=2, padding="same"),
         tconv(32, 64, 3, 2, padding=1)),
        ("cifar 3x3 64 b32", 32, (8, 8, 64), conv(64, 3, padding="same"), tconv(64, 64, 3, padding=1)),
        ("cifar 3x3 16 b128", 128, (32, 32, 16), conv(16, 3, padding="same"), tconv(16, 16, 3, padding=1)),
        ("cifar 3x3 64 b128", 128, (8, 8, 64), conv(64, 3, padding="same"), tconv(64, 64, 3, padding=1)),
        ("mobilenet dw 3x3 b32", 32, (32, 32, 64), lambda: DepthwiseConv2D(3, padding="same"),
         tconv(64, 64, 3, padding=1, groups=64)),
        ("mobilenet 1x1 64->128 b32", 32, (32, 32, 64), conv(128, 1), tconv(64, 128, 1)),
        ("mobilenet dw 3x3 b128", 128, (32, 32, 64), lambda: DepthwiseConv2D(3, padding="same"),
         tconv(64, 64, 3, padding=1, groups=64)),
        ("mobilenet 1x1 64->128 b128", 128, (32, 32, 64), conv(128, 1), tconv(64, 128, 1)),
        ("separable 3x3 64->128 b32", 32, (32, 32, 64), lambda: SeparableConv2D(128, 3, padding="same"),
         lambda nn: separable(nn, 64, 128)),
        ("dilated 3x3 d2 32 b32", 32, (16, 16, 32), conv(32, 3, padding="same", dilation_rate=2),
         tconv(32, 32, 3, padding=2, dilation=2)),
        ("resnet50 stem 7x7/2 b16", 16, (224, 224, 3), conv(64, 7, strides=2, padding="same"),
         tconv(3, 64, 7, 2, padding=3)),
        ("resnet50 1x1 64->256 b16", 16, (56, 56, 64), conv(256, 1), tconv(64, 256, 1)),
        ("resnet50 1x1 256->64 b16", 16, (56, 56, 256), conv(64, 1), tconv(256, 64, 1)),
        ("resnet50 3x3 64 b16", 16, (56, 56, 64), conv(64, 3, padding="same"), tconv(64, 64, 3, padding=1)),
        ("resnet50 1x1/2 512->1024 b16", 16, (28, 28, 512), conv(1024, 1, strides=2),
         tconv(512, 1024, 1, 2)),
        ("gan convT 4x4/2 7->14 b64", 64, (7, 7, 128), lambda: Conv2DTranspose(128, 4, strides=2, padding="same"),
         lambda nn: nn.ConvTranspose2d(128, 128, 4, 2, 1)),
        ("gan convT 4x4/2 14->28 b64", 64, (14, 14, 128),
         lambda: Conv2DTranspose(128, 4, strides=2, padding="same"), lambda nn: nn.ConvTranspose2d(128, 128, 4, 2, 1)),
        ("gan 7x7 128->1 b64", 64, (28, 28, 128), conv(1, 7, padding="same"), tconv(128, 1, 7, padding=3)),
        ("gan disc 3x3/2 1->64 b64", 64, (28, 28, 1), conv(64, 3, strides=2, padding="same"),
         tconv(1, 64, 3, 2, padding=1)),
        ("gan disc 3x3/2 64->128 b64", 64, (14, 14, 64), conv(128, 3, strides=2, padding="same"),
         tconv(64, 128, 3, 2, padding=1)),
        ("conv1d k5 64 len100 b64", 64, (100, 64), lambda: Conv1D(64, 5, padding="same"),
         lambda nn: nn.Conv1d(64, 64, 5, padding=2)),
    ]
    if smoke:
        return [(name, 2, shape, ours, theirs) for name, _, shape, ours, theirs in table[:3] + table[-6:-4]]
    return table


def ours_steps(layer, x, grad):
    """Our forward alone, and forward plus backward."""
    def forward():
        return layer.forward(x, training=True)

    def step():
        _, cache = layer.forward(x, training=True)
        return layer.backward(cache, grad)

    return forward, step


def torch_steps(torch, module, x, grad):
    """PyTorch's forward alone (no graph kept), and forward plus backward, in its NCHW layout."""
    def nchw(a):
        return torch.tensor(np.moveaxis(a, -1, 1).copy())

    tx, tgrad = nchw(x).requires_grad_(True), nchw(grad)

    def forward():
        with torch.no_grad():
            return module(tx)

    def step():
        tx.grad = None
        module.zero_grad(set_to_none=True)
        module(tx).backward(tgrad)

    return forward, step


def cpu_timed(contenders):
    """The contenders, each also recording the CPU time its calls take (all threads of the
    process): on a machine shared with other jobs, waiting for a core does not count."""
    seconds = {name: [] for name in contenders}

    def timed(name, fn):
        def run():
            start = time.process_time()
            fn()
            seconds[name].append(time.process_time() - start)
        return run

    return {name: timed(name, fn) for name, fn in contenders.items()}, seconds


def main(smoke=False):
    from benchmarks.harness import load_torch, measure, save, summarize

    torch = load_torch()
    rng = np.random.default_rng(0)
    rows = []
    print(f"{'case':>30} {'ours fwd ms':>11} {'ours step ms':>12} {'torch fwd ms':>12} {'torch step ms':>13} "
          f"{'ratio':>6} {'ours cpu':>9} {'torch cpu':>9} {'cpu r.':>6}")
    for name, batch, shape, make_ours, make_torch in cases(smoke):
        x = rng.normal(size=(batch,) + shape).astype("float32")
        layer = make_ours()
        grad = rng.normal(size=np.shape(layer(x))).astype("float32")
        contenders = dict(zip(("ours forward", "ours step"), ours_steps(layer, x, grad)))
        if torch is not None:
            contenders.update(zip(("torch forward", "torch step"), torch_steps(torch, make_torch(torch.nn), x, grad)))
        contenders, cpu_seconds = cpu_timed(contenders)
        result = measure(contenders, repeats=3 if smoke else 9)
        ms = {k: v["median"] * 1e3 for k, v in result.items()}
        cpu_ms = {k: statistics.median(v) * 1e3 for k, v in cpu_seconds.items()}
        ratio = ms["ours step"] / ms["torch step"] if torch is not None else None
        cpu_ratio = cpu_ms["ours step"] / cpu_ms["torch step"] if torch is not None else None
        theirs = (f"{ms['torch forward']:12.2f} {ms['torch step']:13.2f} {ratio:6.2f} "
                  f"{cpu_ms['ours step']:9.2f} {cpu_ms['torch step']:9.2f} {cpu_ratio:6.2f}" if torch else "")
        print(f"{name:>30} {ms['ours forward']:11.2f} {ms['ours step']:12.2f} {theirs}", flush=True)
        rows.append({"case": name, "batch": batch, "input_shape": list(shape), "seconds": result,
                     "cpu_seconds": {k: summarize(v) for k, v in cpu_seconds.items()},
                     "ratio_to_torch": ratio, "cpu_ratio_to_torch": cpu_ratio, "goal": GOAL})
    save("conv_speed", {"rows": rows, "torch": None if torch is None else torch.__version__})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
