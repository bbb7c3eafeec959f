"""fit's progress: a live bar where someone watches it, one line per epoch where the output is kept.

``verbose=2`` prints one line per epoch. So does ``verbose=1`` wherever its output
is not interactive (a pipe, a file, CI, a notebook kernel without ipywidgets): a
live bar would leave every redraw behind there. A bar is shown only in a terminal
(tqdm's text bar on stdout) or in a Jupyter kernel with ipywidgets (tqdm's widget,
blanked when the epoch ends and followed by the epoch's line, so that a saved
notebook keeps the text and shows no widget).

Keras' ``Progbar`` decides the same way (``sys.stdout.isatty()`` or ipykernel),
but also counts ``"posix" in sys.modules``, which holds on every Linux and macOS,
and it treats ipykernel merely imported as a kernel; here only a running kernel counts."""

import sys
import time

import numpy as np

from engine.training.callbacks import Callback


def verbosity(verbose):
    """The progress fit, evaluate and predict show for their ``verbose`` argument: 0, 1 or 2.

    Args:
        verbose: ``"auto"`` (1, a bar), 0 (nothing), 1 (a bar) or 2 (one line per epoch).

    Example:
        >>> verbosity("auto"), verbosity(2)
        (1, 2)
    """
    if verbose == "auto":
        return 1
    if verbose not in (0, 1, 2):
        raise ValueError(f"verbose must be 'auto', 0, 1 or 2, received {verbose!r}.")
    return verbose


def format_logs(logs):
    """``"loss: 0.1234 - mae: 0.5678"``; a metric with one value per class or
    threshold (F1Score) shows their mean, as Keras' progress bar does."""
    return " - ".join(f"{k}: {np.mean(v) if np.ndim(v) else v:.4f}" for k, v in logs.items())


def _in_jupyter_kernel():
    """Whether this process is a Jupyter kernel's (its output goes to a notebook frontend)."""
    if "ipykernel" not in sys.modules:
        return False
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


def _has_ipywidgets():
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


def _live_bar():
    """The bar class for where the output goes now, or None for one line per epoch."""
    if _in_jupyter_kernel():
        return _WidgetBar if _has_ipywidgets() else None
    return _TerminalBar if getattr(sys.stdout, "isatty", lambda: False)() else None


class _TerminalBar:
    """tqdm's text bar on stdout, left standing with the epoch's summary."""

    def __init__(self, steps, header):
        from tqdm.std import tqdm

        self.tqdm = tqdm(total=steps, desc=header, unit="step", file=sys.stdout, leave=True, dynamic_ncols=True)

    def step(self, postfix):
        self.tqdm.set_postfix_str(postfix, refresh=False)
        self.tqdm.update(1)

    def finish(self, summary):
        self.tqdm.set_postfix_str(summary, refresh=True)
        self.tqdm.close()


class _WidgetBar(_TerminalBar):
    """tqdm's notebook widget, displayed under an id so that the epoch's end can
    blank it before printing the epoch's line: the saved notebook keeps the line,
    and no widget (which shows as ``0%|`` without the widget state)."""

    def __init__(self, steps, header):
        from IPython.display import display
        from tqdm.notebook import tqdm

        self.header = header
        self.tqdm = tqdm(total=steps, desc=header, unit="step", leave=False, display=False)
        self.handle = display(self.tqdm.container, display_id=True)

    def finish(self, summary):
        self.handle.update({"text/plain": ""}, raw=True)
        self.tqdm.close()
        _close_widget(self.tqdm.container)
        print(f"{self.header} - {summary}", flush=True)


def _close_widget(widget):
    """Closes a widget with its children, layouts and styles (closing a box leaves
    them open, and a frontend saving the widget state would keep them)."""
    for child in getattr(widget, "children", ()):
        _close_widget(child)
    for part in (getattr(widget, "layout", None), getattr(widget, "style", None)):
        if part is not None:
            part.close()
    widget.close()


class ProgressLogger(Callback):
    """Shows fit's progress: ``verbose=2`` one line per epoch with its time, loss
    and metrics; ``verbose=1`` a live bar in a terminal or a notebook with
    ipywidgets, else the same line per epoch.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(2,))
        >>> model = Model(x, Dense(1)(x))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> _ = model.fit(np.ones((8, 2)), np.ones((8, 1)), epochs=2, verbose=1)  # doctest: +ELLIPSIS
        Epoch 1/2 - ...s ...ms/step - loss: ...
        Epoch 2/2 - ...s ...ms/step - loss: ...
    """

    def __init__(self, verbose: int):
        super().__init__()
        self.verbose = verbose
        self.bar = None

    def on_train_begin(self, logs=None):
        self.bar_class = _live_bar() if self.verbose == 1 else None

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()
        self.seen = 0
        self.header = f"Epoch {epoch + 1}/{self.params['epochs']}"
        if self.bar_class is not None:
            self.bar = self.bar_class(self.params["steps"], self.header)

    def on_train_batch_end(self, batch, logs=None):
        self.seen = batch + 1
        if self.bar is not None:
            self.bar.step(format_logs(logs or {}))

    def on_epoch_end(self, epoch, logs=None):
        elapsed = time.perf_counter() - self.start
        per_step = elapsed / max(self.seen, 1) * 1000
        summary = f"{elapsed:.2f}s {per_step:.1f}ms/step - {format_logs(logs or {})}"
        if self.bar is None:
            print(f"{self.header} - {summary}", flush=True)
        else:
            self.bar.finish(summary)
            self.bar = None
