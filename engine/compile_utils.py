"""What ``compile`` resolves: one loss (with its weight) and a list of metrics per model output."""

import numpy as np


class CompiledLoss:
    """The per-output losses of a compiled model, their weights, and their total.

    ``loss`` is one loss (used for every output), a list aligned with the
    outputs, or a dict keyed by output name (outputs without a key get none).
    """

    def __init__(self, model, loss, loss_weights):
        from engine import losses

        names = model.output_names
        self.names = names
        per_output = _per_output(model, loss, "loss")
        self.losses = [None if spec is None else losses.get(spec) for spec in per_output]
        if all(fn is None for fn in self.losses):
            raise ValueError(
                f"Model {model.name!r} was compiled without a loss for any of its outputs {names}: "
                "pass loss= to compile()."
            )
        weights = _per_output(model, 1.0 if loss_weights is None else loss_weights, "loss_weights")
        self.weights = [1.0 if w is None else float(w) for w in weights]

    def compute(self, targets, outputs, sample_weights, with_gradients=True):
        """Returns (total loss, per-output losses, gradients of the total w.r.t. each output)."""
        total, per_output, grads = 0.0, [], []
        for fn, weight, y, out, sw in zip(self.losses, self.weights, targets, outputs, sample_weights):
            if fn is None or y is None:
                per_output.append(None)
                grads.append(None)
                continue
            value = float(fn(y, out, sample_weight=sw))
            per_output.append(value)
            total += weight * value
            if with_gradients:
                grad = fn.gradient(y, out, sample_weight=sw)
                grads.append(grad if weight == 1.0 else grad * np.asarray(weight, grad.dtype))
        return total, per_output, grads

    def check_targets(self, targets, model):
        """Raises before training when targets cannot fit their loss: a shape the
        loss cannot pair with the output, or sparse labels out of range."""
        from engine.losses import SparseCategoricalCrossentropy

        for fn, y, tensor, name in zip(self.losses, targets, model.outputs, self.names):
            if fn is not None and y is not None:
                _check_target_shape(fn, np.shape(y), tensor.shape, name, model.name)
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


def _check_target_shape(loss, received, output_shape, output_name, model_name):
    """Raises a ValueError when targets of shape ``received`` cannot pair with an
    output of ``output_shape`` under a built-in ``loss``, as Keras would fail on
    them (custom losses define their own targets and are not checked)."""
    from engine import losses

    received = tuple(received)
    expected = received[:1] + tuple(output_shape[1:])
    labels = (expected[:-1], expected[:-1] + (1,))  # one class index per sample
    looks_sparse = len(expected) > 1 and expected[-1] not in (1, None) and any(_same(received, s) for s in labels)
    if isinstance(loss, losses.SparseCategoricalCrossentropy):
        if any(_same(received, s) for s in labels):
            return
        wanted = f"{labels[0]} or {labels[1]} (one integer class index per sample)"
        advice = ("For one-hot labels use loss='categorical_crossentropy', or pass labels.argmax(axis=-1)."
                  if _same(received, expected) else f"Reshape the labels to {labels[0]}.")
    elif isinstance(loss, losses.CategoricalCrossentropy):
        if _same(received, expected):
            return
        wanted = f"{expected} (one-hot labels, one column per class)"
        advice = (f"These look like integer class labels: use loss='sparse_categorical_crossentropy', or one-hot "
                  f"encode them (np.eye({expected[-1]})[labels])." if looks_sparse
                  else f"Reshape the labels to {expected}.")
    elif isinstance(loss, (losses.MeanSquaredError, losses.MeanAbsoluteError, losses.Huber, losses.CosineSimilarity,
                           losses.KLDivergence, losses.BinaryCrossentropy)):
        y, out = _align_ranks(received, expected)
        exact = isinstance(loss, losses.BinaryCrossentropy)
        if len(y) == len(out) and all(_same_axis(a, b, broadcast=not exact) for a, b in zip(y, out)):
            return
        wanted = f"{expected} (a trailing axis of 1 may be added or dropped)"
        advice = (f"Targets of shape {received} look like integer class labels: for {expected[-1]} classes "
                  "use loss='sparse_categorical_crossentropy'; for regression give one target per output value."
                  if looks_sparse else f"Reshape the targets to {expected}, or give the output their shape.")
    else:
        return
    raise ValueError(
        f"Targets for output {output_name!r} of model {model_name!r} do not fit its loss {loss.name!r}: expected "
        f"shape {wanted} for an output of shape {output_shape}, but received targets of shape "
        f"{received}. {advice}"
    )


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


class CompiledMetrics:
    """The metrics of each output, and their names in the logs."""

    def __init__(self, model, metrics, compiled_loss):
        from engine import metrics as metrics_module

        self.entries = []  # (output index, log name, metric)
        if metrics is None:
            return
        flat = isinstance(metrics, (list, tuple)) and not any(isinstance(m, (list, tuple, dict)) for m in metrics)
        per_output = [list(metrics)] * len(model.output_names) if flat else _per_output(model, metrics, "metrics")
        multiple = len(model.output_names) > 1
        for index, specs in enumerate(per_output):
            for spec in ([specs] if isinstance(specs, str) else specs or []):
                metric = _resolve_metric(spec, compiled_loss.losses[index], model.outputs[index], metrics_module)
                name = spec if isinstance(spec, str) else metric.name
                log_name = f"{model.output_names[index]}_{name}" if multiple else name
                self.entries.append((index, log_name, metric))

    def update(self, targets, outputs, sample_weights):
        for index, _, metric in self.entries:
            if targets[index] is not None:
                metric.update_state(targets[index], outputs[index], sample_weight=sample_weights[index])

    def reset(self):
        for _, _, metric in self.entries:
            metric.reset_state()

    def results(self):
        return {name: float(metric.result()) for _, name, metric in self.entries}


def _resolve_metric(spec, loss, output, metrics_module):
    """Keras' reading of "accuracy": binary, categorical or sparse, from the loss and the output."""
    if isinstance(spec, str) and spec in ("accuracy", "acc"):
        from engine.losses import BinaryCrossentropy, SparseCategoricalCrossentropy

        if isinstance(loss, SparseCategoricalCrossentropy):
            return metrics_module.SparseCategoricalAccuracy(name=spec)
        if isinstance(loss, BinaryCrossentropy) or output.shape[-1] == 1:
            return metrics_module.BinaryAccuracy(name=spec)
        return metrics_module.CategoricalAccuracy(name=spec)
    return metrics_module.get(spec)


def _per_output(model, value, argument):
    """Spreads a compile argument over the outputs: a dict by output name, a list
    in output order, or one value for every output."""
    names = model.output_names
    if isinstance(value, dict):
        unknown = [k for k in value if k not in names]
        if unknown:
            raise ValueError(
                f"compile() received {argument} for outputs {unknown}, but model {model.name!r} has no "
                f"such output. Its outputs are {names}."
            )
        return [value.get(n) for n in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise ValueError(
                f"compile() received {len(value)} {argument} for a model with {len(names)} outputs {names}; "
                "pass one per output (a list in output order, or a dict by output name)."
            )
        return list(value)
    return [value] * len(names)


def compile_config(optimizer, loss, metrics, loss_weights):
    """The compile arguments as JSON-friendly data, for model files."""
    from engine import losses, metrics as metrics_module, optimizers

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
        "loss_weights": loss_weights,
    }
