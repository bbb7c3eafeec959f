"""to_mermaid: a model's graph as a Mermaid flowchart, the diagrams GitHub renders in Markdown.

``graph._scene`` decides what is drawn, as for ``plot_model``: one box per
layer (or per call), one edge per tensor read, the same label facts, a titled
cluster per expanded nested model and per run of identical blocks drawn once
(``×N``). This module writes it as Mermaid: clusters become ``subgraph ... end``.

Mermaid ids are the keys of ``graph._walk`` with every character outside
``[A-Za-z0-9_]`` (or run of them) replaced by ``_``, after a prefix, ``n_`` for boxes and ``g_``
for subgraphs (so that no id is a Mermaid keyword such as ``end``):
``dense[1]`` is ``n_dense_1``, ``outer/inner/dense`` is ``n_outer_inner_dense``.
Two keys that would share an id are told apart by a suffix (``_2``), boxes in
execution order first. Labels are quoted, and ``" # % & < >`` (and ``:``
but before a space) in the text they show are written as Mermaid's entity
codes (``#quot;``, ``#35;``...), so any layer name is shown as it is.
"""

import re
import warnings

from graph._scene import build_scene
from graph._walk import walk
from graph.plot import check_drawing_options

# Mermaid's default maxTextSize: past it, Mermaid (and GitHub) shows "Maximum text size in diagram exceeded".
MAX_TEXT_SIZE = 50_000
# What a quoted label cannot hold as it is; and ":" before anything but a space, since Mermaid cuts the
# last ";" of a line that holds "style", then ":", then an entity code (a layer named "style:<x>").
_ENTITIES = {'"': "#quot;", "#": "#35;", "%": "#37;", "&": "#38;", ":": "#58;", "<": "#60;", ">": "#62;"}
_ESCAPED = re.compile(r'["#%&<>]|:(?! )')
_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")
_INDENT = "    "


def to_mermaid(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
               expand_nested=False, show_layer_activations=False, show_trainable=False, show_params=False,
               per_call=False, max_depth=None, collapse_repeats=False) -> str:
    """Returns the graph of ``model`` as the text of a Mermaid flowchart.

    In Markdown, between a ```` ```mermaid ```` line and a ```` ``` ```` line,
    GitHub (or any Mermaid renderer) draws it. The boxes, edges and labels are
    ``plot_model``'s, with the same options.

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a Sequential
            model whose input shape is known).
        show_shapes: show the shape of each box's outputs.
        show_dtype: show the dtype of each box's outputs.
        show_layer_names: show layer names (else only class names).
        rankdir: the flowchart's direction: "TB" (top to bottom), "LR", "BT" or "RL".
        expand_nested: draw nested functional models as subgraphs of their
            layers, titled with the nested model's name.
        show_layer_activations: show the activation of layers that have one.
        show_trainable: mark each layer that has weights "trainable" or "non-trainable".
        show_params: show each layer's parameter count; the later boxes of a
            shared layer say "shared with" its first box instead.
        per_call: one box per call (Node) instead of one per layer; a layer
            called more than once is named by call, ``dense[0]``, ``dense[1]``.
        max_depth: with ``expand_nested``, how many levels of nested models to
            expand (1: the models the model calls); None expands all.
        collapse_repeats: draw each run of identical blocks once, in a
            subgraph titled with the count (``×12``) and the first and last
            names, as ``plot_model`` does.

    Returns:
        The flowchart's text, ``flowchart TB`` then one line per box, subgraph
        and edge. Mermaid draws at most ``MAX_TEXT_SIZE`` (50,000) characters
        unless configured otherwise; a longer text comes with a UserWarning.

    Raises:
        ValueError: for an unknown ``rankdir``, or a ``max_depth`` that is not
            a positive integer or comes without ``expand_nested``.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> print(to_mermaid(Model(x, Dense(2, name="d")(x)), show_shapes=True), end="")
        flowchart TB
            n_x["<b>x</b> (InputLayer)<br>output: (None, 3)"]
            n_d["<b>d</b> (Dense)<br>output: (None, 2)"]
            n_x --> n_d
    """
    check_drawing_options("to_mermaid", rankdir, expand_nested, max_depth)
    scene = build_scene(walk(model, expand_nested, max_depth), per_call=per_call, collapse_repeats=collapse_repeats,
                        show_shapes=show_shapes, show_dtype=show_dtype, show_layer_names=show_layer_names,
                        show_activations=show_layer_activations, show_trainable=show_trainable,
                        show_params=show_params)
    ids = _Ids()
    boxes = {}  # cluster key (None: the top) -> the lines of its boxes
    for box in scene.boxes.values():
        boxes.setdefault(box.cluster, []).append(f'{ids.of(box.key, "n_")}["{_label(box.label)}"]')
    lines = [f"flowchart {rankdir}", *_nest(boxes, scene.clusters, ids)]
    lines.extend(f'{_INDENT}{ids.of(edge.source, "n_")} --> {ids.of(edge.target, "n_")}' for edge in scene.edges)
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_TEXT_SIZE:
        warnings.warn(f"The Mermaid flowchart of model {model.name!r} is {len(text):,} characters long, and Mermaid "
                      f"draws at most {MAX_TEXT_SIZE:,} unless configured otherwise (GitHub shows 'Maximum text "
                      "size in diagram exceeded'). Draw fewer boxes with collapse_repeats=True, or with "
                      "expand_nested and max_depth; or open the whole graph in Model Explorer "
                      "(graph.save_model_explorer).", stacklevel=2)
    return text


def _nest(boxes, clusters, ids):
    """The lines of the boxes and of the clusters as subgraphs, each subgraph's inside
    indented between ``subgraph`` and ``end`` (iterative: any depth of nesting works)."""
    children = {}
    for key, cluster in clusters.items():
        children.setdefault(cluster.parent, []).append(key)
    lines, stack = [], [(False, None, 1)]  # (whether to close, cluster key, depth)
    while stack:
        close, key, depth = stack.pop()
        if close:
            lines.append(_INDENT * depth + "end")
            continue
        if key is not None:
            lines.append(f'{_INDENT * depth}subgraph {ids.of(key, "g_")}["{_label(clusters[key].title)}"]')
            stack.append((True, key, depth))
            depth += 1
        lines.extend(_INDENT * depth + box for box in boxes.get(key, ()))
        stack.extend((False, child, depth) for child in reversed(children.get(key, ())))
    return lines


class _Ids:
    """One Mermaid id per key: the key's safe characters after a prefix, unique."""

    def __init__(self):
        self.ids, self.taken = {}, set()

    def of(self, key, prefix):
        if key not in self.ids:
            base = prefix + _UNSAFE.sub("_", key).strip("_")
            candidate, count = base, 1
            while candidate in self.taken:
                count += 1
                candidate = f"{base}_{count}"
            self.taken.add(candidate)
            self.ids[key] = candidate
        return self.ids[key]


def _label(label):
    """A scene label as the text of a quoted Mermaid label: bold runs in ``<b>``, lines joined by ``<br>``."""
    return "<br>".join("".join(f"<b>{_text(text)}</b>" if bold else _text(text) for text, bold in line)
                       for line in label)


def _text(text):
    """``text`` safe inside a quoted Mermaid label, shown as it is."""
    return _ESCAPED.sub(lambda match: _ENTITIES[match.group()], text)
