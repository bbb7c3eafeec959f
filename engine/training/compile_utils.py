"""What ``compile`` resolves, as Keras 3 does: the losses, loss weights, metrics and
weighted metrics of the model's outputs, read from arguments shaped like the outputs
(one value for all, a list, a dict by output name, or the outputs' nested structure,
where a loss may also apply to several outputs at once). They are matched to the
outputs once, on the first batch, where Keras matches them: arguments that do not
fit the outputs raise in ``fit`` or ``evaluate``, with Keras' exception type.

The aliases whose meaning depends on the data resolve on the first batch, from the
shapes of the targets and outputs: loss ``"ce"``/``"crossentropy"`` and metric
``"acc"``/``"accuracy"`` become binary, sparse categorical or categorical."""

import numpy as np

from engine import tree
from engine.autodiff import GradientTape, untraced
from engine.training.losses.loss import LossFunctionWrapper, _divisor, squeeze_or_expand_to_same_rank
from engine.training.metrics.metric import Metric
from engine.training.metrics.reduction import Mean
from engine.network.ops import unbroadcast

_NESTED = (list, tuple, dict)
# The names compile resolves on the first batch, from the shapes of the targets and outputs.
_RESOLVED_ON_FIRST_BATCH = {"loss": ("ce", "crossentropy"), "metric": ("acc", "accuracy")}


class CompileStructureError(ValueError, KeyError):
    """A compile argument whose structure does not match the model's outputs.
    Keras raises KeyError or ValueError here depending on the case; this is both."""

    __str__ = ValueError.__str__


class CompiledLoss:
    """The losses of a compiled model, matched to its outputs by structure as
    Keras 3's ``CompileLoss`` matches them, and their weighted total.

    ``loss`` may be one loss for every output, or mirror the outputs' nested
    structure (lists, tuples, namedtuples, dicts) or a prefix of it; a list
    where the outputs have another container applies each of its losses to the
    whole structure there, so a loss function may receive several outputs at
    once (in their structure). The match is made once, on the first batch
    (``build``), when Keras makes it: arguments that do not fit the outputs
    raise then, in ``fit`` or ``evaluate``, not in ``compile``.

    Each match is an entry: a path in the outputs, its loss, weight and log
    name. With more than one entry, ``metrics`` holds a running mean of each
    (``"<name>_loss"``), once the first batch has been computed.
    """

    def __init__(self, model, loss, loss_weights):
        if loss_weights is not None and not isinstance(loss_weights, _NESTED) and not _is_number(loss_weights):
            raise ValueError(
                "Expected `loss_weights` argument to be a float (single output case) or a list, tuple, or dict "
                f"(multiple output case). Received instead: loss_weights={loss_weights!r} of type "
                f"{type(loss_weights)}. Give a number, or one per output."
            )
        self._outputs = _Outputs(model)
        self._loss, self._loss_weights = loss, loss_weights
        self.entries = None  # once built: the _LossEntry of every loss applied
        self._trackers = []
        self.built = False

    @property
    def configured(self):
        """Whether any output has a loss."""
        return any(spec is not None for spec in tree.flatten(self._loss))

    @property
    def names(self):
        """The name of each flat output of the model, as messages give them."""
        return self._outputs.names

    @property
    def losses(self):
        """The loss of each flat output of the model (None: none, or one that
        applies to several outputs at once), once built."""
        self._require_entries()
        per_output = [None] * len(self._outputs.paths)
        for entry in self.entries:
            if isinstance(entry.outputs, int) and per_output[entry.outputs] is None:
                per_output[entry.outputs] = entry.loss
        return per_output

    @property
    def metrics(self):
        """The running means of the entries' losses (Keras lists them after the first batch)."""
        return list(self._trackers) if self.built else []

    def build(self, structure=None, names=None):
        """Matches the losses to the outputs: ``structure`` holds the index of
        each flat output in the outputs' nesting (by default the model's);
        ``names`` the flat outputs' names (by default the model's).

        Raises:
            ValueError: a loss dict whose keys are not the output names of a
                model whose outputs are not a dict, or ``loss_weights`` that
                do not match the losses.
            KeyError: (also a ValueError) a path of ``loss`` that the outputs
                do not have.
        """
        if structure is None:
            structure, names = self._outputs.structure, self._outputs.names
        loss, loss_weights = self._loss, self._loss_weights
        if names and isinstance(loss, dict) and not isinstance(structure, dict):
            if set(loss) != set(names):
                unknown = [k for k in loss if k not in names]
                missing = [n for n in names if n not in loss]
                raise CompileStructureError(
                    f"Expected keys {names} in loss dict, but found loss.keys()={list(loss)}: "
                    + (f"compile() received loss for outputs {unknown}, but model {self._outputs.model_name!r} has "
                       "no such output. " if unknown else f"outputs {missing} have no entry. ")
                    + f"Its outputs are {names}; give each one an entry (None for none)."
                )
            loss = [loss[name] for name in names]
        if names and isinstance(loss_weights, dict) and not isinstance(structure, dict) \
                and set(loss_weights) == set(names):  # weights by output name, in the outputs' order
            loss_weights = [loss_weights[name] for name in names]
        weighted = _weigh(loss, loss_weights)
        if not isinstance(weighted, _NESTED):
            weighted = tree.map_structure(lambda _: weighted, structure)
        flat = tree.flatten(structure)
        name_structure = tree.pack_as(structure, names if names and len(names) == len(flat) else [None] * len(flat))
        self.entries = []
        self._build_nested(structure, weighted, name_structure, ())
        if len(self.entries) > 1:
            self._trackers = [Mean(name=f"{entry.name}_loss") for entry in self.entries]

    def _build_nested(self, structure, loss, names, path):
        """Keras' ``CompileLoss._build_nested``: the entries of ``loss`` laid over ``structure`` at ``path``."""
        if not isinstance(loss, _NESTED):
            if loss is not None:
                self.entries.append(_entry(structure, loss, names, path))
            return
        if (isinstance(loss, (list, tuple)) and not any(isinstance(item, _NESTED) for item in loss)
                and len(loss) == len(tree.flatten(structure))):
            loss = tree.pack_as(structure, list(loss))
        elif isinstance(loss, (list, tuple)) and not isinstance(structure, type(loss)):
            for item in loss:  # each loss of the list applies to everything at this path
                self._build_nested(structure, item, names, path)
            return
        if not isinstance(loss, _NESTED):
            return self._build_nested(structure, loss, names, path)
        if not isinstance(loss, type(structure)):
            raise CompileStructureError(
                f"The path: {path} in the `loss` argument, can't be found in the model's output (`y_pred`): the "
                f"outputs there are {_shape_of(structure)}, but loss holds {_shape_of(loss)}."
            )
        for key, item in (loss.items() if isinstance(loss, dict) else enumerate(loss)):
            if item is None:
                continue
            if not _has_key(structure, key):
                raise CompileStructureError(self._no_such_output(structure, loss, names, path, key))
            self._build_nested(structure[key], item, names[key], path + (key,))

    def _no_such_output(self, structure, loss, names, path, key):
        """Keras' message for a key of ``loss`` that the outputs ``structure`` at ``path`` lack, and ours."""
        there = " there" if path else ""
        if isinstance(structure, dict):
            unknown = [k for k in loss if k not in structure]
            detail = (f"compile() received loss for outputs {unknown}, but model {self._outputs.model_name!r} has no "
                      f"such output{there}. Its outputs{there} are {sorted(structure)}.")
        elif path:
            detail = f"the outputs there are {_shape_of(structure)}, but loss holds {_shape_of(loss)}."
        else:
            detail = (f"compile() received {len(loss)} loss for a model with {len(structure)} outputs {names}; pass "
                      "one per output (a list in output order, or a dict by output name), or one for all.")
        return (f"The path: {path + (key,)} in the `loss` argument, can't be found in either the model's output "
                f"(`y_pred`) or in the labels (`y_true`): {detail}")

    def compute(self, targets, outputs, sample_weights, with_gradients=True, structure=None):
        """Returns (total loss or None when no loss applies, the unweighted loss
        of each entry, gradients of the total w.r.t. each flat output).

        Args:
            targets: the targets of each flat output (None: none).
            outputs: the value of each flat output.
            sample_weights: the sample weights of each flat output (None: none).
            with_gradients: whether to compute the gradients (else they are None).
            structure: for the first call, the outputs' nesting holding each
                flat output's index, if not the model's (see ``build``).
        """
        targets = targets or [None] * len(outputs)
        if self.entries is None:
            names = self.names if structure is None or len(outputs) == len(self.names) else None
            self.build(structure, names)
        self._resolve(targets, [np.shape(out) for out in outputs])
        self.built = True
        total, per_entry, grads = None, [], [None] * len(outputs)
        for entry in self.entries:
            value, entry_grads = entry.compute(targets, outputs, sample_weights, with_gradients)
            per_entry.append(value)
            if value is None:
                continue
            total = (total or 0.0) + (value if entry.weight is None else entry.weight * value)
            for index, grad in entry_grads.items():
                if entry.weight not in (None, 1.0):
                    grad = grad * np.asarray(entry.weight, grad.dtype)
                grads[index] = grad if grads[index] is None else grads[index] + grad
        return total, per_entry, grads

    def update_trackers(self, per_entry, size):
        """Adds one batch of ``size`` samples to the entries' loss means."""
        for tracker, value in zip(self._trackers, per_entry):
            if value is not None:
                tracker.update_state(value, sample_weight=size)

    def check_targets(self, targets, model):
        """Raises before training when targets cannot fit their loss: a shape the
        loss cannot pair with the output, or sparse labels out of range."""
        from engine.training.losses import SparseCategoricalCrossentropy

        if targets is None:
            return
        self._require_entries()
        self._resolve(targets, [tensor.shape for tensor in model.outputs])
        for entry in self.entries:
            if not isinstance(entry.outputs, int) or entry.loss is None or targets[entry.outputs] is None:
                continue
            fn, y, tensor, name = entry.loss, targets[entry.outputs], model.outputs[entry.outputs], \
                self.names[entry.outputs]
            _check_target_shape(fn, np.shape(y), tensor, name, model.name)
            if isinstance(fn, SparseCategoricalCrossentropy):
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
        from engine.training import losses

        for entry in self.entries:
            if entry.loss is not None:
                continue
            y, shape = targets[entry.outputs], output_shapes[entry.outputs]
            if y is None or shape[-1] is None:
                continue
            binary, sparse = _binary_or_sparse(np.shape(y), shape)
            entry.loss = (losses.BinaryCrossentropy if binary else
                          losses.SparseCategoricalCrossentropy if sparse else losses.CategoricalCrossentropy)()

    def _require_entries(self):
        if self.entries is None:
            self.build()


def _has_key(structure, key):
    """Whether the outputs ``structure`` (a dict, list or tuple) have an entry at ``key``."""
    return key in structure if isinstance(structure, dict) else key < len(structure)


class _Weighted:
    """One loss given to compile with its weight: a leaf of the losses' structure."""

    def __init__(self, spec, weight):
        self.spec, self.weight = spec, weight


def _weigh(loss, loss_weights):
    """``loss`` with each loss turned into a _Weighted (None stays None), paired
    with ``loss_weights`` as Keras pairs them: the same structure, or as many
    weights as losses in order; a single number weighs every loss."""
    specs = tree.flatten(loss)
    if loss_weights is None:
        weights = [None] * len(specs)
    elif not isinstance(loss_weights, _NESTED):
        weights = [loss_weights] * len(specs)
    else:
        weights = tree.flatten(loss_weights)
        if len(weights) != len(specs):
            raise ValueError(
                f"`loss_weights` must match the number of losses, got {len(specs)} losses and {len(weights)} "
                "weights: " + ("compile() received one loss for all outputs, so give one weight (a number) too, or "
                               "a loss per output." if not isinstance(loss, _NESTED) else
                               f"give one weight per loss, in the structure of loss={loss!r}.")
            )
    for weight in weights:
        if weight is not None and not _is_number(weight):
            raise ValueError(
                f"compile() expects each of loss_weights to be a number, received {weight!r} "
                f"(loss_weights={loss_weights!r})."
            )
    return tree.pack_as(loss, [None if spec is None else _Weighted(spec, None if weight is None else float(weight))
                               for spec, weight in zip(specs, weights)])


def _is_number(value):
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


def _entry(structure, weighted, names, path):
    """The _LossEntry of ``weighted`` applied to the outputs ``structure`` at ``path``, named as Keras names
    it: the path, its last list index replaced by the output's name (the loss's name when unknown); the
    outputs' names joined by ``_`` for a loss over the whole outputs."""
    if isinstance(structure, _NESTED) and resolves_on_first_batch(weighted.spec, "loss"):
        raise ValueError(
            f"The loss {weighted.spec!r} at path {path} of the `loss` argument applies to several outputs "
            f"({_shape_of(structure)}), but it is resolved from one output's shape. Name the loss "
            "('categorical_crossentropy'...), or give one loss per output."
        )
    entry = _LossEntry(path, structure, weighted.spec, weighted.weight)
    if isinstance(structure, _NESTED) and not isinstance(entry.loss, LossFunctionWrapper):
        raise ValueError(
            f"The loss {entry.loss.name!r} at path {path} of the `loss` argument applies to several outputs at once "
            f"({_shape_of(structure)}): as Keras, compile() gives each loss of a list where the outputs are not a "
            "list all the outputs there, in their structure, which only a loss function of that structure can "
            "take. Give one loss per output (a list in output order, or a dict by output name), or one for all."
        )
    name_path = path
    if not isinstance(names, _NESTED):
        name = names if names is not None else entry.loss.name if entry.loss is not None else weighted.spec
        if not name_path:
            name_path = (name,)
        elif isinstance(name_path[-1], int):
            name_path = name_path[:-1] + (name,)
    entry.name = "/".join(map(str, name_path))
    if not entry.name:
        entry.name = "_".join(map(str, sorted(names) if isinstance(names, dict) else tree.flatten(names)))
    return entry


class _LossEntry:
    """One loss applied to the outputs at ``path``: ``outputs`` holds the flat
    index of each output there (one index for one output). ``loss`` is None
    until a loss resolved from the first batch's shapes (``"ce"``) is."""

    def __init__(self, path, outputs, spec, weight):
        from engine.training import losses

        self.path, self.outputs, self.weight, self.name = path, outputs, weight, None
        self.loss = None if resolves_on_first_batch(spec, "loss") else losses.get(spec)

    def compute(self, targets, outputs, sample_weights, with_gradients):
        """(the unweighted loss, or None without targets; the gradient w.r.t. each flat output it reads)."""
        indices = tree.flatten(self.outputs)
        if self.loss is None or any(targets[i] is None for i in indices):
            return None, {}
        if isinstance(self.outputs, int):
            i = self.outputs
            value = float(self.loss(targets[i], outputs[i], sample_weight=sample_weights[i]))
            grads = {i: self.loss.gradient(targets[i], outputs[i], sample_weight=sample_weights[i])} \
                if with_gradients else {}
            return value, grads
        y_true = tree.pack_as(self.outputs, [targets[i] for i in indices])
        values = [np.asarray(outputs[i]) for i in indices]
        sample_weight = sample_weights[indices[0]]
        if not with_gradients:
            per_sample = np.asarray(self.loss.call(y_true, tree.pack_as(self.outputs, values)))
            return float(_reduce(self.loss, per_sample, sample_weight)[0]), {}
        with GradientTape() as tape:
            traced = [tape.watch(value) for value in values]
            per_sample = self.loss.call(y_true, tree.pack_as(self.outputs, traced))
        value, upstream = _reduce(self.loss, np.asarray(untraced(per_sample)), sample_weight)
        grads = tape.gradient(per_sample, traced, output_gradients=upstream)
        return float(value), {i: np.zeros_like(v) if g is None else g for i, v, g in zip(indices, values, grads)}


def _reduce(loss, per_sample, sample_weight):
    """The reduced loss of ``per_sample`` losses, weighted and reduced as ``loss``
    reduces its own, and its gradient with respect to them (a loss over several
    outputs at once, whose per-sample losses its function returned)."""
    if per_sample.dtype.kind != "f":
        per_sample = per_sample.astype("float32")
    values, weights = per_sample, None
    if sample_weight is not None:
        values, weights = squeeze_or_expand_to_same_rank(per_sample, np.asarray(sample_weight, per_sample.dtype))
    weighted = values if weights is None else values * weights
    divisor = 1 if loss.reduction in ("none", None) else _divisor(weighted, weights, loss.reduction)
    upstream = np.full(weighted.shape, 1 / divisor if divisor else 0, dtype=per_sample.dtype)
    if weights is not None:
        upstream = unbroadcast(upstream * weights, values.shape).reshape(per_sample.shape)
    return (weighted.sum() / divisor if divisor else 0.0), upstream.reshape(per_sample.shape)


def _check_target_shape(loss, received, output, output_name, model_name):
    """Raises a ValueError when targets of shape ``received`` cannot pair with the
    symbolic ``output`` under a built-in ``loss``, as Keras would fail on them
    (custom losses define their own targets and are not checked)."""
    from engine.training import losses

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
        self._outputs = _Outputs(model)
        self._names = self._outputs.metric_names
        self._arguments = (metrics, weighted_metrics)
        self._entries = []  # (output index, log name, metric, weighted), once built
        self.built = False

    @property
    def metrics(self):
        """The metrics, then the weighted metrics (empty until the first batch)."""
        return [metric for _, _, metric, _ in self._entries]

    def build(self, targets, outputs):
        """Matches the metrics to the outputs and resolves each against the first
        batch's targets and outputs; as in Keras, metrics that do not match the
        outputs raise here (in ``fit`` or ``evaluate``), not in ``compile``."""
        taken, multiple = set(), len(self._names) > 1
        specs = [self._outputs.spread_metrics(value, argument)
                 for value, argument in zip(self._arguments, ("metrics", "weighted_metrics"))]
        for weighted, per_output in enumerate(specs):
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

    def check(self):
        """Matches the metrics to the model's outputs without a batch (a model
        file's compile config is checked so, when it loads), raising as ``build`` would."""
        for value, argument in zip(self._arguments, ("metrics", "weighted_metrics")):
            self._outputs.spread_metrics(value, argument)

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
    from engine.training import metrics

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
    names) and by path in the outputs' nested structure (``structure``, which
    holds each flat output's index: no tensors, so that it pickles)."""

    def __init__(self, model):
        graph = model._graph_model()  # a functional model, or a Sequential's Functional
        structure = model._output_structure if graph is None else graph.output
        self.model_name = model.name
        self.paths = _paths(structure)
        self.structure = tree.pack_as(structure, range(len(self.paths)))
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
                per_output = self._match(value, self.structure, (), argument)
            except CompileStructureError as error:
                raise ValueError(
                    f"{error}\nInvalid `{argument}`. `{argument}` should contain metrics objects and either be a "
                    f"dict or a list matching the output names of the model {self.metric_names} or match the "
                    f"output structure of the model. Received: {argument}={value!r}"
                ) from None
        return [[] if entry is None else list(entry) if isinstance(entry, (list, tuple)) else [entry]
                for entry in per_output]

    def _match(self, value, structure, path, argument):
        """Flat entries of ``value`` laid over ``structure`` (dict keys may be left
        out; a value that is not nested applies to every output below it)."""
        if not isinstance(structure, _NESTED):
            if isinstance(value, dict):
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
                    for entry in self._match(value.get(key), structure[key], path + (key,), argument)]
        if isinstance(structure, (list, tuple)) and isinstance(value, (list, tuple)) and len(value) == len(structure):
            return [entry for index, (v, s) in enumerate(zip(value, structure))
                    for entry in self._match(v, s, path + (index,), argument)]
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


def compile_config(optimizer, loss, metrics, loss_weights, weighted_metrics=None):
    """The compile arguments as JSON-friendly data, for model files."""
    from engine.training import losses, optimizers
    from engine.training import metrics as metrics_module

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
