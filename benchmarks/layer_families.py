"""Forward plus backward per layer family, nodeweave against PyTorch (CPU, same
threads), on the same shapes and the same weights. Goals (issue 4): Conv2D 3x3
32->64 on a 32x32x32 batch within 2x, LSTM(128) over 50 steps within 3x."""

from benchmarks.harness import pin_threads

pin_threads()

import sys  # noqa: E402

import numpy as np  # noqa: E402

GOALS = {"Conv2D 3x3 32->64": 2.0, "LSTM(128) x 50 steps": 3.0, "digits CNN": 2.0}


def cases(smoke):
    """(name, nodeweave layer or model, input shape, torch module factory, layout note)."""
    from layers import LSTM, BatchNormalization, Conv2D, Dense, MaxPooling2D, MultiHeadAttention

    batch = 2 if smoke else 32
    conv_size = 8 if smoke else 32
    steps = 5 if smoke else 50
    return [
        ("Dense 1024->1024", Dense(1024), (batch * 8, 1024), "dense"),
        ("Conv2D 3x3 32->64", Conv2D(64, 3, padding="same"), (batch, conv_size, conv_size, 32), "conv"),
        ("MaxPooling2D 2x2", MaxPooling2D(2), (batch, conv_size, conv_size, 64), "pool"),
        ("BatchNormalization", BatchNormalization(), (batch, conv_size, conv_size, 64), "batchnorm"),
        ("LSTM(128) x 50 steps", LSTM(128), (batch, steps, 32), "lstm"),
        ("MultiHeadAttention 4x32", MultiHeadAttention(num_heads=4, key_dim=32), (batch, 16 if smoke else 64, 128), "mha"),
    ]


def torch_twin(torch, kind, layer, shape):
    """The same computation in PyTorch, with nodeweave's weights copied in (NCHW / time-major handled)."""
    nn = torch.nn
    weights = [torch.tensor(w) for w in layer.get_weights()]
    if kind == "dense":
        module = nn.Linear(shape[-1], layer.units)
        module.weight.data, module.bias.data = weights[0].T.contiguous(), weights[1]
        return module, lambda x: x
    if kind == "conv":
        module = nn.Conv2d(shape[-1], layer.filters, 3, padding=1)
        module.weight.data, module.bias.data = weights[0].permute(3, 2, 0, 1).contiguous(), weights[1]
        return module, lambda x: x.permute(0, 3, 1, 2).contiguous()
    if kind == "pool":
        return nn.MaxPool2d(2), lambda x: x.permute(0, 3, 1, 2).contiguous()
    if kind == "batchnorm":
        return nn.BatchNorm2d(shape[-1], eps=1e-3, momentum=0.01), lambda x: x.permute(0, 3, 1, 2).contiguous()
    if kind == "lstm":
        module = nn.LSTM(shape[-1], layer.units, batch_first=True)
        return _last_output(module), lambda x: x
    if kind == "mha":
        module = nn.MultiheadAttention(shape[-1], 4, batch_first=True)
        return _self_attention(module), lambda x: x
    raise ValueError(kind)


def _last_output(lstm):
    import torch

    class LastOutput(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = lstm

        def forward(self, x):
            return self.lstm(x)[0][:, -1]

    return LastOutput()


def _self_attention(mha):
    import torch

    class SelfAttention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = mha

        def forward(self, x):
            return self.mha(x, x, x, need_weights=False)[0]

    return SelfAttention()


def ours_step(layer, x, kind):
    arg = [x, x] if kind == "mha" else x

    def step():
        outputs, cache = layer.forward(arg, training=True)
        return layer.backward(cache, np.ones_like(outputs))

    return step


def torch_step(torch, module, layout, x):
    data = layout(torch.tensor(x)).requires_grad_(True)

    def step():
        module.zero_grad(set_to_none=True)
        data.grad = None
        module(data).sum().backward()

    return step


def digits_cnn_case(smoke):
    from graph.demo import build_digits_model

    model = build_digits_model()
    x = np.random.default_rng(0).uniform(size=(32, 8, 8, 1)).astype("float32")
    return model, x


def digits_cnn_torch(torch):
    nn = torch.nn

    class Digits(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(1, 32, 3, padding=1)
            self.norm = nn.BatchNorm2d(32, eps=1e-3, momentum=0.01)
            self.wide = nn.Conv2d(32, 32, 3, padding=1)
            self.narrow = nn.Conv2d(32, 32, 1)
            self.hidden = nn.Linear(512, 64)
            self.out = nn.Linear(64, 10)
            self.drop = nn.Dropout(0.25)

        def forward(self, x):
            h = self.norm(torch.relu(self.stem(x)))
            h = torch.relu(self.wide(h)) + torch.relu(self.narrow(h))
            h = self.drop(torch.flatten(nn.functional.max_pool2d(h, 2), 1))
            return torch.softmax(self.out(torch.relu(self.hidden(h))), dim=-1)

    return Digits()


def main(smoke=False):
    from benchmarks.harness import load_torch, measure, save

    torch = load_torch()
    rng = np.random.default_rng(0)
    rows = []
    print(f"{'forward+backward':>24} {'nodeweave ms':>13} {'torch ms':>9} {'ratio':>6} {'goal':>5}")
    work = [(name, layer, shape, kind) for name, layer, shape, kind in cases(smoke)]
    for name, layer, shape, kind in work:
        x = rng.normal(size=shape).astype("float32")
        layer([x, x] if kind == "mha" else x)
        contenders = {"nodeweave": ours_step(layer, x, kind)}
        if torch is not None:
            module, layout = torch_twin(torch, kind, layer, shape)
            contenders["torch"] = torch_step(torch, module, layout, x)
        rows.append(_report(name, measure(contenders, repeats=3 if smoke else 11), GOALS.get(name)))
    model, x = digits_cnn_case(smoke)
    contenders = {"nodeweave": ours_step(model, x, "model")}
    if torch is not None:
        contenders["torch"] = torch_step(torch, digits_cnn_torch(torch), lambda t: t.permute(0, 3, 1, 2).contiguous(), x)
    rows.append(_report("digits CNN", measure(contenders, repeats=3 if smoke else 21, number=1 if smoke else 5),
                        GOALS["digits CNN"]))
    save("layer_families", {"rows": rows, "torch": None if torch is None else torch.__version__})
    return rows


def _report(name, result, goal):
    ours = result["nodeweave"]["median"] * 1e3
    theirs = result["torch"]["median"] * 1e3 if "torch" in result else None
    ratio = ours / theirs if theirs else None
    cells = (f"{theirs:9.2f} {ratio:6.2f}" if theirs else f"{'-':>9} {'-':>6}")
    print(f"{name:>24} {ours:13.2f} {cells} {goal if goal else '':>5}")
    return {"case": name, "seconds": result, "ratio_to_torch": ratio, "goal": goal}


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
