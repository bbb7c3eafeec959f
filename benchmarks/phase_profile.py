"""Where a training step's time goes: seconds per layer and phase (forward,
backward, and call for inference outside a tape) and in the optimizer's update, summed over N steps, as a table sorted
by time with each row's share of the step (issue 29). Seconds of CPU time (``time.process_time``, every
thread of the process), which other processes on a shared machine do not inflate as they do wall time.

The timing wraps the ``call``, ``forward`` and ``backward`` methods of each
layer instance (and each optimizer's ``apply``) for the run and restores them after;
the engine is not changed. What no wrapper sees (the loss, the tape's own
bookkeeping, metrics, the plan's glue) is the ``other`` row. The models and
steps are those of benchmarks/training_steps.py; threads as there
(``NODEWEAVE_BENCH_THREADS``, 1 by default).

Usage: ``python -m benchmarks.phase_profile [MODEL ...] [--smoke]`` where MODEL
is one of ``PROFILED``' names (default: all of them).
"""

from benchmarks.harness import THREADS, pin_threads

if THREADS != "all":
    pin_threads()

import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402

# (case of benchmarks.training_steps, batch, steps summed)
PROFILED = {"digits CNN": ("digits CNN", 32, 20), "small ResNet": ("small ResNet", 32, 5),
            "ResNet50": ("ResNet50", 16, 2), "GAN step": ("GAN step", 64, 2)}
TOP_ROWS = 12


class PhaseTimer:
    """Context manager: times ``call``/``forward``/``backward`` of ``layers`` and ``apply`` of ``optimizers``.

    ``seconds[(name, kind, phase)]`` sums the self time of every call made
    inside the block: a timed method that runs another one (a layer's
    ``forward`` that runs its ``call``) is charged without the inner one's
    time, so the rows add up to the time they cover. ``call`` is the
    inference phase (a model called outside a tape). The wrappers are removed
    on exit.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(2, name="d")(x))
        >>> model.compile(optimizer="adam", loss="mse")
        >>> with PhaseTimer(leaf_layers(model), [model.optimizer]) as timer:
        ...     _ = model.train_on_batch(np.ones((4, 3)), np.zeros((4, 2)))
        >>> sorted(phase for _, _, phase in timer.seconds)
        ['backward', 'forward', 'update']
        >>> "forward" in vars(model.get_layer("d"))
        False
    """

    METHODS = (("call", "call"), ("forward", "forward"), ("backward", "backward"))

    def __init__(self, layers, optimizers):
        self.targets = [(layer, layer.name, method, phase) for layer in layers for method, phase in self.METHODS]
        self.targets += [(optimizer, optimizer.name, "apply", "update") for optimizer in optimizers]
        self.seconds = defaultdict(float)
        self._inner = []  # per timed call running: the time of the timed calls inside it

    def __enter__(self):
        for owner, name, method, phase in self.targets:
            vars(owner)[method] = self._timed(getattr(owner, method), (name, type(owner).__name__, phase))
        return self

    def __exit__(self, *exc_info):
        for owner, _, method, _ in self.targets:
            del vars(owner)[method]

    def _timed(self, method, key):
        seconds, inner = self.seconds, self._inner

        def timed(*args, **kwargs):
            inner.append(0.0)
            start = time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                elapsed = time.process_time() - start
                seconds[key] += elapsed - inner.pop()
                if inner:
                    inner[-1] += elapsed

        return timed


def leaf_layers(model):
    """The layers of ``model`` that compute, nested models opened (their own
    forward only calls their layers', which are timed instead)."""
    found = []
    for layer in model.layers:
        if hasattr(layer, "plan"):
            found += leaf_layers(layer)
        elif type(layer).__name__ != "InputLayer":
            found.append(layer)
    return found


def profile(name, batch, steps, smoke=False):
    """Runs ``steps`` training steps of case ``name`` under a PhaseTimer; returns (rows, seconds per step).

    Each row is ``{"layer", "type", "phase", "seconds", "share"}`` (seconds
    summed over the steps; share of the total step time), sorted by time, with
    an ``other`` row for what no wrapper saw."""
    from benchmarks.training_steps import ours_step

    step = ours_step(name, batch, smoke)
    if name == "GAN step":
        layers = leaf_layers(step.generator) + leaf_layers(step.discriminator)
        optimizers = [step.d_optimizer, step.g_optimizer]
    else:
        layers, optimizers = leaf_layers(step.model), [step.model.optimizer]
    step()  # warm-up: builds the optimizer's slots and the plans
    with PhaseTimer(layers, optimizers) as timer:
        start = time.process_time()
        for _ in range(steps):
            step()
        total = time.process_time() - start
    rows = [{"layer": layer, "type": kind, "phase": phase, "seconds": seconds, "share": seconds / total}
            for (layer, kind, phase), seconds in timer.seconds.items()]
    other = total - sum(row["seconds"] for row in rows)
    rows.append({"layer": "other", "type": "loss, tape, glue", "phase": "-", "seconds": other, "share": other / total})
    return sorted(rows, key=lambda row: -row["seconds"]), total / steps


def by_type(rows):
    """The rows summed per (layer type, phase), sorted by time."""
    sums = defaultdict(float)
    for row in rows:
        sums[(row["type"], row["phase"])] += row["seconds"]
    total = sum(sums.values())
    return sorted(({"type": kind, "phase": phase, "seconds": s, "share": s / total} for (kind, phase), s in sums.items()),
                  key=lambda row: -row["seconds"])


def main(names, smoke=False):
    from benchmarks.harness import save

    results = []
    for name in names:
        case, batch, steps = PROFILED[name]
        if smoke:
            batch, steps = 2, 1
        rows, per_step = profile(case, batch, steps, smoke)
        print(f"\n{name}, batch {batch}: {per_step * 1e3:.1f} ms per step over {steps} steps, threads {THREADS}")
        _table(rows[:TOP_ROWS], ("layer", "type"))
        print("  per layer type:")
        types = by_type(rows)
        _table(types[:TOP_ROWS], ("type",))
        results.append({"model": name, "batch": batch, "steps": steps, "seconds_per_step": per_step, "rows": rows,
                        "by_type": types})
    save("phase_profile", {"rows": results})
    return results


def _table(rows, labels):
    for row in rows:
        label = "  ".join(f"{row[key]:<22}" for key in labels)
        print(f"  {label} {row['phase']:<9} {row['seconds'] * 1e3:10.1f} ms {row['share'] * 100:6.1f}%")


if __name__ == "__main__":
    chosen = [a for a in sys.argv[1:] if not a.startswith("-")]
    unknown = [a for a in chosen if a not in PROFILED]
    if unknown:
        sys.exit(f"Unknown model(s) {unknown}; known: {list(PROFILED)}")
    main(chosen or list(PROFILED), smoke="--smoke" in sys.argv)
