"""Training data: mapping x, y and sample weights onto a model's inputs and
outputs, checking them, and cutting in-memory arrays into batches (data read
batch by batch from disk, a PyDataset or a generator: engine.data.data_sources)."""

import math
import numbers

import numpy as np

from engine import tree
from engine.dtypes import dtype_kind, dtype_name

# Dtype kinds Keras casts between silently: bool, signed and unsigned ints, floats.
_NUMBER_KINDS = "biuf"
_DTYPE_ADVICE = {
    "c": "Complex values are never cast silently: pass their real part (array.real) or their magnitude "
         "(np.abs(array)) explicitly.",
    "U": "Convert the strings to numbers first: np.asarray(array, dtype='float32') for numeric text, a "
         "vocabulary lookup to integer indices for words.",
    "O": "Convert it to a numeric array first, e.g. np.asarray(array, dtype='float32') (pad ragged data to "
         "one shape first).",
}


class Samples:
    """The batching interface of data with a known number of samples (``size``):
    in-memory arrays (TrainingData) and arrays read from disk
    (engine.data.data_sources.StreamedArrays). Subclasses add ``batches`` and ``split``."""

    size: int

    def steps(self, batch_size):
        """Number of batches: an empty data set is one empty batch (predict then returns empty outputs)."""
        return max(math.ceil(self.size / batch_size), 1)

    def require_samples(self, model, what):
        """Raises when there is nothing to train or evaluate on (Keras fails there with internal errors)."""
        if self.size == 0:
            raise ValueError(
                f"{what} of model {model.name!r} received 0 samples (the data is empty along axis 0). Pass at "
                "least one sample (predict() takes empty data and returns empty outputs)."
            )

    def _cut(self, fraction):
        """Where ``validation_split=fraction`` cuts: the last ``fraction`` of the samples validate, as in Keras
        (taken before shuffling)."""
        if not 0.0 <= fraction < 1.0:
            raise ValueError(f"validation_split must be in [0, 1), received {fraction}.")
        cut = int(self.size * (1.0 - fraction))
        if cut in (0, self.size):
            raise ValueError(
                f"validation_split={fraction} of {self.size} samples leaves an empty training or "
                "validation set; use more data or another split."
            )
        return cut


class TrainingData(Samples):
    """Arrays aligned with the model's inputs (``x``) and outputs (``y``), and
    per-output sample weights (``None`` where there are none)."""

    def __init__(self, x, y, sample_weights):
        self.x, self.y, self.sample_weights = x, y, sample_weights
        self.size = next(len(a) for a in x if a is not None)

    def take(self, indices):
        def pick(arrays):
            return [None if a is None else a[indices] for a in arrays]

        return TrainingData(pick(self.x), None if self.y is None else pick(self.y), pick(self.sample_weights))

    def split(self, fraction):
        """(first part, last ``fraction``), as Keras' validation_split (taken before shuffling)."""
        cut = self._cut(fraction)
        return self.take(np.arange(cut)), self.take(np.arange(cut, self.size))

    def batches(self, batch_size, shuffle=False, rng=None):
        order = rng.permutation(self.size) if shuffle else np.arange(self.size)
        for step in range(self.steps(batch_size)):
            yield self.take(order[step * batch_size:(step + 1) * batch_size])


def check_batch_size(batch_size, default=32):
    """``batch_size`` as a positive int (``default`` for None): TypeError for a
    non-integer, ValueError for zero or a negative size.

    Example:
        >>> check_batch_size(None)
        32
    """
    if batch_size is None:
        return default
    return _positive_int(batch_size, "batch_size", f"or None for the default {default}",
                         "the number of samples per gradient step, e.g. batch_size=32")


def check_steps(steps: int | None, name: str) -> int | None:
    """``steps`` (fit's ``steps_per_epoch`` or ``validation_steps``, named by
    ``name``) as a positive int, or None: TypeError for a non-integer,
    ValueError for zero or a negative count.

    Example:
        >>> check_steps(None, "steps_per_epoch") is None, check_steps(5, "steps_per_epoch")
        (True, 5)
    """
    if steps is None:
        return None
    return _positive_int(steps, name, "or None for one pass over the data per epoch",
                         f"the number of batches per epoch, e.g. {name}=100")


def _positive_int(value, name, none_means, advice):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be a positive integer ({none_means}); received {name}={value!r} of type "
            f"{type(value).__name__}."
        )
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer ({none_means}); received {name}={value!r}. Pass {advice}.")
    return int(value)


def unpack_batch(data, source: str) -> tuple:
    """``(x, y, sample_weight)`` from ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``
    (a tuple or a list); anything else is ``x`` alone, as in Keras'
    ``unpack_x_y_sample_weight``. ``source`` names where ``data`` came from.

    Example:
        >>> unpack_batch((np.ones(2), np.zeros(2)), "The generator")[2] is None
        True
    """
    if not isinstance(data, (tuple, list)):
        return data, None, None
    if not 1 <= len(data) <= 3:
        raise ValueError(
            "Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, found: a "
            f"{type(data).__name__} of {len(data)} items from {source}. Return (inputs, targets) or (inputs, "
            "targets, sample_weights), with several inputs (or outputs) as one list or dict inside it."
        )
    return (*data, None, None)[:3]


def cast_input(value, dtype, where):
    """``value`` (an array) cast to the ``dtype`` of a model input where Keras
    casts: between numbers (bool, int, float; float64 to float32 included).
    Other kinds of values (complex, strings, objects, ...) raise a ValueError
    that starts with ``where`` (which names the input and the model), unless
    the input has that very kind.

    Example:
        >>> cast_input(np.array([True, False]), "float32", "Input 0 of model 'm'")
        array([1., 0.], dtype=float32)
    """
    kind, expected = value.dtype.kind, dtype_kind(dtype)
    if kind in _NUMBER_KINDS and expected in _NUMBER_KINDS:
        return value if value.dtype == dtype else value.astype(dtype)
    if kind == expected:
        return value
    raise ValueError(
        f"{where} expects {dtype_name(dtype)} values (arrays of bool, int or float are cast to it), but "
        f"received an array of dtype {value.dtype}. {_dtype_advice(value.dtype)}"
    )


def _dtype_advice(dtype):
    kind = "U" if dtype.kind == "S" else dtype.kind
    return _DTYPE_ADVICE.get(kind, "Pass an array of bool, int or float values.")


def prepare(model, x, y=None, sample_weight=None, class_weight=None):
    """Checks and aligns user data (inputs standardized as a call does: matched to
    the model's inputs, cast to their dtypes); returns TrainingData."""
    model._build_on(x)
    xs = model._standardize_inputs(x)
    if all(a is None for a in xs):
        raise ValueError(
            f"Model {model.name!r} received None for every input, so there are no samples. Pass arrays for the "
            "inputs that are not optional."
        )
    ys = None if y is None else _standardize_targets(model, y)
    sizes = {"x": [len(a) for a in xs if a is not None]}
    if ys is not None:
        sizes["y"] = [len(a) for a in ys if a is not None]
    weights = _standardize_sample_weights(model, sample_weight, ys)
    if sample_weight is not None:
        sizes["sample_weight"] = [len(w) for w in weights if w is not None]
    check_cardinality(sizes)
    if class_weight is not None:
        weights = _apply_class_weight(model, class_weight, ys, weights)
    return TrainingData(xs, ys, weights)


def check_cardinality(sizes: dict[str, list[int]]) -> None:
    """Raises unless every array holds the same number of samples; ``sizes``
    maps "x", "y" and "sample_weight" to their arrays' lengths.

    Example:
        >>> check_cardinality({"x": [4, 4], "y": [4]})
    """
    if len({n for values in sizes.values() for n in values}) != 1:
        detail = "; ".join(f"'{k}' sizes: {v}" for k, v in sizes.items())
        raise ValueError(
            f"Data cardinality is ambiguous: {detail}. Make sure all arrays contain the same number of samples."
        )


def _standardize_targets(model, y):
    names = model.output_names
    graph = model._graph_model()  # a functional model, or a Sequential's Functional
    structure = None if graph is None else graph.output
    if isinstance(y, dict) and isinstance(structure, dict) and set(y) == set(structure) and any(
            isinstance(v, (list, tuple, dict)) for v in structure.values()):
        y = tree.flatten(y)  # nested outputs (a dict of tuples...): the targets in the same structure, flat
        names = [tensor.name for tensor in model.outputs]
    if isinstance(y, dict):
        unknown = [k for k in y if k not in names]
        if unknown:
            raise ValueError(f"Model {model.name!r} has outputs {names}; received targets for unknown outputs {unknown}.")
        ys = [None if n not in y else np.asarray(y[n]) for n in names]
    else:
        ys = [np.asarray(a) for a in (y if isinstance(y, (list, tuple)) else [y])]
        if len(ys) != len(names):
            raise ValueError(
                f"Model {model.name!r} has {len(names)} output(s) {names} but received {len(ys)} target array(s)."
            )
    for name, target in zip(names, ys):
        if target is not None and target.dtype.kind not in _NUMBER_KINDS:
            raise ValueError(
                f"Targets for output {name!r} of model {model.name!r} must be numbers (bool, int or float), but "
                f"received an array of dtype {target.dtype}. {_dtype_advice(target.dtype)}"
            )
    return ys


def _standardize_sample_weights(model, sample_weight, ys):
    count = len(model.output_names) if ys is None else len(ys)  # nested outputs have more targets than names
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
