"""Training progress: a live tqdm bar per epoch (verbose=1) or one line per epoch (verbose=2)."""

import time

from engine.callbacks import Callback


def _format(logs):
    return " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())


class ProgressLogger(Callback):
    """Shows fit's progress; ``verbose=1``: a tqdm bar (its ``auto`` flavour, so it
    renders in notebooks and terminals) with loss, metrics and time per step;
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
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.params["steps"], desc=header, unit="step", leave=True, dynamic_ncols=True)
        else:
            self.header = header

    def on_train_batch_end(self, batch, logs=None):
        self.seen = batch + 1
        if self.bar is not None:
            self.bar.set_postfix_str(_format(logs or {}), refresh=False)
            self.bar.update(1)

    def on_epoch_end(self, epoch, logs=None):
        elapsed = time.perf_counter() - self.start
        per_step = elapsed / max(self.seen, 1) * 1000
        summary = f"{elapsed:.2f}s {per_step:.1f}ms/step - {_format(logs or {})}"
        if self.bar is not None:
            self.bar.set_postfix_str(summary, refresh=True)
            self.bar.close()
            self.bar = None
        else:
            print(f"{self.header} - {summary}", flush=True)
