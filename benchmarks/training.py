"""Training seconds per epoch on the digits data, nodeweave against PyTorch (CPU,
same threads, same architecture, batch 32, Adam), with the test accuracy each
reaches. Goals (issue 5): at most 1.5x PyTorch per epoch for the 64-128-128-10 MLP
and 2x for the small CNN, with the same accuracy within one point."""

from benchmarks.harness import pin_threads

pin_threads()

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

GOALS = {"MLP 64-128-128-10": 1.5, "digits CNN": 2.0}


def nodeweave_mlp():
    from engine import Input, Model
    from layers import Dense, Flatten

    pixels = Input(shape=(8, 8, 1))
    h = Dense(128, activation="relu")(Flatten()(pixels))
    h = Dense(128, activation="relu")(h)
    return Model(pixels, Dense(10, activation="softmax")(h))


def torch_mlp(torch):
    nn = torch.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))


def main(smoke=False):
    from benchmarks.harness import load_torch, save, summarize
    from benchmarks.layer_families import digits_cnn_torch
    from engine.utils import set_random_seed
    from graph.demo import build_digits_model, load_digits_split

    torch = load_torch()
    (x_train, y_train), (x_test, y_test) = load_digits_split()
    if smoke:
        x_train, y_train = x_train[:64], y_train[:64]
    epochs = 2 if smoke else 12
    rows = []
    print(f"{'model':>20} {'nodeweave s/epoch':>18} {'torch s/epoch':>14} {'ratio':>6} {'goal':>5} "
          f"{'nodeweave acc':>14} {'torch acc':>10}")
    for name, ours_factory, torch_factory in (("MLP 64-128-128-10", nodeweave_mlp, torch_mlp),
                                              ("digits CNN", build_digits_model, digits_cnn_torch)):
        set_random_seed(0)
        model = ours_factory()
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        ours_times, torch_times = [], []
        trainer = None if torch is None else _TorchTrainer(torch, torch_factory(torch), x_train, y_train)
        for _ in range(epochs):  # alternate the contenders epoch by epoch
            start = time.perf_counter()
            model.fit(x_train, y_train, batch_size=32, epochs=1, verbose=0)
            ours_times.append(time.perf_counter() - start)
            if trainer is not None:
                torch_times.append(trainer.epoch())
        ours_accuracy = model.evaluate(x_test, y_test, verbose=0)[1]
        theirs_accuracy = None if trainer is None else trainer.accuracy(x_test, y_test)
        ours = summarize(ours_times[1:] or ours_times)
        theirs = summarize(torch_times[1:] or torch_times) if torch_times else None
        ratio = ours["median"] / theirs["median"] if theirs else None
        cells = f"{theirs['median']:14.3f} {ratio:6.2f}" if theirs else f"{'-':>14} {'-':>6}"
        acc = f"{theirs_accuracy:10.4f}" if theirs_accuracy is not None else f"{'-':>10}"
        print(f"{name:>20} {ours['median']:18.3f} {cells} {GOALS[name]:5.1f} {ours_accuracy:14.4f} {acc}")
        rows.append({"model": name, "epochs": epochs, "nodeweave_seconds_per_epoch": ours,
                     "torch_seconds_per_epoch": theirs, "ratio_to_torch": ratio, "goal": GOALS[name],
                     "nodeweave_test_accuracy": ours_accuracy, "torch_test_accuracy": theirs_accuracy})
    save("training", {"rows": rows, "torch": None if torch is None else torch.__version__})
    return rows


class _TorchTrainer:
    """The same training loop in PyTorch: shuffled batches of 32, Adam(1e-3), cross-entropy."""

    def __init__(self, torch, module, x, y):
        torch.manual_seed(0)
        self.torch, self.module = torch, module
        self.x = torch.tensor(x).permute(0, 3, 1, 2).contiguous()
        self.y = torch.tensor(y, dtype=torch.long)
        self.optimizer = torch.optim.Adam(module.parameters(), lr=1e-3, eps=1e-7)
        self.softmax_output = isinstance(module, torch.nn.Module) and not isinstance(module, torch.nn.Sequential)

    def epoch(self):
        torch = self.torch
        start = time.perf_counter()
        self.module.train()
        order = torch.randperm(len(self.x))
        for begin in range(0, len(order), 32):
            index = order[begin:begin + 32]
            self.optimizer.zero_grad(set_to_none=True)
            out = self.module(self.x[index])
            loss = (torch.nn.functional.nll_loss(torch.log(out.clamp_min(1e-7)), self.y[index]) if self.softmax_output
                    else torch.nn.functional.cross_entropy(out, self.y[index]))
            loss.backward()
            self.optimizer.step()
        return time.perf_counter() - start

    def accuracy(self, x, y):
        torch = self.torch
        self.module.eval()
        with torch.no_grad():
            predicted = self.module(torch.tensor(x).permute(0, 3, 1, 2).contiguous()).argmax(dim=1).numpy()
        return float(np.mean(predicted == y))


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
