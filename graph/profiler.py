"""profile: the FLOPs and bytes of one forward pass (at inference), call by call.

The formulas live next to each layer's forward pass (``Layer.flops``), all
under one convention:

- a multiply-add counts 2 FLOPs: matmuls, convolutions (every kernel tap),
  attention's scores and weighted sums, the recurrent kernels at every step;
- every other elementwise op counts 1 per element it produces: a bias add, a
  merge of two inputs, a scale or a shift, a comparison; an exp, a tanh or a
  square root counts as one op too;
- an activation counts 1 per element (linear none), a softmax 3 (the exp, its
  add into the sum, the divide; the max subtracted for stability is not
  counted). Dense and the convolutions count their multiply-adds and bias,
  not their fused ``activation=``;
- a reduction counts 1 per value reduced: a sum, a max, a mean (its divide
  folded in), hence pooling's one per window tap; per-group scalars (a
  variance's square root, a norm's reciprocal) are not counted;
- moving values computes nothing: reshapes, transposes, crops, pads,
  concatenations, repeats, lookups (Embedding) and masks' selections are 0;
  so is what only acts in training: dropout, noise, activity regularization;
- BatchNormalization folds its statistics into 2 per element (scale, shift);
  the other normalizations standardize (5 per element) then scale and shift.
  Rescaling and the preprocessing Normalization (fixed statistics) count 2
  per element, a scale and a shift;
- resizing interpolates rows, then columns: 2 per kernel tap of each output
  of a pass (a pass takes its busiest output's taps); nearest copies (0), and
  CenterCrop crops (0) unless the image is smaller than its box and is resized.

A layer without a formula (a user's layer, a Lambda's arbitrary function), or
a shape with an unknown size besides the batch axis, gives ``None``: shown as
unknown, never guessed, and the total then says it is a lower bound. Nested
functional models are profiled through their own layers.
"""

import html
import math

import numpy as np

from engine import InputLayer
from graph._format import readable_size
from graph._table import format_table
from graph._walk import walk

_COLUMNS = ("flops", "activation_bytes", "weight_bytes")
_HEADERS = ["node", "class", "FLOPs", "activation bytes", "weight bytes"]


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
            over the rows that know them: a lower bound when a row does not.
        uncounted: for ``flops`` and ``activation_bytes``, the ``node`` of
            each row left out of the total because its value is unknown.

    ``profile`` makes it; printing it shows a table, and a notebook shows it
    as an HTML table.

    Args:
        model_name: the name of the model profiled.
        batch_size: the batch size the costs are counted for.
        rows: the per-call rows described above.

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
        table = format_table(_HEADERS, self._cells(), right=(2, 3, 4))
        return "\n".join([self._title(), *table, *self._notes()])

    __repr__ = __str__

    def _repr_html_(self):
        """The table as HTML, for notebooks: the text's columns, total and notes."""
        def row(cells, tag="td"):
            return "<tr>" + "".join(f'<{tag} style="text-align:{"right" if i > 1 else "left"}">'
                                    f"{html.escape(cell)}</{tag}>" for i, cell in enumerate(cells)) + "</tr>"

        *body, total = self._cells()
        return (f"<table><caption>{html.escape(self._title())}</caption>"
                f"<thead>{row(_HEADERS, 'th')}</thead><tbody>{''.join(row(cells) for cells in body)}</tbody>"
                f"<tfoot>{row(total, 'th')}</tfoot></table>"
                + "".join(f"<p>{html.escape(note)}</p>" for note in self._notes()))

    def _title(self):
        return f'Profile of model "{self.model_name}", batch size {self.batch_size}'

    def _cells(self):
        """The table's cells as texts, a row per call then the totals, marked "≥ " when a lower bound."""
        cells = [[row["node"], row["class_name"], *(_number(row[c]) for c in _COLUMNS)] for row in self.rows]
        totals = [("≥ " if self.uncounted.get(c) else "") + _number(self.totals[c]) for c in _COLUMNS]
        return cells + [["total", "", *totals]]

    def _notes(self):
        """The sentences under the table: the sizes, and which calls each lower bound leaves out."""
        sizes = (f"Activations {readable_size(self.totals['activation_bytes'])}, "
                 f"weights {readable_size(self.totals['weight_bytes'])}.")
        notes = [sizes]
        for column, title in (("flops", "FLOPs"), ("activation_bytes", "activation bytes")):
            unknown = self.uncounted[column]
            if unknown:
                calls = "1 layer call" if len(unknown) == 1 else f"{len(unknown)} layer calls"
                notes.append(f"The total of {title} is a lower bound (≥ {_number(self.totals[column])}): {calls} "
                             f"unknown (no formula, or a shape with an unknown size): {', '.join(unknown)}.")
        return notes


def profile(model, batch_size=1) -> Profile:
    """Counts the FLOPs, activation bytes and weight bytes of one forward pass of ``model``.

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a built Sequential).
        batch_size: the size given to the batch axis (the leading ``None``).

    Returns:
        A Profile: ``.rows``, ``.totals``, a printable table as ``str()`` and an HTML
        table in notebooks.

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
