"""Training progress: a live tqdm bar per epoch (verbose=1) or one line per epoch (verbose=2)."""

import time

import numpy as np

from engine.callbacks import Callback


def _bar_class():
    """tqdm's bar: its notebook widget where a notebook has ipywidgets (the
    ``notebook`` extra), else the plain text bar (``tqdm.auto`` would first warn
    "IProgress not found" in a notebook without ipywidgets)."""
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        from tqdm.std import tqdm

        return tqdm
    from tqdm.auto import tqdm

    return tqdm


def format_logs(logs):
    """``"loss: 0.1234 - mae: 0.5678"``; a metric with one value per class or
    threshold (F1Score) shows their mean, as Keras' progress bar does."""
    return " - ".join(f"{k}: {np.mean(v) if np.ndim(v) else v:.4f}" for k, v in logs.items())


class ProgressLogger(Callback):
    """Shows fit's progress; ``verbose=1``: a tqdm bar with loss, metrics and
    time per step (a widget in a notebook with ipywidgets, text elsewhere);
    ``verbose=2``: one line per epoch."""

    def __init__(self, verbose):
        super().__init__()
        self.verbose = verbose
        self.bar = None

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()
        self.seen = 0
        header = f"Epoch {epoch + 1}/{self.params['epochs']}"
        if self.verbose == 1:
            self.bar = _bar_class()(total=self.params["steps"], desc=header, unit="step", leave=True,
                                    dynamic_ncols=True)
        else:
            self.header = header

    def on_train_batch_end(self, batch, logs=None):
        self.seen = batch + 1
        if self.bar is not None:
            self.bar.set_postfix_str(format_logs(logs or {}), refresh=False)
            self.bar.update(1)

    def on_epoch_end(self, epoch, logs=None):
        elapsed = time.perf_counter() - self.start
        per_step = elapsed / max(self.seen, 1) * 1000
        summary = f"{elapsed:.2f}s {per_step:.1f}ms/step - {format_logs(logs or {})}"
        if self.bar is not None:
            self.bar.set_postfix_str(summary, refresh=True)
            self.bar.close()
            self.bar = None
        else:
            print(f"{self.header} - {summary}", flush=True)
