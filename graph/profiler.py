"""profile: the FLOPs and bytes of one forward pass, call by call.

A multiply-add counts as 2 FLOPs. The formulas live next to each layer's
forward pass (``Layer.flops``): Dense and the convolutions count their
multiply-adds and bias adds (not their activation), the operator layers one
FLOP per output element (``2·K`` per element for matmul), InputLayer and
GetItem none. A layer without a formula, or a shape with an unknown size
besides the batch axis, gives ``None``: unknown, not guessed. Nested functional
models are profiled through their own layers.
"""

import math

import numpy as np

from engine import InputLayer
from graph._format import readable_size
from graph._table import format_table
from graph._walk import walk


class Profile:
    """The cost of one forward pass of a model, per call of a leaf layer.

    Attributes:
        rows: one dict per call, in execution order, with ``node`` (the call's
            key, ``dense[0]`` or ``outer[0]/dense[0]``), ``layer`` (the
            qualified layer name), ``class_name``, ``flops``,
            ``activation_bytes`` (the call's outputs) and ``weight_bytes``
            (a layer's weights, counted at its first call, 0 at the others).
            ``flops`` and ``activation_bytes`` are None when unknown.
        totals: ``flops``, ``activation_bytes`` and ``weight_bytes`` summed
            over the rows that know them.
        uncounted: for ``flops`` and ``activation_bytes``, the ``node`` of
            each row left out of the total because its value is unknown.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> profile(Model(x, Dense(4, name="d")(x)), batch_size=2).totals["flops"]
        56
    """

    def __init__(self, model_name, batch_size, rows):
        self.model_name = model_name
        self.batch_size = batch_size
        self.rows = rows
        self.totals = {
            column: sum(row[column] for row in rows if row[column] is not None)
            for column in ("flops", "activation_bytes", "weight_bytes")
        }
        self.uncounted = {
            column: [row["node"] for row in rows if row[column] is None] for column in ("flops", "activation_bytes")
        }

    def __str__(self):
        columns = ("flops", "activation_bytes", "weight_bytes")
        table = [[row["node"], row["class_name"], *(_number(row[c]) for c in columns)] for row in self.rows]
        table.append(["total", "", *(_number(self.totals[c]) for c in columns)])
        lines = [f'Profile of model "{self.model_name}", batch size {self.batch_size}']
        lines += format_table(["node", "class", "FLOPs", "activation bytes", "weight bytes"], table,
                              right=(2, 3, 4))
        lines.append(f"Activations {readable_size(self.totals['activation_bytes'])}, "
                     f"weights {readable_size(self.totals['weight_bytes'])}.")
        for column, title in (("flops", "FLOPs"), ("activation_bytes", "activation bytes")):
            if self.uncounted[column]:
                lines.append(f"The total of {title} leaves out (no formula, or a shape with an unknown size): "
                             + ", ".join(self.uncounted[column]) + ".")
        return "\n".join(lines)


def profile(model, batch_size=1) -> Profile:
    """Counts the FLOPs, activation bytes and weight bytes of one forward pass of ``model``.

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a built Sequential).
        batch_size: the size given to the batch axis (the leading ``None``).

    Returns:
        A Profile: ``.rows``, ``.totals``, and a printable table as ``str()``.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> [row["flops"] for row in profile(Model(x, Dense(4, name="d")(x))).rows]
        [0, 28]
    """
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"profile expects batch_size to be a positive int, received {batch_size!r}.")
    rows, weighed = [], set()
    for call in walk(model, expand_nested=True).calls:
        layer = call.layer
        if call.expanded or (call.depth and isinstance(layer, InputLayer)):
            continue  # a nested model is counted through its layers, its inputs pass data through
        weights = 0 if id(layer) in weighed else sum(v.value.nbytes for v in layer.weights)
        weighed.add(id(layer))
        rows.append({
            "node": call.node_key,
            "layer": call.layer_key,
            "class_name": type(layer).__name__,
            "flops": _flops(layer, call, batch_size),
            "activation_bytes": _activation_bytes(call.outputs, batch_size),
            "weight_bytes": weights,
        })
    return Profile(model.name, batch_size, rows)


def _count(shape, batch_size):
    """Number of elements of ``shape`` with the batch axis set, or None if another size is unknown."""
    dims = _concrete(shape, batch_size)
    return None if dims is None else math.prod(dims)


def _concrete(shape, batch_size):
    dims = tuple(batch_size if axis == 0 and d is None else d for axis, d in enumerate(shape))
    return None if None in dims else dims


def _flops(layer, call, batch_size):
    if not call.reads:
        return 0  # a graph input computes nothing
    inputs = [_concrete(t.shape, batch_size) for t in call.reads]
    outputs = [_concrete(t.shape, batch_size) for t in call.outputs]
    if None in inputs or None in outputs:
        return None
    return layer.flops(inputs, outputs)


def _activation_bytes(tensors, batch_size):
    sizes = [_count(t.shape, batch_size) for t in tensors]
    if None in sizes:
        return None
    return sum(size * np.dtype(t.dtype).itemsize for size, t in zip(sizes, tensors))


def _number(value):
    return "?" if value is None else f"{value:,}"
