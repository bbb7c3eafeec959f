"""compile / fit / evaluate / predict: how a model trains, mixed into Model."""

import functools
import math

import numpy as np

from engine import extensions, tree
from engine.data import dask_arrays
from engine.autodiff import GradientTape, record_op, recording, untraced
from engine.training.callbacks import CallbackList, History
from engine.training.compile_utils import CompiledLoss, CompiledMetrics, compile_config
from engine.data.data_adapter import _apply_class_weight, check_batch_size, check_steps, prepare, unpack_batch
from engine.data.data_sources import is_batch_source, open_source
from engine.data.epoch_iterator import EpochIterator
from engine.training.metrics import Mean
from engine.training.progress import ProgressLogger, format_logs, verbosity
from engine.data.step_data import StepData
from engine.utils import random_generator


class Trainer:
    """The training API of models (Keras 3 names and defaults), mixed into ``Model``.

    ``compile`` sets the optimizer, losses and metrics; ``fit``, ``evaluate`` and
    ``predict`` loop over data in batches; the ``*_on_batch`` methods run one
    batch. Override ``train_step`` to customize what ``fit`` does with a batch.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(1)(x))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> history = model.fit(np.ones((8, 3)), np.zeros((8, 1)), epochs=2, verbose=0)
        >>> model.predict(np.ones((2, 3)), verbose=0).shape
        (2, 1)
    """

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None, weighted_metrics=None):
        """Sets the optimizer, the loss(es) and the metrics used by fit and evaluate.

        Args:
            optimizer: an optimizer or its name.
            loss: a loss (name, object or function ``fn(y_true, y_pred)``) for
                every output, or one per output: a list, a dict by output name,
                or the outputs' nested structure or a prefix of it (None: no
                loss for that output). As in Keras, a list where the outputs
                hold another container gives each of its losses all the
                outputs there, in their structure (for a loss function of
                several outputs), and a list at one output sums its losses.
                Without any, ``fit`` trains on the losses the layers add
                (``add_loss``) and the weights' penalties, and ``evaluate``
                reports 0 plus those.
            loss_weights: a number, or one per output as for ``loss``; the
                total loss is the weighted sum of the outputs' losses.
            metrics: a list of metrics (for a single output), or per output
                as for ``loss`` (each a metric or a list). ``"acc"`` and
                ``"accuracy"`` pick binary, categorical or sparse categorical
                accuracy from the targets' and outputs' shapes, as Keras does.
            weighted_metrics: as ``metrics``, but weighted by the sample
                weights (``sample_weight`` or ``class_weight``).

        Raises:
            ValueError: an unknown optimizer, loss or metric name (with the
                closest known one). Losses, weights and metrics that do not
                match the outputs raise in ``fit`` or ``evaluate``, as in Keras.

        Example:
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(4,))
            >>> model = Model(x, Dense(3, activation="softmax")(x))
            >>> model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        """
        from engine.training import optimizers

        self.optimizer = optimizers.get(optimizer)
        self._compile_args = (loss, loss_weights, metrics, weighted_metrics)
        self.compiled_loss = self.compiled_metrics = None
        self._loss_tracker = Mean(name="loss")
        if self._outputs_known():  # else on the first batch, once a subclassed model has run
            self._resolve_compiled()
        self.stop_training = False
        self._compile_config = compile_config(self.optimizer, loss, metrics, loss_weights, weighted_metrics)

    def _resolve_compiled(self):
        loss, loss_weights, metrics, weighted_metrics = self._compile_args
        self.compiled_loss = CompiledLoss(self, loss, loss_weights)
        if metrics is not None or weighted_metrics is not None:
            self.compiled_metrics = CompiledMetrics(self, metrics, weighted_metrics)

    # ------------------------------------ Keras' "customizing what happens in fit"
    def train_step(self, data):
        """One training step on a batch; ``fit`` calls an override of it for every batch, as Keras does.

        An override receives the batch as the data was given to ``fit``,
        matched to nothing: ``x`` alone when ``fit`` got no ``y`` (so a model
        without ``call``, such as a GAN holding two models, trains through
        it). This default runs the model and ``compute_loss`` under a
        ``GradientTape`` when ``compute_loss`` is overridden.

        Args:
            data: the batch: ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``.

        Returns:
            The logs: a dict from metric name to value.

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
        x, y, sample_weight = unpack_batch(data, "train_step()")
        if self._overrides("compute_loss"):
            return self._traced_train_step(x, y, sample_weight)
        batch = prepare(self, x, y, sample_weight)
        self._resolve_on_outputs()
        self.compiled_loss.check_targets(batch.y, self)
        self._train_batch(batch, self.trainable_weights)
        return self.get_metrics_result()

    def test_step(self, data):
        """The loss and metrics of one batch, without training; ``evaluate`` (and
        validation in ``fit``) calls an override of it for every batch, as Keras does.

        Args:
            data: the batch: ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``,
                as the data was given to ``evaluate``.

        Returns:
            The logs: a dict from metric name to value.

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> class Scored(Model):
            ...     def test_step(self, data):
            ...         x, y = data
            ...         return {"max_error": float(np.abs(self(x) - y).max())}
            >>> x = Input(shape=(2,))
            >>> model = Scored(x, Dense(1, kernel_initializer="zeros")(x))
            >>> model.compile(optimizer="sgd", loss="mse")
            >>> model.evaluate(np.ones((4, 2)), np.full((4, 1), 3.0), verbose=0)
            3.0
        """
        x, y, sample_weight = unpack_batch(data, "test_step()")
        if self._overrides("compute_loss"):
            y_pred = self(x, training=False)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)
            self._loss_tracker.update_state(untraced(loss), sample_weight=_batch_size(x))
            return self.compute_metrics(x, y, y_pred, sample_weight)
        batch = prepare(self, x, y, sample_weight)
        self._resolve_on_outputs()
        self.compiled_loss.check_targets(batch.y, self)
        self._test_batch(batch)
        return self.get_metrics_result()

    def predict_step(self, data):
        """The model's outputs for one batch; ``predict`` calls an override of it for every batch.

        Args:
            data: the batch's inputs: ``x`` or ``(x,)``, as given to ``predict``.

        Returns:
            The outputs (arrays, in any structure; ``predict`` joins the batches'
            along axis 0).

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> class Labels(Model):
            ...     def predict_step(self, data):
            ...         return np.argmax(self(data), axis=-1)
            >>> x = Input(shape=(2,))
            >>> Labels(x, Dense(3)(x)).predict(np.ones((5, 2)), batch_size=2, verbose=0).shape
            (5,)
        """
        x, _, _ = unpack_batch(data, "predict_step()")
        return self(x, training=False)

    def _traced_train_step(self, x, y, sample_weight):
        """Keras' default train_step, for an overridden ``compute_loss``: the loss
        it returns is differentiated through the tape."""
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)
        trainable = self.trainable_variables  # a model built by its first call has weights now
        grads = tape.gradient(loss, trainable)
        variables = [v for v, g in zip(trainable, grads) if g is not None]
        gradients = [self.optimizer.scale_loss(g) for g in grads if g is not None]
        self._apply_atomically(gradients, variables, trainable)
        self._loss_tracker.update_state(untraced(loss), sample_weight=_batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Adds a batch to the compiled metrics and returns every metric's result, as Keras' ``compute_metrics``.

        Args:
            x: the inputs (unused; accepted for Keras' signature).
            y: the targets, in the structure of the outputs.
            y_pred: the model's outputs.
            sample_weight: weights per sample (or per output), or None.

        Returns:
            A dict from metric name to value (see ``get_metrics_result``).

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> model = Model(x, Dense(1)(x))
            >>> model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
            >>> model.compute_metrics(None, np.ones((2, 1)), np.zeros((2, 1)))
            {'loss': 0.0, 'mae': 1.0}
        """
        self._resolve_on_outputs(y_pred)
        if self.compiled_metrics is not None:
            y_pred = tree.map_structure(untraced, y_pred)
            self.compiled_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def _resolve_on_outputs(self, y_pred=None):
        """Resolves the compiled losses and metrics once the outputs are known
        (a subclassed model learns them from ``y_pred``, its first outputs)."""
        if self.compiled_loss is not None:
            return
        if not self._outputs_known() and y_pred is not None:
            self._flatten_outputs(tree.map_structure(untraced, y_pred))
        self._resolve_compiled()

    def _overrides(self, name):
        """Whether the model's class replaces Trainer's method ``name`` (train_step, compute_loss...)."""
        return getattr(type(self), name) is not getattr(Trainer, name)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
        """The total loss of ``y_pred`` against ``y``: the compiled losses, the losses
        the layers added in the last call and the weights' penalties.

        Inside a ``GradientTape`` it is traced, so ``tape.gradient`` differentiates it
        (see ``train_step``).

        Args:
            x: the inputs (unused; accepted for Keras' signature).
            y: the targets, in the structure of the outputs.
            y_pred: the model's outputs.
            sample_weight: weights per sample (or per output), or None.

        Returns:
            The loss, a float32 scalar array.

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> model = Model(x, Dense(1)(x))
            >>> model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
            >>> float(model.compute_loss(y=np.ones((2, 1)), y_pred=np.zeros((2, 1))))
            1.0
        """
        self._resolve_on_outputs(y_pred)
        flat_pred = tree.flatten(y_pred)
        names = self.compiled_loss.names
        if isinstance(y, dict) and not isinstance(y_pred, dict) and set(y) == set(names):
            y = [y[name] for name in names]  # targets by output name, as Keras reads them
        targets = [None] * len(flat_pred) if y is None else [None if t is None else np.asarray(t)
                                                             for t in tree.flatten(y)]
        if len(targets) != len(flat_pred):
            raise ValueError(
                f"y_true and y_pred have different structures: compute_loss() of model {self.name!r} received "
                f"{len(targets)} target array(s) for {len(flat_pred)} prediction(s). Give y in the structure of "
                "y_pred (one target per output, None for an output without a loss)."
            )
        weights = ([None] * len(flat_pred) if sample_weight is None
                   else [None if w is None else np.asarray(w, "float32") for w in tree.flatten(sample_weight)])
        if len(weights) < len(flat_pred):  # one sample_weight for every output
            weights = weights[:1] * len(flat_pred)
        values = [np.asarray(untraced(p)) for p in flat_pred]
        # The losses match y_pred's own structure (an override may pass more outputs than the model has).
        structure = tree.pack_as(y_pred, range(len(flat_pred)))
        total, per_loss, grads = self.compiled_loss.compute(targets, values, weights, with_gradients=recording(),
                                                            structure=structure)
        self.compiled_loss.update_trackers(per_loss, _batch_size(values))
        loss = np.asarray(total or 0.0, "float32")
        if recording():
            (loss,) = record_op(lambda g: ([None if d is None else d * g[0] for d in grads], {}),
                                flat_pred, [loss], name="compiled loss")
        for added in self.losses:
            loss = loss + added
        return loss

    @property
    def metrics(self):
        """As Keras: the ``loss`` tracker, the compiled metrics as one metric
        (``compile_metrics``, whose result is a dict), then the running mean of
        each compiled loss when there are several (once the first batch ran)."""
        if getattr(self, "_compile_args", None) is None:
            return []
        compiled = [] if self.compiled_metrics is None else [self.compiled_metrics]
        per_loss = [] if self.compiled_loss is None else self.compiled_loss.metrics
        return [self._loss_tracker, *compiled, *per_loss]

    @property
    def metrics_names(self):
        """The names of ``metrics``, as Keras 3 lists them (``["loss", "compile_metrics", ...]``)."""
        return [metric.name for metric in self.metrics]

    def reset_metrics(self):
        """Forgets what every metric has accumulated (``fit`` and ``evaluate`` do at their start).

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> model = Model(x, Dense(1)(x))
            >>> model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
            >>> logs = model.train_on_batch(np.ones((2, 3)), np.ones((2, 1)), return_dict=True)
            >>> model.reset_metrics()
            >>> model.get_metrics_result()
            {'loss': 0.0, 'mae': 0.0}
        """
        for metric in self.metrics:
            metric.reset_state()

    def get_metrics_result(self):
        """The current value of every metric, by log name (compiled metrics spread out), sorted as Keras does.

        Returns:
            A dict from name (``"loss"``, ``"mae"``...) to float.

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> model = Model(x, Dense(1)(x))
            >>> model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
            >>> loss = model.test_on_batch(np.ones((2, 3)), np.ones((2, 1)))
            >>> sorted(model.get_metrics_result())
            ['loss', 'mae']
        """
        logs = {}
        for metric in self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                logs.update(result)
            else:
                logs[metric.name] = float(result)
        return dict(sorted(logs.items()))

    def _ordered_results(self, logs):
        """``logs`` as the list Keras' evaluate returns: values in ``metrics`` order
        (the compiled metrics by their own names, so a name two metrics share gives
        its value twice, as in Keras), then the rest by name; one value alone."""
        names = []
        for metric in self.metrics:
            names += [m.name for m in metric.metrics] if metric is self.compiled_metrics else [metric.name]
        results = [logs[name] for name in names if name in logs]
        results += [logs[key] for key in sorted(logs) if key not in names]
        return results[0] if len(results) == 1 else results

    def _require_compiled(self, what, x=None):
        """Raises unless compiled; builds a subclassed model on ``x`` (when given)
        and resolves its losses and metrics against its outputs when that is
        still to do (without ``x``, ``_training_data`` does on the first batch)."""
        if getattr(self, "_compile_args", None) is None:
            raise RuntimeError(
                f"You must call compile() on model {self.name!r} before {what}(): "
                "model.compile(optimizer=..., loss=...)."
            )
        if self.compiled_loss is None and x is not None:
            self._build_on(x)
            self._resolve_compiled()

    # -------------------------------------------------------------- one batch
    def _train_batch(self, batch, trainable):
        """One optimizer step; ``trainable`` is the model's trainable weights (walked once per epoch)."""
        outputs, tape = self._forward_flat(batch.x)
        total, per_loss, grads = self.compiled_loss.compute(batch.y, outputs, batch.sample_weights)
        penalized = [v for v in trainable if v.regularizer is not None]
        added = bool(self._added_loss_values()) or getattr(tape, "has_losses", False)
        if total is None and not penalized and not added:
            raise ValueError(self._no_loss_message(batch))
        total = (total or 0.0) + getattr(tape, "activity_loss", 0.0) + sum(v.regularizer(v.value) for v in penalized)
        if added:  # an output without a loss gets a zero gradient, not none: its layers' added losses still train
            grads = [np.zeros_like(out) if grad is None else grad for grad, out in zip(grads, outputs)]
        weight_grads = self._backward_flat(tape, grads)
        variables = [v for v in trainable if v in weight_grads or v.regularizer is not None]
        gradients = []
        for variable in variables:
            grad = weight_grads.get(variable)
            if variable.regularizer is not None:
                penalty = variable.regularizer.gradient(variable.value)
                grad = penalty if grad is None else grad + penalty
            gradients.append(grad)
        # The gradients of the loss times the optimizer's loss_scale_factor, which apply() divides out, as in Keras.
        gradients = [self.optimizer.scale_loss(grad) for grad in gradients]
        self._apply_atomically(gradients, variables, trainable)
        self._record_batch(batch, outputs, total, per_loss)

    def _no_loss_message(self, batch):
        if self.compiled_loss.configured and (batch.y is None or all(y is None for y in batch.y)):
            reason = "it received no targets (y) for the outputs that have a loss. Pass y to fit()"
        else:
            reason = ("it was compiled without loss=, and its layers added no losses (add_loss) and have no "
                      "regularizers")
        return (f"No loss to compute. Provide a `loss` argument in `compile()`. Model {self.name!r} has nothing to "
                f"train on: {reason}.")

    def _record_batch(self, batch, outputs, total, per_loss):
        """Adds one batch to the loss trackers and the compiled metrics."""
        size = len(next(x for x in batch.x if x is not None))  # an optional input may be None
        self._loss_tracker.update_state(total, sample_weight=size)
        self.compiled_loss.update_trackers(per_loss, size)
        if self.compiled_metrics is not None:
            self.compiled_metrics.update(batch.y, outputs, batch.sample_weights)

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
        data = prepare(self, x, y, sample_weight, class_weight)  # builds a subclassed model on x
        if self.compiled_loss is None:
            self._resolve_compiled()
        self.compiled_loss.check_targets(data.y, self)
        data.require_samples(self, what)
        return data

    def _test_batch(self, batch):
        outputs = self._run_flat(batch.x, training=False)
        total, per_loss, _ = self.compiled_loss.compute(batch.y, outputs, batch.sample_weights, with_gradients=False)
        self._record_batch(batch, outputs, (total or 0.0) + sum(self.losses), per_loss)

    # ----------------------------------------------------------------- loops
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None):
        """Trains the model; returns a History whose ``history`` holds per-epoch logs.

        Args:
            x: the inputs: an array, or arrays in the structure of the model's
                inputs (a list, a dict...). Arrays may live on disk:
                ``numpy.memmap``, zarr and Dask arrays (also for ``y``,
                ``sample_weight`` and ``validation_data``) are read a few
                batches at a time while the model trains, never whole. ``x``
                may also be a ``PyDataset`` or a Python generator yielding
                ``(x, y)`` or ``(x, y, sample_weight)`` batches; then pass
                neither ``y``, ``sample_weight`` nor ``batch_size``.
            y: the targets, as arrays in the structure of the outputs.
            batch_size: samples per gradient step (None: 32, or one pass per
                epoch with ``steps_per_epoch``, as Keras).
            epochs: the epoch to end at: training runs epochs ``initial_epoch`` to ``epochs - 1``.
            verbose: 0 silent, 1 a live progress bar in a terminal or a notebook
                with ipywidgets (elsewhere: one line per epoch, as in a log),
                2 one line per epoch ("auto": 1).
            callbacks: Callback objects called during training.
            validation_split: the fraction of the samples (the last ones,
                before shuffling) held out to validate on after each epoch;
                arrays on disk are cut by row range, without reading them.
            validation_data: ``(x, y)`` or ``(x, y, sample_weight)`` to
                validate on after each epoch, or a PyDataset or generator.
            shuffle: whether each epoch takes the samples in a new random
                order. In-memory arrays and ``numpy.memmap``: a random order of
                all samples; zarr and Dask: random windows of whole chunks,
                shuffled within; a PyDataset: a random order of its batches;
                a generator: ignored, with a warning (see engine.data.data_sources).
            class_weight: a weight per class index, multiplying the samples'
                weights in the loss (single-output models).
            sample_weight: a weight per sample (or per output), arrays.
            initial_epoch: the epoch to start at (to resume training).
            steps_per_epoch: batches per epoch (None: one pass over the data).
                Each epoch carries on where the last one stopped; a generator
                needs it to split its stream into epochs, and training stops,
                with Keras' warning, when a generator runs out.
            validation_steps: batches per validation (None: all), carrying on
                from the previous validation as ``steps_per_epoch`` does.

        Returns:
            A ``History``: ``history.history`` maps each log name (``loss``,
            the metrics, ``val_`` ones with validation) to its value per epoch.

        Raises:
            RuntimeError: the model was not compiled.
            ValueError: inputs or targets that do not fit the model (the
                message names the input and the shapes), an invalid
                ``batch_size`` or step count, or nothing to train on.

        Example:
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> inputs = Input(shape=(3,))
            >>> model = Model(inputs, Dense(1)(inputs))
            >>> model.compile(optimizer="sgd", loss="mse")
            >>> batches = ((np.ones((8, 3)), np.zeros((8, 1))) for _ in range(10))
            >>> history = model.fit(batches, steps_per_epoch=5, epochs=2, shuffle=False, verbose=0)
            >>> len(history.history["loss"])
            2
        """
        self._require_compiled("fit")
        batch_size = None if batch_size is None else check_batch_size(batch_size)
        steps_per_epoch = check_steps(steps_per_epoch, "steps_per_epoch")
        validation_steps = check_steps(validation_steps, "validation_steps")
        custom_step = self._overrides("train_step") or self._overrides("compute_loss")
        data = self._fit_source("fit()", x, y, sample_weight, class_weight, batch_size, shuffle, raw=custom_step)
        validation = None
        if validation_data is not None:
            validation = self._fit_source("The validation_data of fit()",
                                          *unpack_batch(validation_data, "validation_data"), raw=self._custom_test())
        elif validation_split:
            data, validation = data.split(validation_split)
        if batch_size is None:
            batch_size = math.ceil(data.size / steps_per_epoch) if steps_per_epoch and data.size else \
                check_batch_size(None)
        data = EpochIterator(data, steps_per_epoch)
        validation = None if validation is None else EpochIterator(validation, validation_steps)
        history = History()
        extra = [ProgressLogger(verbosity(verbose))] if verbosity(verbose) else []
        callback_list = CallbackList(
            [*extra, *(callbacks or []), history], self,
            {"epochs": epochs, "steps": data.steps(batch_size),
             "batch_size": None if data.size is None else batch_size, "samples": data.size},
        )
        self.stop_training = False
        rng = random_generator()
        logs = {}
        callback_list.on_train_begin({})
        try:
            for epoch in range(initial_epoch, epochs):
                self.reset_metrics()
                callback_list.on_epoch_begin(epoch, {})
                trainable = self.trainable_weights
                for step, batch in enumerate(data.batches(batch_size, shuffle, rng)):
                    callback_list.on_train_batch_begin(step, {})
                    if custom_step:
                        step_logs = _float_logs(self.train_step(batch.data))
                    else:
                        self._train_batch(batch, trainable)
                        step_logs = self.get_metrics_result()
                    callback_list.on_train_batch_end(step, step_logs)
                    if self.stop_training:
                        break
                logs = dict(step_logs)
                if validation is not None and not validation.exhausted:
                    callback_list.on_test_begin({})
                    val_logs = self._evaluate_data(validation, batch_size, callback_list)
                    callback_list.on_test_end(val_logs)
                    logs.update({f"val_{k}": v for k, v in val_logs.items()})
                callback_list.on_epoch_end(epoch, logs)
                if self.stop_training or data.exhausted:
                    break
        finally:  # stops the threads reading batches ahead, also on early stopping, errors and Ctrl-C
            try:
                data.close()
            finally:  # a Ctrl-C while data.close() waits for a batch in flight still stops validation's readers
                if validation is not None:
                    validation.close()
            if epochs > 0:  # as Keras: the weights take their moving averages (use_ema) once training ends
                self.optimizer.finalize_variable_values(self.trainable_weights)
        callback_list.on_train_end(logs)
        return history

    def _fit_source(self, what, x, y, sample_weight=None, class_weight=None, batch_size=None, shuffle=False,
                    raw=False):
        """fit's data as a batch source: in-memory arrays checked at once
        (TrainingData), or a source that reads, maps and checks them batch by
        batch (see engine.data.data_sources). ``raw`` data, for an overridden step,
        is only cut into batches (StepData)."""
        prepare_batch = functools.partial(self._step_data if raw else self._training_data, what,
                                          class_weight=class_weight)
        source = open_source(x, y, sample_weight, class_weight, batch_size, shuffle, prepare_batch)
        if source is None:
            return prepare_batch(x, y, sample_weight)
        source.require_samples(self, what)
        return source

    def _step_data(self, what, x, y, sample_weight=None, class_weight=None):
        """The data of an overridden step, as given (``class_weight`` turned into sample weights, as in Keras)."""
        if class_weight is not None:
            if sample_weight is not None:
                raise ValueError(f"{what} of model {self.name!r} received both sample_weight and class_weight; pass "
                                 "one of them.")
            if y is None or len(tree.flatten(y)) != 1:
                raise ValueError("class_weight is only supported for models with a single output; use sample_weight "
                                 "instead.")
            sample_weight = _apply_class_weight(self, class_weight, [np.asarray(tree.flatten(y)[0])], [None])[0]
        data = StepData(x, y, sample_weight)
        data.require_samples(self, what)
        return data

    def _custom_test(self):
        return self._overrides("test_step") or self._overrides("compute_loss")

    def _evaluate_data(self, data, batch_size, callback_list):
        """Runs the test steps over ``data`` (calling the ``on_test_batch_*`` hooks); returns the last logs."""
        self.reset_metrics()
        custom = self._custom_test()
        logs = {}
        for step, batch in enumerate(data.batches(batch_size)):
            callback_list.on_test_batch_begin(step, {})
            if custom:
                logs = _float_logs(self.test_step(batch.data))
            else:
                self._test_batch(batch)
                logs = self.get_metrics_result()
            callback_list.on_test_batch_end(step, logs)
        return logs

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 callbacks=None, return_dict=False):
        """Computes the loss (and metrics) of the model on data, in batches, without training.

        Args:
            x: the inputs, as for ``fit``: arrays in the structure of the
                model's inputs (``numpy.memmap`` and zarr arrays are read a batch
                at a time; Dask arrays are scored chunk by chunk on Dask's scheduler),
                or a PyDataset or generator yielding ``(x, y)`` or ``(x, y, sample_weight)`` batches.
            y: the targets, in the structure of the outputs.
            batch_size: samples per batch (None: 32; a PyDataset or generator
                yields whole batches).
            verbose: 0 silent, 1 or 2 (or "auto") print the results.
            sample_weight: a weight per sample (or per output), arrays.
            callbacks: Callback objects (their ``on_test_*`` methods are called).
            return_dict: return a dict from metric name to value.

        Returns:
            The loss alone when there is no metric, else a list in Keras' order
            (see ``metrics_names``), or a dict with ``return_dict=True``.

        Raises:
            RuntimeError: the model was not compiled.
            ValueError: inputs or targets that do not fit the model.

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> model = Model(x, Dense(1)(x))
            >>> model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
            >>> loss, mae = model.evaluate(np.ones((4, 3)), np.ones((4, 1)), verbose=0)
            >>> sorted(model.evaluate(np.ones((4, 3)), np.ones((4, 1)), verbose=0, return_dict=True))
            ['loss', 'mae']
        """
        if dask_arrays.holds_dask_array(x, y, sample_weight):
            return dask_arrays.evaluate(self, x, y, batch_size, verbose, sample_weight, callbacks, return_dict)
        custom = self._custom_test()
        if is_batch_source(x):  # batches as the source yields them, each prepared as it comes
            self._require_compiled("evaluate")
            data = self._fit_source("evaluate()", x, y, sample_weight, batch_size=batch_size, raw=custom)
        else:
            self._require_compiled("evaluate", None if custom else x)
            data = (self._step_data if custom else self._training_data)("evaluate()", x, y, sample_weight)
        batch_size = check_batch_size(batch_size)
        callback_list = CallbackList(callbacks or [], self, {"steps": data.steps(batch_size)})
        callback_list.on_test_begin({})
        logs = self._evaluate_data(data, batch_size, callback_list)
        callback_list.on_test_end(logs)
        if verbosity(verbose):
            print(format_logs(logs))
        return logs if return_dict else self._ordered_results(logs)

    def predict(self, x, batch_size=None, verbose="auto", callbacks=None, outputs=None):
        """Runs the model over ``x`` in batches, in inference mode (dropout off, moving statistics used).

        Args:
            x: the inputs: arrays in the structure of the model's inputs
                (``numpy.memmap`` and zarr arrays are read a batch at a time; Dask
                arrays give lazy Dask arrays, a block per chunk of ``x``).
            batch_size: samples per batch (None: 32; a PyDataset or generator
                yields whole batches, whose targets, if any, predict ignores).
            verbose: accepted for Keras' signature; ``predict`` prints nothing.
            callbacks: Callback objects (their ``on_predict_*`` methods are called).
            outputs: intermediate tensors to return instead of the model's
                outputs (functional and Sequential models): KerasTensors of the
                graph or their qualified names (``"block/conv[0][0]"``,
                ``"shared[1][0]"``, ``"block/conv"`` for a layer's only call),
                one or in a list or dict. Only the steps they need run.

        Returns:
            The outputs, arrays in the model's output structure (empty arrays
            of the right shapes for 0 samples); with ``outputs``, in its structure.

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> model = Model(x, [Dense(1)(x), Dense(2)(x)])
            >>> [y.shape for y in model.predict(np.ones((5, 3)), batch_size=2)]
            [(5, 1), (5, 2)]
            >>> hidden = Dense(4, name="hidden")
            >>> model = Model(x, Dense(1)(hidden(x)))
            >>> model.predict(np.ones((5, 3)), outputs={"h": "hidden[0][0]"})["h"].shape
            (5, 4)
        """
        if dask_arrays.holds_dask_array(x):
            if outputs is not None:
                raise ValueError(
                    f"predict(outputs=...) of model {self.name!r} takes NumPy data; for Dask arrays, extract a "
                    "model ending at those tensors and predict with it: graph.extract(model, outputs=...).predict(x)."
                )
            return dask_arrays.predict(self, x, batch_size, callbacks)
        if self._overrides("predict_step"):
            if outputs is not None:
                raise ValueError(f"predict(outputs=...) of model {self.name!r} runs the model's own graph, but the "
                                 "model overrides predict_step: call predict_step yourself, or predict without it.")
            def prepare_inputs(inputs, *_):
                return StepData(inputs)

            run, pack = self._predict_steps, self._pack_predictions
        else:
            def prepare_inputs(inputs, *_):
                return prepare(self, inputs)

            run, pack = self._run_flat, self._pack_outputs
        # A PyDataset or generator yields whole batches, targets maybe among them: predict reads the inputs
        data = open_source(x, None, None, None, batch_size, False, prepare_inputs) if is_batch_source(x) else None
        data = prepare_inputs(x) if data is None else data
        batch_size = check_batch_size(batch_size)
        if outputs is not None:
            requested_plan = extensions.provided("requested_plan")  # engine.network.requested_outputs, which imports the models
            run, pack = requested_plan(self, outputs).run, functools.partial(tree.pack_as, outputs)
        callback_list = CallbackList(callbacks or [], self, {"steps": data.steps(batch_size)})
        callback_list.on_predict_begin({})
        chunks = []
        for step, batch in enumerate(data.batches(batch_size)):
            callback_list.on_predict_batch_begin(step, {})
            chunks.append(run(batch.data if isinstance(batch, StepData) else batch.x, training=False))
            callback_list.on_predict_batch_end(step, {"outputs": chunks[-1]})
        callback_list.on_predict_end({})
        flat = [np.concatenate(parts) for parts in zip(*chunks)]
        return pack(flat)

    def _predict_steps(self, data, training=False):
        """The flat outputs of an overridden ``predict_step`` on one batch (their structure kept for ``predict``)."""
        outputs = tree.map_structure(lambda a: np.asarray(untraced(a)), self.predict_step(data))
        self._predict_structure = tree.map_structure(lambda _: ..., outputs)
        return tree.flatten(outputs)

    def _pack_predictions(self, flat):
        return tree.pack_as(self._predict_structure, flat)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """One optimizer step on one batch (the metrics are reset first).

        Args:
            x: the batch's inputs, arrays in the structure of the model's inputs.
            y: its targets, in the structure of the outputs.
            sample_weight: a weight per sample (or per output).
            class_weight: a weight per class index (single-output models).
            return_dict: return a dict from metric name to value.

        Returns:
            The batch's loss (and metrics), as ``evaluate`` returns them.

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> model = Model(x, Dense(1)(x))
            >>> model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
            >>> loss, mae = model.train_on_batch(np.ones((4, 3)), np.ones((4, 1)))
        """
        self._require_compiled("train_on_batch", x)
        data = self._training_data("train_on_batch()", x, y, sample_weight, class_weight)
        self.reset_metrics()
        self._train_batch(data, self.trainable_weights)
        logs = self.get_metrics_result()
        return logs if return_dict else self._ordered_results(logs)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """The loss (and metrics) on one batch, without training (the metrics are reset first).

        Args:
            x: the batch's inputs, arrays in the structure of the model's inputs.
            y: its targets, in the structure of the outputs.
            sample_weight: a weight per sample (or per output).
            return_dict: return a dict from metric name to value.

        Returns:
            The batch's loss (and metrics), as ``evaluate`` returns them.

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> model = Model(x, Dense(1)(x))
            >>> model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
            >>> sorted(model.test_on_batch(np.ones((4, 3)), np.ones((4, 1)), return_dict=True))
            ['loss', 'mae']
        """
        self._require_compiled("test_on_batch", x)
        data = prepare(self, x, y, sample_weight)
        self.compiled_loss.check_targets(data.y, self)
        self.reset_metrics()
        self._test_batch(data)
        logs = self.get_metrics_result()
        return logs if return_dict else self._ordered_results(logs)

    def predict_on_batch(self, x):
        """The model's outputs on one batch, in inference mode.

        Args:
            x: the batch's inputs, arrays in the structure of the model's inputs.

        Returns:
            The outputs, arrays in the model's output structure.

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> Model(x, Dense(2)(x)).predict_on_batch(np.ones((4, 3))).shape
            (4, 2)
        """
        return self._pack_outputs(self._run_flat(prepare(self, x).x, training=False))


def _float_logs(logs):
    """A custom ``train_step``'s logs as floats, dict results (``compile_metrics``) spread out."""
    floats = {}
    for name, value in logs.items():
        if isinstance(value, dict):
            floats.update(_float_logs(value))
        else:
            floats[name] = float(np.asarray(untraced(value)))
    return floats


def _batch_size(x):
    return len(tree.flatten(x)[0])
