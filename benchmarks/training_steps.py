"""One training step (forward, loss, backward, Adam update), nodeweave against
PyTorch CPU on the same architecture and batch (issue 29): seconds per step,
medians of alternating runs, and their ratio.

Threads: ``NODEWEAVE_BENCH_THREADS=1`` (the default) pins BLAS, OpenMP,
nodeweave's own kernels and torch to one thread; ``NODEWEAVE_BENCH_THREADS=all``
leaves every library at its own default (nodeweave: ``engine.num_threads()``,
torch: ``torch.get_num_threads()``), which is what a user gets. The results go
to ``training_steps.json``, or ``training_steps_threads_all.json`` for ``all``.

ResNet50 at batch 16 is timed differently: both contenders in one process took
4.7 GB, and this shared machine's out-of-memory killer ended the run. So each
contender runs alone in a fresh subprocess (``--alone NAME``), one after the
other, which builds its model and batch, resets the peak resident set size
(writing 5 to ``/proc/self/clear_refs``), runs ``ALONE_STEPS`` steps and
reports their times (the first, which creates the optimizer's slots, left
out of the median) and its peak memory: ``VmHWM`` (peak RSS, from
``/proc/self/status``) minus ``VmRSS`` before the first step, the memory the
steps need, BLAS buffers, gradients and optimizer slots included.

Twins: weights are drawn by each library (timing only); both use Adam(1e-3,
eps=1e-7). ResNet50 puts the stride of a downsampling block on its first 1x1
convolution in both (Keras' ``keras.applications`` placement; torchvision v1.5
puts it on the 3x3), with biases on the convolutions as Keras has them.
Keras 3 on TensorFlow, the issue's yardstick for the GAN step, is not one of
our dependencies: ``benchmarks/gan_keras_tf.py`` times that step in an
interpreter that has TensorFlow. Keras 3 on JAX is not a contender either: the same
GAN step written with ``stateless_call`` and ``jax.jit`` (as ``fit`` compiles
it) took 135 to 165 s per step on one XLA thread, on a machine with a load of
16 on 2 cores, which would make every run of this benchmark last 15 minutes.

Usage: ``python -m benchmarks.training_steps [CASE ...] [--smoke]``, CASE being
names of ``GOALS`` (default: all; a subset still writes the results file).
"""

import os

from benchmarks.harness import THREADS, pin_threads

if THREADS != "all":
    pin_threads()

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

# Goals of issue 29 (ratio to PyTorch per step).
GOALS = {"digits CNN": 1.0, "small ResNet": 1.0, "MobileNet blocks": 1.0, "ResNet50": 1.2, "LSTM": 1.0, "GRU": 1.0,
         "GAN step": None}
ALONE_STEPS = 4
ALONE = ("ResNet50",)  # cases whose contenders each run alone in a subprocess
LATENT = 128


def load_torch():
    """PyTorch pinned to THREADS, or at its default thread count for ``all``; None when not installed."""
    try:
        import torch
    except ImportError:
        return None
    if THREADS != "all":
        torch.set_num_threads(int(THREADS))
    return torch


# ------------------------------------------------------------------ nodeweave models
def small_resnet():
    """ResNet-20 for CIFAR: 3 stages of 16/32/64 channels, 3 basic blocks each (0.27M parameters)."""
    from engine import Input, Model
    from layers import Activation, Add, BatchNormalization, Conv2D, Dense, GlobalAveragePooling2D

    def conv_bn(x, filters, kernel, name, strides=1):
        x = Conv2D(filters, kernel, strides=strides, padding="same", use_bias=False, name=f"{name}_conv")(x)
        return BatchNormalization(name=f"{name}_bn")(x)

    images = Input(shape=(32, 32, 3))
    x = Activation("relu", name="stem_relu")(conv_bn(images, 16, 3, "stem"))
    for stage, filters in enumerate((16, 32, 64)):
        for block in range(3):
            strides, name = 2 if stage and not block else 1, f"stage{stage + 1}_block{block + 1}"
            y = Activation("relu", name=f"{name}_1_relu")(conv_bn(x, filters, 3, f"{name}_1", strides))
            y = conv_bn(y, filters, 3, f"{name}_2")
            shortcut = conv_bn(x, filters, 1, f"{name}_shortcut", strides) if strides > 1 else x
            x = Activation("relu", name=f"{name}_out")(Add(name=f"{name}_add")([shortcut, y]))
    return Model(images, Dense(10, activation="softmax")(GlobalAveragePooling2D()(x)), name="small_resnet")


MOBILE_FILTERS = ((64, 1), (128, 2), (128, 1), (256, 2))  # (pointwise filters, depthwise stride) per block


def mobilenet_blocks():
    """Conv 3x3/2 (32) -> [DepthwiseConv2D 3x3 + BN + ReLU + Conv 1x1 + BN + ReLU] x 4 -> GAP -> Dense(10)."""
    from engine import Input, Model
    from layers import BatchNormalization, Conv2D, Dense, DepthwiseConv2D, GlobalAveragePooling2D, ReLU

    images = Input(shape=(32, 32, 3))
    x = Conv2D(32, 3, strides=2, padding="same", name="stem_conv")(images)
    for block, (filters, strides) in enumerate(MOBILE_FILTERS, 1):
        x = DepthwiseConv2D(3, strides=strides, padding="same", use_bias=False, name=f"block{block}_depthwise")(x)
        x = ReLU(name=f"block{block}_depthwise_relu")(BatchNormalization(name=f"block{block}_depthwise_bn")(x))
        x = Conv2D(filters, 1, use_bias=False, name=f"block{block}_pointwise")(x)
        x = ReLU(name=f"block{block}_pointwise_relu")(BatchNormalization(name=f"block{block}_pointwise_bn")(x))
    return Model(images, Dense(10, activation="softmax")(GlobalAveragePooling2D()(x)), name="mobilenet_blocks")


def recurrent(kind, steps):
    """LSTM(128) or GRU(128) over ``steps`` steps of 32 features, then Dense(1)."""
    from engine import Input, Model
    from layers import GRU, LSTM, Dense

    sequence = Input(shape=(steps, 32))
    return Model(sequence, Dense(1)((LSTM if kind == "LSTM" else GRU)(128)(sequence)), name=kind.lower())


def gan_models():
    """keras-io's "customizing what happens in fit" GAN: (generator, discriminator) for 28x28x1 images."""
    from engine import Input
    from engine.network.sequential import Sequential
    from layers import Conv2D, Conv2DTranspose, Dense, GlobalMaxPooling2D, LeakyReLU, Reshape

    discriminator = Sequential([
        Input(shape=(28, 28, 1)), Conv2D(64, 3, strides=2, padding="same", name="d_conv3x3_1"),
        LeakyReLU(0.2, name="d_leaky_1"), Conv2D(128, 3, strides=2, padding="same", name="d_conv3x3_2"),
        LeakyReLU(0.2, name="d_leaky_2"), GlobalMaxPooling2D(name="d_max_pool"), Dense(1, name="d_dense")],
        name="discriminator")
    generator = Sequential([
        Input(shape=(LATENT,)), Dense(7 * 7 * 128, name="g_dense"), LeakyReLU(0.2, name="g_leaky_1"),
        Reshape((7, 7, 128), name="g_reshape"),
        Conv2DTranspose(128, 4, strides=2, padding="same", name="g_transpose_1"), LeakyReLU(0.2, name="g_leaky_2"),
        Conv2DTranspose(128, 4, strides=2, padding="same", name="g_transpose_2"), LeakyReLU(0.2, name="g_leaky_3"),
        Conv2D(1, 7, padding="same", activation="sigmoid", name="g_conv7x7")], name="generator")
    return generator, discriminator


class GanStep:
    """One step of the guide's ``train_step``: the discriminator on fake and real
    images (one tape), then the generator through the discriminator (one tape)."""

    def __init__(self, images):
        from engine.training.losses import BinaryCrossentropy
        from engine.training.optimizers import Adam

        self.generator, self.discriminator = gan_models()
        self.images = images
        self.loss = BinaryCrossentropy(from_logits=True)
        self.d_optimizer, self.g_optimizer = Adam(3e-4, name="d_adam"), Adam(3e-4, name="g_adam")
        self.rng = np.random.default_rng(0)

    def __call__(self):
        from engine import GradientTape

        batch = len(self.images)
        fake = self.generator(self.rng.normal(size=(batch, LATENT)).astype("float32"))
        combined = np.concatenate([fake, self.images])
        labels = np.concatenate([np.ones((batch, 1), "float32"), np.zeros((batch, 1), "float32")])
        labels += 0.05 * self.rng.uniform(size=labels.shape).astype("float32")
        weights = self.discriminator.trainable_weights
        with GradientTape() as tape:
            d_loss = self.loss(labels, self.discriminator(combined))
        self.d_optimizer.apply(tape.gradient(d_loss, weights), weights)
        noise = self.rng.normal(size=(batch, LATENT)).astype("float32")
        weights = self.generator.trainable_weights
        with GradientTape() as tape:
            g_loss = self.loss(np.zeros((batch, 1), "float32"), self.discriminator(self.generator(noise)))
        self.g_optimizer.apply(tape.gradient(g_loss, weights), weights)


# ------------------------------------------------------------------ PyTorch twins
def small_resnet_torch(torch):
    nn = torch.nn

    def conv_bn(c_in, c_out, kernel, stride=1):
        return nn.Sequential(nn.Conv2d(c_in, c_out, kernel, stride, kernel // 2, bias=False),
                             nn.BatchNorm2d(c_out, eps=1e-3, momentum=0.01))

    class Block(nn.Module):
        def __init__(self, c_in, c_out, stride):
            super().__init__()
            self.first, self.second = conv_bn(c_in, c_out, 3, stride), conv_bn(c_out, c_out, 3)
            self.shortcut = conv_bn(c_in, c_out, 1, stride) if stride > 1 else nn.Identity()

        def forward(self, x):
            return torch.relu(self.shortcut(x) + self.second(torch.relu(self.first(x))))

    blocks, c_in = [], 16
    for stage, filters in enumerate((16, 32, 64)):
        for block in range(3):
            blocks.append(Block(c_in, filters, 2 if stage and not block else 1))
            c_in = filters
    return nn.Sequential(conv_bn(3, 16, 3), nn.ReLU(), *blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(64, 10))


def mobilenet_blocks_torch(torch):
    nn = torch.nn
    layers, c_in = [nn.Conv2d(3, 32, 3, 2, 1)], 32
    for filters, stride in MOBILE_FILTERS:
        layers += [nn.Conv2d(c_in, c_in, 3, stride, 1, groups=c_in, bias=False), nn.BatchNorm2d(c_in, eps=1e-3),
                   nn.ReLU(), nn.Conv2d(c_in, filters, 1, bias=False), nn.BatchNorm2d(filters, eps=1e-3), nn.ReLU()]
        c_in = filters
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c_in, 10))


def resnet50_torch(torch, classes=1000):
    """ResNet50 v1 with Keras' block layout: stride on the first 1x1, biased convolutions, BN eps 1.001e-5."""
    nn = torch.nn

    def bn(channels):
        return nn.BatchNorm2d(channels, eps=1.001e-5)

    class Bottleneck(nn.Module):
        def __init__(self, c_in, filters, stride, conv_shortcut):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(c_in, filters, 1, stride), bn(filters), nn.ReLU(),
                                      nn.Conv2d(filters, filters, 3, 1, 1), bn(filters), nn.ReLU(),
                                      nn.Conv2d(filters, 4 * filters, 1), bn(4 * filters))
            self.shortcut = (nn.Sequential(nn.Conv2d(c_in, 4 * filters, 1, stride), bn(4 * filters)) if conv_shortcut
                             else nn.Identity())

        def forward(self, x):
            return torch.relu(self.shortcut(x) + self.body(x))

    stages, c_in = [], 64
    for stage, (filters, count) in enumerate(zip((64, 128, 256, 512), (3, 4, 6, 3))):
        for block in range(count):
            stages.append(Bottleneck(c_in, filters, 1 if stage == 0 or block else 2, block == 0))
            c_in = 4 * filters
    return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3), bn(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1), *stages,
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, classes), nn.Softmax(dim=1))


def recurrent_torch(torch, kind):
    nn = torch.nn

    class LastStep(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = (nn.LSTM if kind == "LSTM" else nn.GRU)(32, 128, batch_first=True)
            self.head = nn.Linear(128, 1)

        def forward(self, x):
            return self.head(self.cell(x)[0][:, -1])

    return LastStep()


class GanStepTorch:
    """The same GAN step in PyTorch (NCHW)."""

    def __init__(self, torch, images):
        nn = torch.nn
        self.torch = torch
        self.discriminator = nn.Sequential(nn.Conv2d(1, 64, 3, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 128, 3, 2, 1),
                                           nn.LeakyReLU(0.2), nn.AdaptiveMaxPool2d(1), nn.Flatten(), nn.Linear(128, 1))
        self.generator = nn.Sequential(
            nn.Linear(LATENT, 7 * 7 * 128), nn.LeakyReLU(0.2), nn.Unflatten(1, (128, 7, 7)),
            nn.ConvTranspose2d(128, 128, 4, 2, 1), nn.LeakyReLU(0.2), nn.ConvTranspose2d(128, 128, 4, 2, 1),
            nn.LeakyReLU(0.2), nn.Conv2d(128, 1, 7, padding=3), nn.Sigmoid())
        self.images = torch.tensor(images).permute(0, 3, 1, 2).contiguous()
        self.d_optimizer = torch.optim.Adam(self.discriminator.parameters(), lr=3e-4, eps=1e-7)
        self.g_optimizer = torch.optim.Adam(self.generator.parameters(), lr=3e-4, eps=1e-7)

    def __call__(self):
        torch = self.torch
        loss = torch.nn.functional.binary_cross_entropy_with_logits
        batch = len(self.images)
        with torch.no_grad():
            fake = self.generator(torch.randn(batch, LATENT))
        combined = torch.cat([fake, self.images])
        labels = torch.cat([torch.ones(batch, 1), torch.zeros(batch, 1)])
        labels += 0.05 * torch.rand(labels.shape)
        self.d_optimizer.zero_grad(set_to_none=True)
        loss(self.discriminator(combined), labels).backward()
        self.d_optimizer.step()
        self.g_optimizer.zero_grad(set_to_none=True)
        loss(self.discriminator(self.generator(torch.randn(batch, LATENT))), torch.zeros(batch, 1)).backward()
        self.g_optimizer.step()


# ------------------------------------------------------------------ the cases
def cases(smoke, only=()):
    """``[(name, batch)]`` of issue 29 (smaller sizes in smoke mode), those named in ``only`` when given."""
    if smoke:
        chosen = [(name, 2) for name in GOALS]
    else:
        chosen = [("digits CNN", 32), ("small ResNet", 32), ("small ResNet", 128), ("MobileNet blocks", 32),
                  ("MobileNet blocks", 128), ("ResNet50", 16), ("LSTM", 64), ("GRU", 64), ("GAN step", 64)]
    unknown = set(only) - set(GOALS)
    if unknown:
        raise ValueError(f"Unknown case(s) {sorted(unknown)}; known: {list(GOALS)}.")
    return [(name, batch) for name, batch in chosen if not only or name in only]


def shape_and_classes(name, smoke):
    """(input shape without the batch, number of classes or None for a regression)."""
    sequence_steps = 5 if smoke else 100
    size = 32 if smoke else 224
    return {"digits CNN": ((8, 8, 1), 10), "small ResNet": ((32, 32, 3), 10), "MobileNet blocks": ((32, 32, 3), 10),
            "ResNet50": ((size, size, 3), 1000)}.get(name, ((sequence_steps, 32), None))


def ours_model(name, smoke):
    from graph.demo import build_digits_model
    from layers.applications import ResNet50

    if name == "digits CNN":
        return build_digits_model()
    if name == "small ResNet":
        return small_resnet()
    if name == "MobileNet blocks":
        return mobilenet_blocks()
    if name == "ResNet50":
        return ResNet50(weights=None, input_shape=shape_and_classes(name, smoke)[0])
    return recurrent(name, shape_and_classes(name, smoke)[0][0])


def torch_model(torch, name):
    from benchmarks.layer_families import digits_cnn_torch

    if name == "digits CNN":
        return digits_cnn_torch(torch)
    if name == "small ResNet":
        return small_resnet_torch(torch)
    if name == "MobileNet blocks":
        return mobilenet_blocks_torch(torch)
    if name == "ResNet50":
        return resnet50_torch(torch)
    return recurrent_torch(torch, name)


def batch_data(shape, classes, batch):
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(batch, *shape)).astype("float32")
    y = (rng.integers(0, classes, size=batch) if classes else rng.normal(size=(batch, 1))).astype(
        "int64" if classes else "float32")
    return x, y


def ours_step(name, batch, smoke):
    """A function running one nodeweave training step (``train_on_batch``, or the GAN's two tapes)."""
    if name == "GAN step":
        return GanStep(np.random.default_rng(0).uniform(size=(batch, 28, 28, 1)).astype("float32"))
    model = ours_model(name, smoke)
    shape, classes = shape_and_classes(name, smoke)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy" if classes else "mse")
    x, y = batch_data(shape, classes, batch)
    step = _train_on_batch(model, x, y)
    step.model = model
    return step


def _train_on_batch(model, x, y):
    def step():
        model.train_on_batch(x, y)

    return step


def torch_step(torch, name, batch, smoke):
    """A function running the same training step in PyTorch."""
    torch.manual_seed(0)
    if name == "GAN step":
        return GanStepTorch(torch, np.random.default_rng(0).uniform(size=(batch, 28, 28, 1)).astype("float32"))
    shape, classes = shape_and_classes(name, smoke)
    module = torch_model(torch, name)
    x, y = batch_data(shape, classes, batch)
    x = torch.tensor(x)
    if len(shape) == 3:
        x = x.permute(0, 3, 1, 2).contiguous()
    y = torch.tensor(y)
    optimizer = torch.optim.Adam(module.parameters(), lr=1e-3, eps=1e-7)
    # Ours all end in a softmax; these two twins do too, the others give logits to cross_entropy's own softmax.
    probabilities = name in ("digits CNN", "ResNet50")

    def step():
        module.train()
        optimizer.zero_grad(set_to_none=True)
        out = module(x)
        if classes is None:
            loss = torch.nn.functional.mse_loss(out, y)
        elif probabilities:
            loss = torch.nn.functional.nll_loss(torch.log(out.clamp_min(1e-7)), y)
        else:
            loss = torch.nn.functional.cross_entropy(out, y)
        loss.backward()
        optimizer.step()

    return step


# ------------------------------------------------------------------ one contender alone
def run_alone(contender, name, batch, smoke):
    """Runs in a fresh process: ``{"seconds": [one per step], "peak_mb": peak RSS growth}`` of one contender."""
    step = torch_step(load_torch(), name, batch, smoke) if contender == "torch" else ours_step(name, batch, smoke)
    before = _status_kb("VmRSS")
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # resets VmHWM to the current RSS
    seconds = []
    for _ in range(2 if smoke else ALONE_STEPS):
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    return {"seconds": seconds, "peak_mb": (_status_kb("VmHWM") - before) / 1024}


def _status_kb(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field} line; peak memory needs Linux.")


def measure_alone(contender, name, batch, smoke):
    """``run_alone`` in a fresh subprocess."""
    argv = [sys.executable, "-m", "benchmarks.training_steps", "--alone", contender, name, str(batch)]
    run = subprocess.run(argv + (["--smoke"] if smoke else []), capture_output=True, text=True, check=True,
                         env=os.environ)
    return json.loads(run.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ main
def main(smoke=False, only=()):
    from benchmarks.harness import measure, save, summarize
    from engine import num_threads

    torch = load_torch()
    rows = []
    print(f"threads: {THREADS} (nodeweave: {num_threads()}, torch: {torch.get_num_threads() if torch else '-'})")
    print(f"{'case':>18} {'batch':>5} {'nodeweave ms':>13} {'torch ms':>9} {'ratio':>6} {'goal':>5}"
          f" {'nodeweave MB':>13} {'torch MB':>9}")
    for name, batch in cases(smoke, only):
        memory = None
        if name in ALONE:
            alone = {c: measure_alone(c, name, batch, smoke) for c in ("nodeweave", "torch")
                     if c == "nodeweave" or torch is not None}
            result = {c: summarize(run["seconds"][1:]) for c, run in alone.items()}
            memory = {c: run["peak_mb"] for c, run in alone.items()}
        else:
            contenders = {"nodeweave": ours_step(name, batch, smoke)}
            if torch is not None:
                contenders["torch"] = torch_step(torch, name, batch, smoke)
            result = measure(contenders, repeats=1 if smoke else _repeats(name), warmup=0 if smoke else 1)
            del contenders
        rows.append(_report(name, batch, result, memory))
    suffix = "" if THREADS == "1" else f"_threads_{THREADS}"
    save("training_steps" + suffix, {"rows": rows, "torch": None if torch is None else torch.__version__,
                                     "torch_threads": None if torch is None else torch.get_num_threads()})
    return rows


def _repeats(name):
    return 5 if name == "GAN step" else 11


def _report(name, batch, result, memory):
    ours = result["nodeweave"]["median"]
    theirs = result["torch"]["median"] if "torch" in result else None
    ratio = ours / theirs if theirs else None
    goal = GOALS[name]
    cells = f"{theirs * 1e3:9.1f} {ratio:6.2f}" if theirs else f"{'-':>9} {'-':>6}"
    mb = (f"{memory['nodeweave']:13.0f} {memory.get('torch', float('nan')):9.0f}" if memory else "")
    print(f"{name:>18} {batch:>5} {ours * 1e3:13.1f} {cells} {goal or '-':>5} {mb}", flush=True)
    return {"case": name, "batch": batch, "seconds": result, "ratio_to_torch": ratio, "goal": goal,
            "peak_rss_mb": memory}


if __name__ == "__main__":
    smoke = "--smoke" in sys.argv
    if "--alone" in sys.argv:
        contender, name, batch = sys.argv[sys.argv.index("--alone") + 1:][:3]
        print(json.dumps(run_alone(contender, name, int(batch), smoke)))
    else:
        main(smoke=smoke, only=[a for a in sys.argv[1:] if not a.startswith("-")])
