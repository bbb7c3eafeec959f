"""Callbacks: code that runs at fixed points of fit, evaluate and predict."""

import csv
import math
import os

import numpy as np

from engine.files.keras_format.weights_file import SAVE_SUFFIXES


class Callback:
    """Base class of callbacks: override the hooks you need.

    ``fit``, ``evaluate`` and ``predict`` call ``on_<train|test|predict>_begin``
    and ``_end``, ``on_epoch_begin``/``_end`` and the ``_batch_begin``/``_end``
    hooks, each with a ``logs`` dict (the metrics so far at batch and epoch ends).
    ``self.model`` is the model being run and ``self.params`` holds ``epochs``,
    ``steps``, ``batch_size`` and ``samples``; setting
    ``self.model.stop_training = True`` ends ``fit`` after the current batch.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(2,))
        >>> model = Model(inputs, Dense(1)(inputs))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((8, 2)), np.zeros((8, 1))
        >>> class LossPrinter(Callback):
        ...     def on_epoch_end(self, epoch, logs=None):
        ...         print(epoch, round(logs["loss"], 3))
        >>> _ = model.fit(x, y, epochs=2, verbose=0, callbacks=[LossPrinter()])
        0 ...
        1 ...
    """

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): ...
    def on_train_end(self, logs=None): ...
    def on_epoch_begin(self, epoch, logs=None): ...
    def on_epoch_end(self, epoch, logs=None): ...
    def on_train_batch_begin(self, batch, logs=None): ...
    def on_train_batch_end(self, batch, logs=None): ...
    def on_test_begin(self, logs=None): ...
    def on_test_end(self, logs=None): ...
    def on_test_batch_begin(self, batch, logs=None): ...
    def on_test_batch_end(self, batch, logs=None): ...
    def on_predict_begin(self, logs=None): ...
    def on_predict_end(self, logs=None): ...
    def on_predict_batch_begin(self, batch, logs=None): ...
    def on_predict_batch_end(self, batch, logs=None): ...


_HOOKS = [name for name in vars(Callback) if name.startswith("on_")]


class CallbackList:
    """Calls a hook on every callback in order (what ``fit`` uses to run its callbacks).

    Args:
        callbacks: the Callback objects.
        model: the model, given to each by ``set_model``.
        params: the run's parameters, given to each by ``set_params``.

    Example:
        >>> seen = []
        >>> hooks = CallbackList([LambdaCallback(on_train_begin=lambda logs: seen.append("begin"))], None, {})
        >>> hooks.on_train_begin({})
        >>> seen
        ['begin']
    """

    def __init__(self, callbacks, model, params):
        self.callbacks = list(callbacks)
        for callback in self.callbacks:
            callback.set_model(model)
            callback.set_params(params)

    def __getattr__(self, name):
        if name not in _HOOKS:
            raise AttributeError(name)

        def call_all(*args, **kwargs):
            for callback in self.callbacks:
                getattr(callback, name)(*args, **kwargs)

        return call_all


class History(Callback):
    """Records the logs of every epoch in ``history`` (``{"loss": [...], ...}``); ``fit`` returns one.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(2,))
        >>> model = Model(inputs, Dense(1)(inputs))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((8, 2)), np.zeros((8, 1))
        >>> history = model.fit(x, y, epochs=3, verbose=0)
        >>> history.epoch, sorted(history.history), len(history.history["loss"])
        ([0, 1, 2], ['loss'], 3)
    """

    def __init__(self):
        super().__init__()
        self.epoch, self.history = [], {}

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


class _Monitor:
    """Whether a monitored value improved, by ``mode`` (min, max, or auto from its name)."""

    def __init__(self, owner, monitor, mode, min_delta):
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"{owner} expects mode 'auto', 'min' or 'max', received {mode!r}.")
        if mode == "auto":
            mode = "max" if any(k in monitor for k in ("acc", "auc", "precision", "recall")) else "min"
        self.owner, self.monitor, self.mode, self.min_delta = owner, monitor, mode, abs(min_delta)

    def value(self, logs):
        logs = logs or {}
        if self.monitor not in logs:
            raise ValueError(
                f"{self.owner} monitors {self.monitor!r}, which is not in the logs {sorted(logs)}. "
                "Pass one of those as monitor= (val_ metrics need validation data)."
            )
        return logs[self.monitor]

    def improved(self, current, best):
        if best is None:
            return True
        if self.mode == "min":
            return current < best - self.min_delta
        return current > best + self.min_delta


class EarlyStopping(Callback):
    """Stops training when ``monitor`` has not improved for ``patience`` epochs.

    Args:
        monitor: the log to watch (``"val_loss"``, ``"loss"``, ``"val_accuracy"``...).
        min_delta: the smallest change that counts as an improvement.
        patience: epochs without improvement before stopping.
        verbose: 1 prints when it stops and when it restores weights.
        mode: ``"min"``, ``"max"``, or ``"auto"`` (max for accuracy, AUC,
            precision and recall, else min).
        baseline: a value to beat; training stops if it is not beaten within
            ``patience`` epochs.
        restore_best_weights: put back the weights of the best epoch at the end.
        start_from_epoch: epochs to wait before watching at all.

    Raises:
        ValueError: an unknown ``mode``, or (during ``fit``) a ``monitor``
            that is not in the logs.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(2,))
        >>> model = Model(inputs, Dense(1)(inputs))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((8, 2)), np.zeros((8, 1))
        >>> stop = EarlyStopping(monitor="loss", patience=1, min_delta=10.0)
        >>> history = model.fit(x, y, epochs=20, verbose=0, callbacks=[stop])
        >>> len(history.epoch), stop.stopped_epoch
        (2, 1)
    """

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.watch = _Monitor("EarlyStopping", monitor, mode, min_delta)
        self.patience, self.verbose, self.baseline = patience, verbose, baseline
        self.restore_best_weights, self.start_from_epoch = restore_best_weights, start_from_epoch

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch = 0, 0
        self.best, self.best_weights, self.best_epoch = self.baseline, None, 0

    def on_epoch_end(self, epoch, logs=None):
        if epoch < self.start_from_epoch:
            return
        current = self.watch.value(logs)
        self.wait += 1
        if self.watch.improved(current, self.best):
            self.best, self.best_epoch, self.wait = current, epoch, 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch and self.verbose:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose:
                print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class ModelCheckpoint(Callback):
    """Saves the model (or its weights) after each epoch, or only when ``monitor`` improved.

    ``filepath`` may hold ``{epoch}`` and log keys (``"model-{epoch:02d}-{val_loss:.2f}.nw"``).

    Args:
        filepath: where to save: a ``.nw`` or ``.keras`` (Keras 3's) file, or
            with ``save_weights_only`` a ``.weights.h5`` (Keras 3's) or ``.npz`` file.
        monitor: the log that decides what is best, with ``save_best_only``.
        verbose: 1 prints each save.
        save_best_only: save only when ``monitor`` improved on the best so far.
        save_weights_only: save the weights (``model.save_weights``) instead of
            the whole model (``model.save``).
        mode: ``"min"``, ``"max"`` or ``"auto"``, as for ``EarlyStopping``.

    Raises:
        ValueError: a ``filepath`` without the extension the mode writes.

    Example:
        >>> import os, tempfile
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(2,))
        >>> model = Model(inputs, Dense(1)(inputs))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((8, 2)), np.zeros((8, 1))
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "epoch-{epoch}.nw")
        ...     _ = model.fit(x, y, epochs=2, verbose=0, callbacks=[ModelCheckpoint(path, monitor="loss")])
        ...     sorted(os.listdir(folder))
        ['epoch-1.nw', 'epoch-2.nw']
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto"):
        super().__init__()
        extensions = SAVE_SUFFIXES if save_weights_only else (".nw", ".keras")
        if not str(filepath).endswith(extensions):
            raise ValueError(
                f"ModelCheckpoint with save_weights_only={save_weights_only} writes {' or '.join(extensions)} files; "
                f"received filepath={filepath!r}."
            )
        self.filepath, self.verbose = str(filepath), verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self.watch = _Monitor("ModelCheckpoint", monitor, mode, 0)
        self.best = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.save_best_only:
            current = self.watch.value(logs)
            if not self.watch.improved(current, self.best):
                return
            self.best = current
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.verbose:
            print(f"Epoch {epoch + 1}: saving model to {path}")
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)


class LearningRateScheduler(Callback):
    """Sets the learning rate at each epoch start to ``schedule(epoch, lr)``.

    Args:
        schedule: a function of the epoch index and the current learning rate
            returning the new rate (a finite float).
        verbose: 1 prints each new rate.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(2,))
        >>> model = Model(inputs, Dense(1)(inputs))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((8, 2)), np.zeros((8, 1))
        >>> halve = LearningRateScheduler(lambda epoch, lr: lr / 2)
        >>> history = model.fit(x, y, epochs=2, verbose=0, callbacks=[halve])
        >>> history.history["learning_rate"]
        [0.005, 0.0025]
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        rate = self.schedule(epoch, float(self.model.optimizer.learning_rate))
        if not isinstance(rate, (float, int, np.floating)) or not math.isfinite(rate):
            raise ValueError(f"LearningRateScheduler's schedule must return a finite float, received {rate!r}.")
        self.model.optimizer.learning_rate = float(rate)
        if self.verbose:
            print(f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to {rate}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.learning_rate)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` when ``monitor`` stops improving.

    Args:
        monitor: the log to watch.
        factor: what the learning rate is multiplied by (below 1).
        patience: epochs without improvement before reducing it.
        verbose: 1 prints each reduction.
        mode: ``"min"``, ``"max"`` or ``"auto"``, as for ``EarlyStopping``.
        min_delta: the smallest change that counts as an improvement.
        cooldown: epochs to wait after a reduction before counting again.
        min_lr: the learning rate never goes below it.

    Raises:
        ValueError: ``factor >= 1``.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(2,))
        >>> model = Model(inputs, Dense(1)(inputs))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((8, 2)), np.zeros((8, 1))
        >>> reduce = ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_delta=10.0)
        >>> history = model.fit(x, y, epochs=3, verbose=0, callbacks=[reduce])
        >>> history.history["learning_rate"]
        [0.01, 0.005, 0.0025]
    """

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0, received factor={factor}.")
        self.watch = _Monitor("ReduceLROnPlateau", monitor, mode, min_delta)
        self.factor, self.patience, self.verbose = factor, patience, verbose
        self.cooldown, self.min_lr = cooldown, min_lr

    def on_train_begin(self, logs=None):
        self.best, self.wait, self.cooldown_counter = None, 0, 0

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        current = self.watch.value(logs)
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.watch.improved(current, self.best):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(self.model.optimizer.learning_rate)
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    self.model.optimizer.learning_rate = new
                    if self.verbose:
                        print(f"Epoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
                    self.cooldown_counter, self.wait = self.cooldown, 0
        logs["learning_rate"] = float(self.model.optimizer.learning_rate)


class CSVLogger(Callback):
    """Streams each epoch's logs to a CSV file (one row per epoch, after a header).

    Args:
        filename: the CSV file's path.
        separator: the column separator.
        append: add to an existing file (without a second header) instead of
            overwriting it.

    Example:
        >>> import os, tempfile
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(2,))
        >>> model = Model(inputs, Dense(1)(inputs))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((8, 2)), np.zeros((8, 1))
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "log.csv")
        ...     _ = model.fit(x, y, epochs=2, verbose=0, callbacks=[CSVLogger(path)])
        ...     open(path).read().splitlines()[0]
        'epoch,loss'
    """

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.separator, self.append = str(filename), separator, append

    def on_train_begin(self, logs=None):
        exists = self.append and os.path.exists(self.filename) and os.path.getsize(self.filename) > 0
        self.file = open(self.filename, "a" if self.append else "w", newline="")
        self.writer, self.keys, self.write_header = None, None, not exists

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.writer is None:
            self.keys = sorted(logs)
            self.writer = csv.DictWriter(self.file, fieldnames=["epoch"] + self.keys, delimiter=self.separator)
            if self.write_header:
                self.writer.writeheader()
        self.writer.writerow({"epoch": epoch, **{k: logs.get(k, "NA") for k in self.keys}})
        self.file.flush()

    def on_train_end(self, logs=None):
        self.file.close()


class TerminateOnNaN(Callback):
    """Stops training as soon as a batch loss is NaN or infinite.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(2,))
        >>> model = Model(inputs, Dense(1)(inputs))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((8, 2)), np.zeros((8, 1))
        >>> history = model.fit(np.full((8, 2), np.nan), y, epochs=3, verbose=0, callbacks=[TerminateOnNaN()])
        Batch 0: invalid loss nan, terminating training
        >>> len(history.epoch)
        1
    """

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            print(f"Batch {batch}: invalid loss {loss}, terminating training")
            self.model.stop_training = True


class LambdaCallback(Callback):
    """A callback from functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``.

    Args:
        **hooks: hook names (``on_epoch_end``, ``on_train_batch_begin``...) and
            the functions to call, with the hook's arguments.

    Raises:
        ValueError: a name that is not a hook.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(2,))
        >>> model = Model(inputs, Dense(1)(inputs))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((8, 2)), np.zeros((8, 1))
        >>> epochs = []
        >>> _ = model.fit(x, y, epochs=2, verbose=0,
        ...               callbacks=[LambdaCallback(on_epoch_end=lambda epoch, logs: epochs.append(epoch))])
        >>> epochs
        [0, 1]
    """

    def __init__(self, **hooks):
        super().__init__()
        unknown = sorted(set(hooks) - set(_HOOKS))
        if unknown:
            raise ValueError(f"LambdaCallback received unknown hooks {unknown}; known hooks: {_HOOKS}.")
        for name, fn in hooks.items():
            if fn is not None:
                setattr(self, name, fn)

