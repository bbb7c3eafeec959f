"""summary and summary_text: the Keras table of a model's layers.

Columns "Layer (type)", "Output Shape", "Param #" and, unless the model is a
plain chain of layers, "Connected to" (and "Trainable" on request), framed and
sized as Keras 3 does. Unlike Keras, every call of a shared layer gets its own
row, named ``shared[0]``, ``shared[1]``, with its own shapes; its parameters
are counted on its first row and marked "(shared)" on the others. With
``expand_nested`` the rows of a nested model's layers follow its row and name
the layers by their qualified names (``level1/level2/d2``, as
``model.get_layer`` takes them; the path shows the nesting that Keras indents),
and their connections by the tensors' qualified names (``level1/x1[0][0]``).
Cells wrap at spaces, and inside a long path after a ``/``.
"""

import itertools
import math
import re
import textwrap
from collections import Counter

from engine import InputLayer, Sequential
from graph._format import readable_size, shapes_text, tensor_ref
from graph._repeats import runs_by_container
from graph._walk import plan_of, walk

_ALIGN = {"Param #": ">", "Trainable": "^"}  # the other columns are left-aligned


def summary_text(model, line_length=None, positions=None, expand_nested=False, show_trainable=False,
                 collapse_repeats=False) -> str:
    """Returns the summary table of ``model`` as a string.

    Args:
        model: a model; one without a graph of calls (a Sequential model with
            no input shape yet) lists its layers with "?" shapes and
            "0 (unbuilt)" parameters.
        line_length: total width of the table (default 88 for a chain of
            layers, 108 otherwise, 12 more with ``show_trainable``).
        positions: where each column ends, as fractions of ``line_length``
            (all at most 1) or as absolute character positions; one per column.
        expand_nested: list the layers of nested models under them, indented.
        show_trainable: add a "Trainable" column (Y, N, or - for no weights).
        collapse_repeats: list each run of identical blocks (``graph._repeats``,
            as ``plot_model(collapse_repeats=True)`` draws them) by its first
            block, then one row for the others: ``⋮ ×12 in all``, their names,
            the run's output shape and their parameters.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> text = summary_text(Model(x, Dense(2, name="d")(x), name="tiny"))
        >>> print(text.splitlines()[-3])
         Total params: 8 (32.00 B)
    """
    header, rows, totals = summary_table(model, expand_nested, show_trainable, collapse_repeats)
    align = [_ALIGN.get(title, "<") for title in header]
    widths = _column_widths(model, header, "Connected to" in header, line_length, positions, show_trainable)
    lines = [f'Model: "{model.name}"', _rule("┏━┳┓", widths), *_cells(header, widths, align, "┃"),
             _rule("┡━╇┩", widths)]
    for index, row in enumerate(rows):
        if index:
            lines.append(_rule("├─┼┤", widths))
        lines.extend(_cells(row, widths, align, "│"))
    lines.append(_rule("└─┴┘", widths))
    lines += [f" {total}" for total in totals]
    return "\n".join(lines)


def summary_table(model, expand_nested=False, show_trainable=False, collapse_repeats=False) -> tuple[list, list, list]:
    """The summary of ``model`` as cells, for the text table and its HTML form alike.

    Args:
        model: a model, as for ``summary_text``.
        expand_nested: add the rows of nested models' layers, indented.
        show_trainable: add the "Trainable" column.
        collapse_repeats: one row for all blocks of a run but its first.

    Returns:
        ``(header, rows, totals)``: the column titles, one list of cell texts
        per row, and the lines of parameter totals (three, and a fourth for
        the optimizer's variables once a compiled model's optimizer is built).

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> header, rows, totals = summary_table(Model(x, Dense(2, name="d")(x)))
        >>> header, rows[1], totals[0]
        (['Layer (type)', 'Output Shape', 'Param #'], ['d (Dense)', '(None, 2)', '8'], 'Total params: 8 (32.00 B)')
    """
    plan = plan_of(model)
    connected = plan is not None and not _is_chain(plan)
    header = ["Layer (type)", "Output Shape", "Param #"] + ["Connected to"] * connected
    if show_trainable:
        header.append("Trainable")
    rows = _unbuilt_rows(model) if plan is None else _call_rows(model, walk(model, expand_nested), connected,
                                                                  collapse_repeats)
    if not show_trainable:
        rows = [row[:-1] for row in rows]
    optimizer = getattr(model, "optimizer", None)
    # As Keras: a compiled model's built optimizer adds its variables to the total, and a line of their own.
    state = optimizer.variables if getattr(model, "_compile_config", None) is not None and optimizer is not None \
        and optimizer.built else []
    totals = [_total("Total params", model.weights + state), _total("Trainable params", model.trainable_weights),
              _total("Non-trainable params", model.non_trainable_weights)]
    return header, rows, totals + [_total("Optimizer params", state)] * bool(state)


def summary(model, line_length=None, positions=None, print_fn=None, expand_nested=False,
            show_trainable=False, collapse_repeats=False) -> None:
    """Prints the summary table of ``model``, one line per ``print_fn`` call (``Model.summary`` calls it).

    Args:
        model: a model, as for ``summary_text``.
        line_length: total width of the table (default 88 for a chain of
            layers, 108 otherwise, 12 more with ``show_trainable``).
        positions: where each column ends, as fractions of ``line_length``
            or as absolute character positions; one per column.
        print_fn: called with each line (default ``print``).
        expand_nested: list the layers of nested models under them, indented.
        show_trainable: add a "Trainable" column (Y, N, or - for no weights).
        collapse_repeats: list each run of identical blocks by its first block
            and one row for the others (see ``summary_text``).

    Example:
        >>> from engine import Sequential
        >>> from layers import Dense
        >>> lines = []
        >>> summary(Sequential([Dense(2, name="d")], name="s"), print_fn=lines.append)
        >>> lines[0], [cell.strip() for cell in lines[4].split("│")[1:4]]
        ('Model: "s"', ['d (Dense)', '?', '0 (unbuilt)'])
    """
    text = summary_text(model, line_length=line_length, positions=positions, expand_nested=expand_nested,
                        show_trainable=show_trainable, collapse_repeats=collapse_repeats)
    for line in text.split("\n"):
        (print_fn or print)(line)


def _is_chain(plan):
    """Whether each layer call reads exactly the one output of the call before (Keras' "sequential-like")."""
    previous = plan.input_slots
    for step in plan.steps:
        if step.in_slots != previous or len(step.out_slots) != 1:
            return False
        previous = step.out_slots
    return len(previous) == 1 and plan.output_slots == previous


def _call_rows(model, graph, connected, collapse_repeats=False):
    """One row per call: name (type), output shape, params, connections if ``connected``,
    trainable. As in Keras, a Sequential model does not list its InputLayer. With
    ``collapse_repeats``, the later blocks of each run are one row, after the first block."""
    calls_per_layer = Counter(id(call.layer) for call in graph.calls)
    later, run_rows = _later_blocks(graph, connected) if collapse_repeats else (set(), {})
    counted = set()
    rows = []
    for call in graph.calls:
        layer = call.layer
        if id(call) in later:
            counted.add(id(layer))
            continue
        if isinstance(model, Sequential) and isinstance(layer, InputLayer) and not call.depth:
            continue
        name = f"{call.layer_key}[{call.node_index}]" if calls_per_layer[id(layer)] > 1 else call.layer_key
        params = "(shared)" if id(layer) in counted else f"{layer.count_params():,}"
        counted.add(id(layer))
        prefix = _prefix(call)
        connections = [", ".join(prefix + tensor_ref(t) for t in call.reads) or "-"] * connected
        rows.append([f"{name} ({type(layer).__name__})", shapes_text(call.outputs), params,
                     *connections, _trainable_mark(layer)])
        rows.extend(run_rows.get(id(call), ()))
    return rows


def _later_blocks(graph, connected):
    """The ids of the calls in every run's blocks but the first, and the row standing
    for them, by the id of the first block's last call (after which it comes)."""
    later, run_rows = set(), {}
    for runs in runs_by_container(graph, "node").values():
        for run in runs:
            calls = [call for block in run.blocks[1:] for call in block]
            later.update(id(call) for call in calls)
            layers = {id(call.layer): call.layer for call in calls}
            first, last = run.blocks[1][0], run.blocks[-1][-1]
            text = f"⋮ ×{len(run.blocks)} in all: {first.layer_key} … {last.layer_key}"
            run_rows[id(run.blocks[0][-1])] = [[
                text, shapes_text(last.outputs), f"{sum(layer.count_params() for layer in layers.values()):,}",
                *["like the first block"] * connected, ""]]
    return later, run_rows


def _prefix(call):
    """``level1/level2/``: the qualified name of the nested model a call is in, as a prefix
    of the tensors it reads (made in the same model)."""
    return "" if call.container is None else call.container.layer_key + "/"


def _unbuilt_rows(model):
    return [[f"{layer.name} ({type(layer).__name__})", "?",
             f"{layer.count_params():,}" if layer.built else "0 (unbuilt)", _trainable_mark(layer)]
            for layer in model.layers]


def _trainable_mark(layer):
    if not layer.weights:
        return "-"
    return "Y" if layer.trainable else "N"


def _column_widths(model, header, connected, line_length, positions, show_trainable):
    if line_length is None:
        line_length = (108 if connected else 88) + (12 if show_trainable else 0)
    if positions is None:
        positions = [0.3, 0.56, 0.74, 1.0] if connected else [0.45, 0.80, 1.0]
        if show_trainable:  # the other columns shrink to leave 13 characters, enough for "Trainable"
            positions = [p * (line_length - 13) / line_length for p in positions] + [1.0]
    if len(positions) != len(header):
        raise ValueError(
            f"The summary of model {model.name!r} has {len(header)} columns {header}, so positions needs "
            f"{len(header)} column end positions; received {len(positions)}: {list(positions)}."
        )
    if positions[-1] <= 1:
        positions = [int(p * line_length) for p in positions]
    ends = [0] + [int(p) for p in positions]
    widths = [end - start for start, end in itertools.pairwise(ends)]
    widths[-1] -= 1  # the closing border is the last character of the line
    if min(widths) < 4:
        raise ValueError(
            f"The summary of model {model.name!r} needs every column at least 4 characters wide, but "
            f"positions {list(positions)} with line_length={line_length} give widths {widths}. "
            "Pass a larger line_length or positions further apart."
        )
    return widths


def _rule(chars, widths):
    """A border line from its four characters: left end, fill, crossing, right end."""
    left, fill, cross, right = chars
    return left + cross.join(fill * (w - 1) for w in widths) + right


class _PathWrapper(textwrap.TextWrapper):
    """Wraps at spaces and after each ``/`` of a qualified name (not at hyphens)."""

    wordsep_simple_re = re.compile(r"(\s+|(?<=/)(?=\S))")

    def __init__(self, width):
        super().__init__(width, break_on_hyphens=False)


def _cells(row, widths, align, bar):
    """The lines of one table row, each cell wrapped to its column."""
    wrapped = [_PathWrapper(w - 3).wrap(cell) or [""] for cell, w in zip(row, widths)]
    height = max(len(lines) for lines in wrapped)
    return [
        bar + bar.join(f" {format(lines[i] if i < len(lines) else '', f'{a}{w - 3}')} "
                       for lines, w, a in zip(wrapped, widths, align)) + bar
        for i in range(height)
    ]


def _total(title, weights):
    count = sum(math.prod(v.shape) for v in weights)
    size = sum(v.value.nbytes for v in weights)
    return f"{title}: {count:,} ({readable_size(size)})"
