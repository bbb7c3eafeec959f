"""compile / fit / evaluate / predict: how a model trains, mixed into Model."""

import numpy as np

from engine import tree
from engine.autodiff import record_op, recording, untraced
from engine.callbacks import CallbackList, History
from engine.compile_utils import CompiledLoss, CompiledMetrics, compile_config
from engine.data_adapter import check_batch_size, prepare
from engine.progress import ProgressLogger
from engine.utils import random_generator


class Trainer:
    """The training API of models (Keras 3 names and defaults)."""

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None):
        """Sets the optimizer, the loss(es) and the metrics used by fit and evaluate.

        Example:
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(4,))
            >>> model = Model(x, Dense(3, activation="softmax")(x))
            >>> model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        """
        from engine import optimizers

        self.optimizer = optimizers.get(optimizer)
        self._compile_args = (loss, metrics, loss_weights)
        self.compiled_loss = self.compiled_metrics = None
        if self._outputs_known():  # else on the first batch, once a subclassed model has run
            self._resolve_compiled()
        self.stop_training = False
        self._compile_config = compile_config(self.optimizer, loss, metrics, loss_weights)

    def _resolve_compiled(self):
        from engine.metrics import Mean

        loss, metrics, loss_weights = self._compile_args
        self.compiled_loss = CompiledLoss(self, loss, loss_weights)
        self.compiled_metrics = CompiledMetrics(self, metrics, self.compiled_loss)
        self._loss_tracker = Mean(name="loss")

    # ------------------------------------ Keras' "customizing what happens in fit"
    def train_step(self, data):
        """One training step on a batch ``data`` = ``(x, y)`` or ``(x, y, sample_weight)``;
        returns the logs. ``fit`` calls an override of it for every batch, as Keras does.

        Example:
            >>> import numpy as np
            >>> from engine import GradientTape, Model
            >>> from layers import Dense
            >>> class CustomModel(Model):
            ...     def __init__(self):
            ...         super().__init__()
            ...         self.dense = Dense(1)
            ...     def call(self, x):
            ...         return self.dense(x)
            ...     def train_step(self, data):
            ...         x, y = data
            ...         with GradientTape() as tape:
            ...             y_pred = self(x, training=True)
            ...             loss = self.compute_loss(y=y, y_pred=y_pred)
            ...         self.optimizer.apply(tape.gradient(loss, self.trainable_variables), self.trainable_variables)
            ...         for metric in self.metrics:
            ...             metric.update_state(loss) if metric.name == "loss" else metric.update_state(y, y_pred)
            ...         return {m.name: m.result() for m in self.metrics}
            >>> model = CustomModel()
            >>> model.compile(optimizer="sgd", loss="mse")
            >>> history = model.fit(np.ones((8, 2)), np.ones((8, 1)), epochs=2, verbose=0)
        """
        x, y, sample_weight = (tuple(data) + (None, None))[:3]
        batch = prepare(self, x, y, sample_weight)
        self.compiled_loss.check_targets(batch.y, self)
        total, _, _ = self._train_batch(batch, self.trainable_weights)
        self._loss_tracker.update_state(total)
        return {m.name: float(m.result()) for m in self.metrics}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
        """The total loss of ``y_pred`` against ``y``: the compiled losses, the losses
        the layers added in the last call and the weights' penalties. Inside a
        ``GradientTape`` it is traced, so ``tape.gradient`` differentiates it."""
        flat_pred = tree.flatten(y_pred)
        targets = [None if t is None else np.asarray(t) for t in tree.flatten(y)]
        weights = ([None] * len(flat_pred) if sample_weight is None
                   else [None if w is None else np.asarray(w, "float32") for w in tree.flatten(sample_weight)])
        values = [np.asarray(untraced(p)) for p in flat_pred]
        total, _, grads = self.compiled_loss.compute(targets, values, weights, with_gradients=recording())
        loss = np.asarray(total, "float32")
        if recording():
            (loss,) = record_op(lambda g: ([None if d is None else d * g[0] for d in grads], {}),
                                flat_pred, [loss], name="compiled loss")
        penalized = [v for v in self.trainable_weights if v.regularizer is not None]
        if penalized:
            penalty = np.asarray(sum(v.regularizer(v.value) for v in penalized), "float32")
            if recording():
                (penalty,) = record_op(lambda g: ([], {v: v.regularizer.gradient(v.value) * g[0] for v in penalized}),
                                       [], [penalty], penalized, name="weight penalties")
            loss = loss + penalty
        for added in self._added_loss_values():
            loss = loss + added
        return loss

    @property
    def metrics(self):
        """The ``loss`` tracker, then the compiled metrics (for a custom ``train_step``)."""
        if getattr(self, "compiled_metrics", None) is None:
            return []
        return [self._loss_tracker, *(metric for _, _, metric in self.compiled_metrics.entries)]

    @property
    def trainable_variables(self):
        """The trainable weights (Keras 3's other name for them)."""
        return self.trainable_weights

    def _require_compiled(self, what, x=None):
        """Raises unless compiled; builds a subclassed model on ``x`` and resolves
        its losses and metrics against its outputs when that is still to do."""
        if getattr(self, "_compile_args", None) is None:
            raise RuntimeError(
                f"You must call compile() on model {self.name!r} before {what}(): "
                "model.compile(optimizer=..., loss=...)."
            )
        if self.compiled_loss is None:
            self._build_on(x)
            self._resolve_compiled()

    # -------------------------------------------------------------- one batch
    def _train_batch(self, batch, trainable):
        """One optimizer step; ``trainable`` is the model's trainable weights (walked once per epoch)."""
        outputs, tape = self._forward_flat(batch.x)
        total, per_output, grads = self.compiled_loss.compute(batch.y, outputs, batch.sample_weights)
        total += getattr(tape, "activity_loss", 0.0)
        total += sum(v.regularizer(v.value) for v in trainable if v.regularizer is not None)
        weight_grads = self._backward_flat(tape, grads)
        variables = [v for v in trainable if v in weight_grads or v.regularizer is not None]
        gradients = []
        for variable in variables:
            grad = weight_grads.get(variable)
            if variable.regularizer is not None:
                penalty = variable.regularizer.gradient(variable.value)
                grad = penalty if grad is None else grad + penalty
            gradients.append(grad)
        self._apply_atomically(gradients, variables, trainable)
        self.compiled_metrics.update(batch.y, outputs, batch.sample_weights)
        return total, per_output, len(batch.x[0])

    def _apply_atomically(self, gradients, variables, trainable):
        """Applies one optimizer step; an exception midway (even a KeyboardInterrupt)
        restores every weight and every optimizer slot. Optimizers replace the
        arrays they update and never write into them, so keeping references is
        enough."""
        self.optimizer.build(trainable)
        state = list(variables) + self.optimizer.variables
        saved = [v.value for v in state]
        try:
            self.optimizer.apply(gradients, variables)
        except BaseException:
            for variable, value in zip(state, saved):
                variable.value = value
            raise

    def _training_data(self, what, x, y, sample_weight=None, class_weight=None):
        """Checked data for ``what`` (fit, evaluate, ...): inputs, targets that fit
        their losses, and at least one sample."""
        data = prepare(self, x, y, sample_weight, class_weight)
        self.compiled_loss.check_targets(data.y, self)
        data.require_samples(self, what)
        return data

    def _test_batch(self, batch):
        outputs = self._run_flat(batch.x, training=False)
        total, per_output, _ = self.compiled_loss.compute(batch.y, outputs, batch.sample_weights, with_gradients=False)
        total += sum(self.losses)
        self.compiled_metrics.update(batch.y, outputs, batch.sample_weights)
        return total, per_output, len(batch.x[0])

    # ----------------------------------------------------------------- loops
    def fit(self, x=None, y=None, batch_size=32, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0):
        """Trains the model; returns a History whose ``history`` holds per-epoch logs."""
        self._require_compiled("fit", x)
        batch_size = check_batch_size(batch_size)
        data = self._training_data("fit()", x, y, sample_weight, class_weight)
        validation = None
        if validation_data is not None:
            validation = self._training_data("The validation_data of fit()", *validation_data)
        elif validation_split:
            data, validation = data.split(validation_split)
        history = History()
        extra = [ProgressLogger(_verbosity(verbose))] if _verbosity(verbose) else []
        steps = data.steps(batch_size)
        callback_list = CallbackList(
            [*extra, *(callbacks or []), history], self,
            {"epochs": epochs, "steps": steps, "batch_size": batch_size, "samples": data.size},
        )
        self.stop_training = False
        rng = random_generator()
        logs = {}
        callback_list.on_train_begin({})
        custom_step = type(self).train_step is not Trainer.train_step
        for epoch in range(initial_epoch, epochs):
            tracker = _LossTracker(self.compiled_loss.names)
            self.compiled_metrics.reset()
            self._loss_tracker.reset_state()
            callback_list.on_epoch_begin(epoch, {})
            trainable = self.trainable_weights
            for step, batch in enumerate(data.batches(batch_size, shuffle, rng)):
                callback_list.on_train_batch_begin(step, {})
                if custom_step:
                    step_logs = _float_logs(self.train_step(self._step_data(batch)))
                else:
                    tracker.add(*self._train_batch(batch, trainable))
                    step_logs = {**tracker.logs(), **self.compiled_metrics.results()}
                callback_list.on_train_batch_end(step, step_logs)
                if self.stop_training:
                    break
            logs = dict(step_logs)
            if validation is not None:
                val_logs = self._evaluate_data(validation, batch_size)
                logs.update({f"val_{k}": v for k, v in val_logs.items()})
            callback_list.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        callback_list.on_train_end(logs)
        return history

    def _step_data(self, batch):
        """A batch as ``train_step`` receives it: ``(x, y)`` or ``(x, y, sample_weight)``
        in the structures of the model's inputs and outputs."""
        data = (self._pack_inputs(batch.x), self._pack_outputs(batch.y))
        if any(w is not None for w in batch.sample_weights):
            data += (self._pack_outputs(batch.sample_weights),)
        return data

    def _evaluate_data(self, data, batch_size, callback_list=None):
        tracker = _LossTracker(self.compiled_loss.names)
        self.compiled_metrics.reset()
        for step, batch in enumerate(data.batches(batch_size)):
            if callback_list:
                callback_list.on_test_batch_begin(step, {})
            tracker.add(*self._test_batch(batch))
            if callback_list:
                callback_list.on_test_batch_end(step, tracker.logs())
        return {**tracker.logs(), **self.compiled_metrics.results()}

    def evaluate(self, x=None, y=None, batch_size=32, verbose="auto", sample_weight=None,
                 callbacks=None, return_dict=False):
        """Returns the loss (and metrics) on the data: a float, a list, or a dict."""
        self._require_compiled("evaluate", x)
        batch_size = check_batch_size(batch_size)
        data = self._training_data("evaluate()", x, y, sample_weight)
        callback_list = CallbackList(callbacks or [], self, {"steps": data.steps(batch_size)})
        callback_list.on_test_begin({})
        logs = self._evaluate_data(data, batch_size, callback_list)
        callback_list.on_test_end(logs)
        if _verbosity(verbose):
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
        if return_dict:
            return logs
        values = list(logs.values())
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=32, verbose="auto", callbacks=None):
        """Runs the model over ``x`` in batches; returns outputs in the model's output structure
        (empty outputs, of the right shapes, for 0 samples)."""
        batch_size = check_batch_size(batch_size)
        data = prepare(self, x)
        callback_list = CallbackList(callbacks or [], self, {"steps": data.steps(batch_size)})
        callback_list.on_predict_begin({})
        chunks = []
        for step, batch in enumerate(data.batches(batch_size)):
            callback_list.on_predict_batch_begin(step, {})
            chunks.append(self._run_flat(batch.x, training=False))
            callback_list.on_predict_batch_end(step, {"outputs": chunks[-1]})
        callback_list.on_predict_end({})
        flat = [np.concatenate(parts) for parts in zip(*chunks)]
        return self._pack_outputs(flat)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """One optimizer step on one batch; returns its loss (and metrics)."""
        self._require_compiled("train_on_batch", x)
        data = self._training_data("train_on_batch()", x, y, sample_weight, class_weight)
        self.compiled_metrics.reset()
        tracker = _LossTracker(self.compiled_loss.names)
        tracker.add(*self._train_batch(data, self.trainable_weights))
        return _batch_result({**tracker.logs(), **self.compiled_metrics.results()}, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """Loss (and metrics) on one batch, without training."""
        self._require_compiled("test_on_batch", x)
        data = prepare(self, x, y, sample_weight)
        self.compiled_loss.check_targets(data.y, self)
        self.compiled_metrics.reset()
        tracker = _LossTracker(self.compiled_loss.names)
        tracker.add(*self._test_batch(data))
        return _batch_result({**tracker.logs(), **self.compiled_metrics.results()}, return_dict)

    def predict_on_batch(self, x):
        """The model's outputs on one batch."""
        return self._pack_outputs(self._run_flat(prepare(self, x).x, training=False))


class _LossTracker:
    """Running means of the total loss and of each output's loss, weighted by batch size."""

    def __init__(self, names):
        self.names = names
        self.count, self.total = 0, 0.0
        self.per_output = [0.0] * len(names)

    def add(self, total, per_output, size):
        self.count += size
        self.total += total * size
        for index, value in enumerate(per_output):
            if value is not None:
                self.per_output[index] += value * size

    def logs(self):
        count = max(self.count, 1)
        logs = {"loss": self.total / count}
        if len(self.names) > 1:
            logs.update({f"{n}_loss": v / count for n, v in zip(self.names, self.per_output)})
        return logs


def _float_logs(logs):
    return {name: float(np.asarray(untraced(value))) for name, value in logs.items()}


def _verbosity(verbose):
    if verbose == "auto":
        return 1
    if verbose not in (0, 1, 2):
        raise ValueError(f"verbose must be 'auto', 0, 1 or 2, received {verbose!r}.")
    return verbose


def _batch_result(logs, return_dict):
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values



