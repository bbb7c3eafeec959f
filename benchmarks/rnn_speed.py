"""One training step (forward and backpropagation through time) of LSTM and GRU
against PyTorch's nn.LSTM / nn.GRU (CPU, batch_first, same threads): a 100-step
sequence, batch 64, 32 features, 64 and 128 units, the last output or the whole
sequence returned. Both compute the gradients of the weights and of the inputs
for the same output gradient. Goal (issue 29): at most 1.0x PyTorch."""

from benchmarks.harness import pin_threads

pin_threads()

import sys  # noqa: E402

import numpy as np  # noqa: E402

GOAL = 1.0


def ours_step(kind, units, return_sequences, x, grad):
    """A closure running our layer's forward and backward once."""
    from layers import GRU, LSTM

    layer = {"LSTM": LSTM, "GRU": GRU}[kind](units, return_sequences=return_sequences)
    layer(x[:1])

    def step():
        _, cache = layer.forward(x, training=True)
        return layer.backward(cache, grad)

    return step


def torch_step(torch, kind, units, return_sequences, x, grad):
    """The same step in PyTorch (its GRU applies the reset gate after the matmul, as Keras' default)."""
    torch.manual_seed(0)
    module = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}[kind](x.shape[-1], units, batch_first=True)
    inputs = torch.tensor(x, requires_grad=True)
    grad_out = torch.tensor(grad)

    def step():
        module.zero_grad(set_to_none=True)
        inputs.grad = None
        out, _ = module(inputs)
        (out if return_sequences else out[:, -1]).backward(grad_out)
        return inputs.grad

    return step


def main(smoke=False):
    from benchmarks.harness import THREADS, load_torch, measure, save

    torch = load_torch()
    batch, steps, features = (4, 5, 3) if smoke else (64, 100, 32)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, steps, features)).astype("float32")
    rows = []
    print(f"threads {THREADS}; batch {batch}, {steps} steps, {features} features")
    print(f"{'case':>28} {'nodeweave ms':>13} {'torch ms':>9} {'ratio':>6} {'goal':>5}")
    for kind in ("LSTM", "GRU"):
        for units in (8,) if smoke else (64, 128):
            for return_sequences in (False, True):
                shape = (batch, steps, units) if return_sequences else (batch, units)
                grad = rng.normal(size=shape).astype("float32")
                contenders = {"nodeweave": ours_step(kind, units, return_sequences, x, grad)}
                if torch is not None:
                    contenders["torch"] = torch_step(torch, kind, units, return_sequences, x, grad)
                result = measure(contenders, repeats=3 if smoke else 11)
                ms = {name: value["median"] * 1e3 for name, value in result.items()}
                ratio = ms["nodeweave"] / ms["torch"] if "torch" in ms else None
                case = f"{kind}({units}) sequences={return_sequences}"
                torch_cells = f"{ms['torch']:9.2f} {ratio:6.2f}" if ratio else f"{'-':>9} {'-':>6}"
                print(f"{case:>28} {ms['nodeweave']:13.2f} {torch_cells} {GOAL:5.1f}", flush=True)
                rows.append({"case": case, "layer": kind, "units": units, "return_sequences": return_sequences,
                             "batch": batch, "steps": steps, "features": features, "seconds": result,
                             "ratio_to_torch": ratio, "goal": GOAL})
    save("rnn_speed", {"rows": rows, "torch": None if torch is None else torch.__version__})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
