"""Training data: mapping x, y and sample weights onto a model's inputs and
outputs, checking them, and cutting them into batches."""

import numpy as np


class TrainingData:
    """Arrays aligned with the model's inputs (``x``) and outputs (``y``), and
    per-output sample weights (``None`` where there are none)."""

    def __init__(self, x, y, sample_weights):
        self.x, self.y, self.sample_weights = x, y, sample_weights
        self.size = len(x[0])

    def take(self, indices):
        pick = (lambda a: None if a is None else a[indices])
        return TrainingData([a[indices] for a in self.x],
                            None if self.y is None else [pick(a) for a in self.y],
                            [pick(w) for w in self.sample_weights])

    def split(self, fraction):
        """(first part, last ``fraction``), as Keras' validation_split (taken before shuffling)."""
        if not 0.0 <= fraction < 1.0:
            raise ValueError(f"validation_split must be in [0, 1), received {fraction}.")
        cut = int(self.size * (1.0 - fraction))
        if cut in (0, self.size):
            raise ValueError(
                f"validation_split={fraction} of {self.size} samples leaves an empty training or "
                "validation set; use more data or another split."
            )
        return self.take(np.arange(cut)), self.take(np.arange(cut, self.size))

    def batches(self, batch_size, shuffle=False, rng=None):
        order = rng.permutation(self.size) if shuffle else np.arange(self.size)
        for start in range(0, self.size, batch_size):
            yield self.take(order[start:start + batch_size])


def prepare(model, x, y=None, sample_weight=None, class_weight=None):
    """Checks and aligns user data (floats cast to the inputs' dtypes, as a call
    does); returns TrainingData."""
    xs = [a if a.dtype == t.dtype else a.astype(t.dtype) for a, t in zip(model._standardize_inputs(x), model.inputs)]
    ys = None if y is None else _standardize_targets(model, y)
    sizes = {"x": [len(a) for a in xs]}
    if ys is not None:
        sizes["y"] = [len(a) for a in ys if a is not None]
    weights = _standardize_sample_weights(model, sample_weight, ys)
    if sample_weight is not None:
        sizes["sample_weight"] = [len(w) for w in weights if w is not None]
    flat = {n for values in sizes.values() for n in values}
    if len(flat) != 1:
        detail = "; ".join(f"'{k}' sizes: {v}" for k, v in sizes.items())
        raise ValueError(
            f"Data cardinality is ambiguous: {detail}. Make sure all arrays contain the same number of samples."
        )
    if class_weight is not None:
        weights = _apply_class_weight(model, class_weight, ys, weights)
    return TrainingData(xs, ys, weights)


def _standardize_targets(model, y):
    names = model.output_names
    if isinstance(y, dict):
        unknown = [k for k in y if k not in names]
        if unknown:
            raise ValueError(f"Model {model.name!r} has outputs {names}; received targets for unknown outputs {unknown}.")
        return [None if n not in y else np.asarray(y[n]) for n in names]
    ys = list(y) if isinstance(y, (list, tuple)) else [y]
    if len(ys) != len(names):
        raise ValueError(
            f"Model {model.name!r} has {len(names)} output(s) {names} but received {len(ys)} target array(s)."
        )
    return [np.asarray(a) for a in ys]


def _standardize_sample_weights(model, sample_weight, ys):
    count = len(model.output_names)
    if sample_weight is None:
        return [None] * count
    if isinstance(sample_weight, dict):
        return [None if n not in sample_weight else np.asarray(sample_weight[n], "float32") for n in model.output_names]
    if isinstance(sample_weight, (list, tuple)) and count > 1:
        return [np.asarray(w, "float32") for w in sample_weight]
    return [np.asarray(sample_weight, "float32")] * count


def _apply_class_weight(model, class_weight, ys, weights):
    if len(ys) != 1:
        raise ValueError("class_weight is only supported for models with a single output; use sample_weight instead.")
    y = ys[0]
    labels = y.argmax(axis=-1) if y.ndim > 1 and y.shape[-1] > 1 else y.reshape(len(y), -1)[:, 0]
    labels = labels.astype(int)
    missing = sorted(set(np.unique(labels).tolist()) - set(class_weight))
    if missing:
        raise ValueError(f"class_weight has no weight for classes {missing} found in the data; give every class a weight.")
    per_sample = np.array([class_weight[c] for c in labels], dtype="float32")
    if weights[0] is not None:
        per_sample = per_sample * weights[0]
    return [per_sample]
