"""What ``compile`` resolves, as Keras 3 does: the loss, loss weight, metrics and
weighted metrics of each model output, read from arguments shaped like the outputs
(one value for all, a list, a dict by output name, or the outputs' nested structure).

The aliases whose meaning depends on the data resolve on the first batch, from the
shapes of the targets and outputs: loss ``"ce"``/``"crossentropy"`` and metric
``"acc"``/``"accuracy"`` become binary, sparse categorical or categorical."""

import numpy as np

from engine import tree
from engine.metrics.metric import Metric
from engine.metrics.reduction import Mean

_NESTED = (list, tuple, dict)
# The names compile resolves on the first batch, from the shapes of the targets and outputs.
_RESOLVED_ON_FIRST_BATCH = {"loss": ("ce", "crossentropy"), "metric": ("acc", "accuracy")}


class CompileStructureError(ValueError, KeyError):
    """A compile argument whose structure does not match the model's outputs.
    Keras raises KeyError or ValueError here depending on the case; this is both."""

    __str__ = ValueError.__str__


class CompiledLoss:
    """The per-output losses of a compiled model, their weights, and their total.

    ``losses`` and ``weights`` have one entry per flat output (None: no loss, or
    no weight). With more than one loss, ``metrics`` holds a running mean of each
    (``"<output>_loss"``), once the first batch has been computed.
    """

    def __init__(self, model, loss, loss_weights):
        from engine import losses

        outputs = _Outputs(model)
        self.names = outputs.names
        specs = outputs.spread(loss, "loss")
        self._pending = {i: spec for i, spec in enumerate(specs) if resolves_on_first_batch(spec, "loss")}
        self.losses = [None if spec is None or i in self._pending else losses.get(spec) for i, spec in enumerate(specs)]
        self.weights = _spread_loss_weights(outputs, loss, loss_weights, specs)
        configured = [i for i, spec in enumerate(specs) if spec is not None]
        self._trackers = [None] * len(specs)
        if len(configured) > 1:
            for i in configured:
                self._trackers[i] = Mean(name=f"{outputs.loss_names[i]}_loss")
        self.built = False

    @property
    def configured(self):
        """Whether any output has a loss."""
        return any(fn is not None for fn in self.losses) or bool(self._pending)

    @property
    def metrics(self):
        """The running means of the per-output losses (Keras lists them after the first batch)."""
        return [t for t in self._trackers if t is not None] if self.built else []

    def compute(self, targets, outputs, sample_weights, with_gradients=True):
        """Returns (total loss or None when no loss applies, unweighted per-output
        losses, gradients of the total w.r.t. each output)."""
        targets = targets or [None] * len(outputs)
        self._resolve(targets, [np.shape(out) for out in outputs])
        self.built = True
        total, per_output, grads = None, [], []
        for fn, weight, y, out, sw in zip(self.losses, self.weights, targets, outputs, sample_weights):
            if fn is None or y is None:
                per_output.append(None)
                grads.append(None)
                continue
            value = float(fn(y, out, sample_weight=sw))
            per_output.append(value)
            total = (total or 0.0) + (value if weight is None else weight * value)
            if with_gradients:
                grad = fn.gradient(y, out, sample_weight=sw)
                grads.append(grad if weight in (None, 1.0) else grad * np.asarray(weight, grad.dtype))
        return total, per_output, grads

    def update_trackers(self, per_output, size):
        """Adds one batch of ``size`` samples to the per-output loss means."""
        for tracker, value in zip(self._trackers, per_output):
            if tracker is not None and value is not None:
                tracker.update_state(value, sample_weight=size)

    def check_targets(self, targets, model):
        """Raises before training when targets cannot fit their loss: a shape the
        loss cannot pair with the output, or sparse labels out of range."""
        from engine.losses import SparseCategoricalCrossentropy

        if targets is None:
            return
        self._resolve(targets, [tensor.shape for tensor in model.outputs])
        for fn, y, tensor, name in zip(self.losses, targets, model.outputs, self.names):
            if fn is not None and y is not None:
                _check_target_shape(fn, np.shape(y), tensor, name, model.name)
            if isinstance(fn, SparseCategoricalCrossentropy) and y is not None:
                classes = tensor.shape[-1]
                labels = np.asarray(y)
                valid = labels != fn.ignore_class if fn.ignore_class is not None else np.ones(labels.shape, bool)
                bad = labels[valid & ((labels < 0) | (labels >= classes))]
                if bad.size:
                    raise ValueError(
                        f"Output {name!r} uses sparse categorical cross-entropy over {classes} classes, so labels "
                        f"must be in [0, {classes}); received label {bad.flat[0].item()!r}."
                    )

    def _resolve(self, targets, output_shapes):
        """Resolves ``"ce"`` losses from the target and output shapes, where both are known."""
        from engine import losses

        for index, spec in list(self._pending.items()):
            y, shape = targets[index], output_shapes[index]
            if y is None or shape[-1] is None:
                continue
            binary, sparse = _binary_or_sparse(np.shape(y), shape)
            cls = (losses.BinaryCrossentropy if binary else
                   losses.SparseCategoricalCrossentropy if sparse else losses.CategoricalCrossentropy)
            self.losses[index] = cls()
            del self._pending[index]


def _check_target_shape(loss, received, output, output_name, model_name):
    """Raises a ValueError when targets of shape ``received`` cannot pair with the
    symbolic ``output`` under a built-in ``loss``, as Keras would fail on them
    (custom losses define their own targets and are not checked)."""
    from engine import losses

    received, output_shape = tuple(received), tuple(output.shape)
    expected = received[:1] + output_shape[1:]
    labels = (expected[:-1], expected[:-1] + (1,))  # one class index per sample
    looks_sparse = len(expected) > 1 and expected[-1] not in (1, None) and any(_same(received, s) for s in labels)
    noun, advice = "labels", None
    if isinstance(loss, losses.SparseCategoricalCrossentropy):
        if any(_same(received, s) for s in labels):
            return
        target, wanted = labels[0], f"{labels[0]} or {labels[1]} (one integer class index per sample)"
        if _same(received, expected):
            advice = "For one-hot labels use loss='categorical_crossentropy', or pass labels.argmax(axis=-1)."
    elif isinstance(loss, losses.CategoricalCrossentropy):
        if _same(received, expected):
            return
        target, wanted = expected, f"{expected} (one-hot labels, one column per class)"
        if looks_sparse:
            advice = (f"These look like integer class labels: use loss='sparse_categorical_crossentropy', or one-hot "
                      f"encode them (np.eye({expected[-1]})[labels]).")
    elif isinstance(loss, (losses.MeanSquaredError, losses.MeanAbsoluteError, losses.Huber, losses.CosineSimilarity,
                           losses.KLDivergence, losses.BinaryCrossentropy)):
        y, out = _align_ranks(received, expected)
        exact = isinstance(loss, losses.BinaryCrossentropy)
        if len(y) == len(out) and all(_same_axis(a, b, broadcast=not exact) for a, b in zip(y, out)):
            return
        noun, target, wanted = "targets", expected, f"{expected} (a trailing axis of 1 may be added or dropped)"
        if looks_sparse:
            advice = (f"Targets of shape {received} look like integer class labels: for {expected[-1]} classes "
                      "use loss='sparse_categorical_crossentropy'; for regression give one target per output value.")
    else:
        return
    if advice is None and _per_sample_axes(received) < len(target) - 1 and not _same_size(received, target):
        raise ValueError(_output_has_more_axes(loss, received, output, output_name, model_name, noun, wanted))
    if advice is None:
        advice = (f"Reshape the {noun} to {target}." if _same_size(received, target) else
                  f"Give {noun} of shape {target}, or change the model so that its output fits {noun} of shape "
                  f"{received} (the output comes from {_origin(output)}).")
    raise ValueError(
        f"Targets for output {output_name!r} of model {model_name!r} do not fit its loss {loss.name!r}: expected "
        f"shape {wanted} for an output of shape {output_shape}, but received targets of shape "
        f"{received}. {advice}"
    )


def _output_has_more_axes(loss, received, output, output_name, model_name, noun, wanted):
    """The message for an output with axes its labels lack: the model's fault
    (typically a forgotten Flatten), not the labels'."""
    shape = tuple(output.shape)
    if _per_sample_axes(received) == 0 and len(shape) > 2:
        pooling = f" or GlobalAveragePooling{len(shape) - 2}D" if len(shape) <= 4 else ""
        fix = f"To predict one {noun[:-1]} per sample, add a Flatten{pooling} layer before the last Dense layer."
    else:
        fix = f"Change the model so that its output has the {noun}' axes, or give {noun} of shape {wanted}."
    return (
        f"The output shape of model {model_name!r} does not fit its {noun}: output {output_name!r} has shape "
        f"{shape}, for which loss {loss.name!r} expects {noun} of shape {wanted}, but received {noun} of shape "
        f"{received}. The output has more axes than the {noun}: it comes from {_origin(output)}. {fix}"
    )


def _origin(output):
    """Where a symbolic output's shape comes from: its layer and that layer's inputs."""
    history = output._keras_history
    if history is None or history.layer is None:
        return "the model's call()"
    layer = history.layer
    node = layer.inbound_nodes[history.node_index]
    inputs = ", ".join(str(tuple(tensor.shape)) for tensor in node.input_tensors)
    return f"layer {layer.name!r} ({type(layer).__name__}) applied to an input of shape {inputs}"


def _per_sample_axes(shape):
    """The axes a sample of ``shape`` has, a trailing axis of 1 not counted."""
    return len(shape) - 1 - (len(shape) > 1 and shape[-1] == 1)


def _same_size(received, target):
    """Whether a sample of ``received`` holds as many values as one of ``target`` (so a reshape fits it)."""
    return None not in target and int(np.prod(received[1:])) == int(np.prod(target[1:]))


def _align_ranks(y, out):
    """Keras' ``squeeze_or_expand_to_same_rank`` on shapes (as the losses align their arrays)."""
    if len(y) == len(out) + 1 and y[-1] == 1:
        return (y, out + (1,)) if len(out) == 1 else (y[:-1], out)
    if len(out) == len(y) + 1 and out[-1] == 1:
        return (y + (1,), out) if len(y) == 1 else (y, out[:-1])
    return y, out


def _same_axis(a, b, broadcast):
    return a == b or a is None or b is None or (broadcast and 1 in (a, b))


def _same(received, expected):
    return len(received) == len(expected) and all(_same_axis(a, b, False) for a, b in zip(received, expected))


class CompiledMetrics(Metric):
    """The metrics and weighted metrics of each output, as one metric: Keras'
    ``compile_metrics``. Metrics see no sample weights; weighted metrics do.

    ``result()`` is a dict by log name: the metric's name (the string given to
    compile, else the metric object's name), prefixed by the output's name when
    the model has several outputs; a weighted metric whose name is taken is
    ``weighted_<name>``.
    """

    def __init__(self, model, metrics, weighted_metrics):
        super().__init__(name="compile_metrics")
        for argument, value in (("metrics", metrics), ("weighted_metrics", weighted_metrics)):
            if value and not isinstance(value, _NESTED):
                raise ValueError(
                    f"Expected `{argument}` argument to be a list, tuple, or dict. Received instead: "
                    f"{argument}={value!r} of type {type(value)}. Write {argument}=[{value!r}]."
                )
        outputs = _Outputs(model)
        self._names = outputs.metric_names
        self._specs = (outputs.spread_metrics(metrics, "metrics"),
                       outputs.spread_metrics(weighted_metrics, "weighted_metrics"))
        self._entries = []  # (output index, log name, metric, weighted), once built
        self.built = False

    @property
    def metrics(self):
        """The metrics, then the weighted metrics (empty until the first batch)."""
        return [metric for _, _, metric, _ in self._entries]

    def build(self, targets, outputs):
        """Resolves every metric against the first batch's targets and outputs."""
        taken, multiple = set(), len(self._names) > 1
        for weighted, per_output in enumerate(self._specs):
            for index, specs in enumerate(per_output):
                if targets[index] is None:
                    continue
                for spec in specs:
                    metric = _get_metric(spec, np.shape(targets[index]), np.shape(outputs[index]))
                    prefix = f"{self._names[index]}_" if multiple else ""
                    name = prefix + metric.name
                    if weighted and name in taken:
                        name = f"{prefix}weighted_{metric.name}"
                    log_name = _unique(name, taken)
                    taken.add(log_name)
                    # A metric object given to compile may hold the state of an earlier use; the
                    # reset that starts fit or evaluate ran before it was resolved here.
                    metric.reset_state()
                    self._entries.append((index, log_name, metric, bool(weighted)))
        self.built = True

    def update(self, targets, outputs, sample_weights):
        """Adds a batch given flat lists (one entry per output)."""
        if targets is None:
            return
        if not self.built:
            self.build(targets, outputs)
        for index, _, metric, weighted in self._entries:
            if targets[index] is not None:
                weight = sample_weights[index] if weighted else None
                metric.update_state(targets[index], outputs[index], sample_weight=weight)

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch given in the structure of the model's outputs (for a custom ``train_step``)."""
        targets, outputs = self._flat(y_true), tree.flatten(y_pred)
        weights = [None] * len(outputs) if sample_weight is None else self._flat(sample_weight)
        if len(weights) < len(outputs):
            weights = weights[:1] * len(outputs)
        self.update(targets, outputs, weights)

    def reset_state(self):
        for _, _, metric, _ in self._entries:
            metric.reset_state()

    def result(self):
        # A metric with one value per threshold or class (F1Score, TruePositives at several
        # thresholds) logs its array, as in Keras; the others log a float.
        results = {log_name: metric.result() for _, log_name, metric, _ in self._entries}
        return {name: value if np.ndim(value) else float(value) for name, value in results.items()}

    def _flat(self, values):
        if isinstance(values, dict) and set(values) <= set(self._names):
            return [values.get(name) for name in self._names]
        return tree.flatten(values)


def _unique(name, taken):
    """``name``, or ``name_1``, ``name_2``... if taken (Keras' counters)."""
    candidate, count = name, 0
    while candidate in taken:
        count += 1
        candidate = f"{name}_{count}"
    return candidate


def _get_metric(spec, target_shape, output_shape):
    """A metric for ``spec``, named as Keras names it: the string given, else the object's name."""
    from engine import metrics

    if spec is None:
        raise ValueError("Expected metric, received `None`: remove it from the list of metrics.")
    if resolves_on_first_batch(spec, "metric"):
        binary, sparse = _binary_or_sparse(target_shape, output_shape)
        cls = (metrics.BinaryAccuracy if binary else
               metrics.SparseCategoricalAccuracy if sparse else metrics.CategoricalAccuracy)
        return cls(name=spec)
    metric = metrics.get(spec)
    if isinstance(spec, str):
        metric.name = spec
    return metric


def resolves_on_first_batch(spec, kind):
    """Whether the ``kind`` (``"loss"`` or ``"metric"``) ``spec`` given to compile
    is resolved on the first batch, from its shapes (``"ce"``, ``"acc"``...).

    Example:
        >>> resolves_on_first_batch("Accuracy", "metric"), resolves_on_first_batch("mae", "metric")
        (True, False)
    """
    return isinstance(spec, str) and spec.lower() in _RESOLVED_ON_FIRST_BATCH[kind]


def _binary_or_sparse(target_shape, output_shape):
    """Keras' reading of targets against outputs: binary when the output has one
    unit; sparse when targets lack the class axis (or have a trailing axis of 1)."""
    target_last = target_shape[-1] if target_shape else None
    binary = output_shape[-1] == 1
    sparse = len(target_shape) < len(output_shape) or (target_last == 1 and output_shape[-1] > 1)
    return binary, sparse


class _Outputs:
    """A model's flat outputs as compile arguments address them: by position, by
    name (``names``: the dict keys of a dict output, else the output layers'
    names) and by path in the outputs' nested structure."""

    def __init__(self, model):
        structure = getattr(model, "_outputs_struct", None)
        if structure is None:
            structure = model._output_structure
        self.model_name = model.name
        self.structure = structure
        self.paths = _paths(structure)
        self.names = list(model.output_names)
        if isinstance(structure, dict) and all(not isinstance(v, _NESTED) for v in structure.values()):
            self.metric_names = sorted(structure)
        elif len(self.names) == len(self.paths):
            self.metric_names = self.names
        else:  # a nested structure: name each output after the layer that made it
            self.metric_names = [t._keras_history.layer.name if getattr(t, "_keras_history", None) else f"output_{i}"
                                 for i, t in enumerate(model.outputs)]
        if len(self.names) != len(self.paths):
            self.names = self.metric_names
        # A loss's log name is its path, the last list index replaced by the output's name ("x/a").
        self.loss_names = ["/".join(map(str, path[:-1] + (name,) if not path or isinstance(path[-1], int) else path))
                           for path, name in zip(self.paths, self.metric_names)]

    def spread(self, value, argument):
        """One entry of a loss-like ``value`` per flat output (None for none)."""
        count = len(self.paths)
        if not isinstance(value, _NESTED):
            return [value] * count
        if isinstance(value, (list, tuple)) and len(value) == count and not any(isinstance(v, _NESTED) for v in value):
            return list(value)
        if isinstance(value, dict) and not isinstance(self.structure, dict):
            if set(value) != set(self.names):
                unknown = [k for k in value if k not in self.names]
                missing = [n for n in self.names if n not in value]
                raise CompileStructureError(
                    f"Expected keys {self.names} in {argument} dict, but found {argument}.keys()={list(value)}: "
                    + (f"compile() received {argument} for outputs {unknown}, but model {self.model_name!r} has no "
                       f"such output. " if unknown else f"outputs {missing} have no entry. ")
                    + f"Its outputs are {self.names}; give each one an entry (None for none)."
                )
            return [value[name] for name in self.names]
        return self._match(value, self.structure, (), argument, leaf_lists=False)

    def spread_metrics(self, value, argument):
        """One list of metric specs per flat output."""
        if not value:
            return [[] for _ in self.paths]
        if len(self.paths) == 1:
            return [tree.flatten(value)]
        per_output = None
        if isinstance(value, (list, tuple)) and len(value) == len(self.paths):
            per_output = list(value)
        elif isinstance(value, dict) and set(value) <= set(self.metric_names):
            per_output = [value.get(name) for name in self.metric_names]
        if per_output is None:
            try:
                per_output = self._match(value, self.structure, (), argument, leaf_lists=True)
            except CompileStructureError as error:
                raise ValueError(
                    f"{error}\nInvalid `{argument}`. `{argument}` should contain metrics objects and either be a "
                    f"dict or a list matching the output names of the model {self.metric_names} or match the "
                    f"output structure of the model. Received: {argument}={value!r}"
                ) from None
        return [[] if entry is None else list(entry) if isinstance(entry, (list, tuple)) else [entry]
                for entry in per_output]

    def _match(self, value, structure, path, argument, leaf_lists):
        """Flat entries of ``value`` laid over ``structure`` (dict keys may be left
        out; a value that is not nested applies to every output below it)."""
        if not isinstance(structure, _NESTED):
            if not leaf_lists and isinstance(value, (list, tuple)) and len(value) == 1:
                value = value[0]  # Keras applies each loss of a list to this output: one loss is that loss
            if isinstance(value, _NESTED) and not (leaf_lists and isinstance(value, (list, tuple))):
                raise CompileStructureError(
                    f"The path: {path} in the `{argument}` argument, can't be found in the model's output "
                    f"(`y_pred`): the output there is one tensor, but {argument} holds {value!r}."
                )
            return [value]
        if not isinstance(value, _NESTED):
            return [value] * len(_paths(structure))
        if isinstance(structure, dict) and isinstance(value, dict):
            unknown = [k for k in value if k not in structure]
            if unknown:
                raise CompileStructureError(
                    f"The path: {path + (unknown[0],)} in the `{argument}` argument, can't be found in the "
                    f"model's output (`y_pred`): compile() received {argument} for outputs {unknown}, but model "
                    f"{self.model_name!r} has no such output. Its outputs are {sorted(structure)}."
                )
            return [entry for key in sorted(structure)
                    for entry in self._match(value.get(key), structure[key], path + (key,), argument, leaf_lists)]
        if isinstance(structure, (list, tuple)) and isinstance(value, (list, tuple)) and len(value) == len(structure):
            return [entry for index, (v, s) in enumerate(zip(value, structure))
                    for entry in self._match(v, s, path + (index,), argument, leaf_lists)]
        extra = isinstance(value, (list, tuple)) and isinstance(structure, (list, tuple)) and len(value) > len(structure)
        where = path + (len(structure),) if extra else path
        raise CompileStructureError(
            f"The path: {where} in the `{argument}` argument, can't be found in the model's output (`y_pred`): "
            + (f"compile() received {len(value)} {argument} for a model with {len(_paths(structure))} outputs "
               f"{self.names}; pass one per output (a list in output order, or a dict by output name), or one "
               "for all." if path == () else
               f"the outputs there are {_shape_of(structure)}, but {argument} holds {value!r}.")
        )


def _paths(structure, prefix=()):
    """The path (keys and indices) of every leaf of ``structure``, in ``tree.flatten`` order."""
    if isinstance(structure, (list, tuple)):
        return [p for i, item in enumerate(structure) for p in _paths(item, prefix + (i,))]
    if isinstance(structure, dict):
        return [p for key in sorted(structure) for p in _paths(structure[key], prefix + (key,))]
    return [prefix]


def _shape_of(structure):
    return tree.pack_as(structure, ["X"] * len(_paths(structure)))


def _spread_loss_weights(outputs, loss, loss_weights, specs):
    """One weight (or None) per flat output, as Keras pairs ``loss_weights`` with the losses."""
    if loss_weights is None:
        return [None] * len(specs)
    if not isinstance(loss_weights, _NESTED):
        weights = [loss_weights] * len(specs)
    elif not isinstance(loss, _NESTED) and len(specs) > 1:
        raise ValueError(
            f"`loss_weights` must match the number of losses, got 1 losses and {len(tree.flatten(loss_weights))} "
            f"weights: compile() received one loss for all outputs, so give one weight (a number) too, or a "
            "loss per output."
        )
    else:
        weights = outputs.spread(loss_weights, "loss_weights")
    for weight in weights:
        if weight is not None and not isinstance(weight, (int, float, np.number)) or isinstance(weight, bool):
            raise ValueError(
                f"compile() expects each of loss_weights to be a number, received {weight!r} "
                f"(loss_weights={loss_weights!r})."
            )
    return [None if w is None else float(w) for w in weights]


def compile_config(optimizer, loss, metrics, loss_weights, weighted_metrics=None):
    """The compile arguments as JSON-friendly data, for model files."""
    from engine import losses, optimizers
    from engine import metrics as metrics_module

    def encode(value, module):
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, (list, tuple)):
            return [encode(v, module) for v in value]
        if isinstance(value, dict):
            return {k: encode(v, module) for k, v in value.items()}
        return module.serialize(module.get(value))  # functions are wrapped, then saved by name

    return {
        "optimizer": optimizers.serialize(optimizer),
        "loss": encode(loss, losses),
        "metrics": encode(metrics, metrics_module),
        "weighted_metrics": encode(weighted_metrics, metrics_module),
        "loss_weights": loss_weights,
    }
