"""plot_model and model_to_dot: a model's graph drawn with graphviz.

The model is read by ``graph._walk.walk``, the boxes a big graph needs are
chosen here (``layer_range``, ``max_depth``), ``graph._dot`` draws them and
``graph._render`` runs graphviz.
"""

import difflib
import os
import re

import graphviz

from graph._dot import graph_to_dot
from graph._render import write
from graph._walk import walk

_RANKDIRS = ("TB", "LR", "BT", "RL")
_SOURCE_EXTENSIONS = ("dot", "gv")
_NAMES_LISTED = 20  # the layer names an unmatched layer_range lists


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
                 expand_nested=False, dpi=None, show_layer_activations=False, show_trainable=False,
                 show_params=False, per_call=False, layer_range=None, max_depth=None,
                 collapse_repeats=False) -> graphviz.Digraph:
    """Returns the graph of ``model`` as a ``graphviz.Digraph``, without rendering it.

    One box per layer (or per call, with ``per_call``) and one edge per tensor
    read. Each fact appears once: a box shows the shape of its outputs (the
    shapes it reads are on the boxes its edges come from), a shared layer's
    parameters are on its first box only.

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a Sequential
            model whose input shape is known).
        show_shapes: show the shape of each box's outputs.
        show_dtype: show the dtype of each box's outputs.
        show_layer_names: show layer names (else only class names).
        rankdir: graphviz direction: "TB" (top to bottom), "LR", "BT" or "RL".
        expand_nested: draw nested functional models as clusters of their
            layers, titled with the nested model's name.
        dpi: the graph's ``dpi`` attribute, for bitmap renders; None (the
            default) leaves graphviz's 72, the only one at which graphviz 2.43
            draws an SVG uncropped, so the returned graph displays whole in
            a notebook (``plot_model`` applies its ``dpi`` to bitmaps only).
        show_layer_activations: show the activation of layers that have one.
        show_trainable: mark each layer that has weights "trainable" or
            "non-trainable" (layers without weights have nothing to train).
        show_params: show each layer's parameter count; the later boxes of a
            shared layer say "shared with" its first box instead.
        per_call: one box per call (Node) instead of one per layer; a layer
            called more than once is named by call, ``dense[0]``, ``dense[1]``.
        layer_range: ``(first, last)``: draw only the top-level layers from the
            first whose name matches ``first`` to the last whose name matches
            ``last`` (both included; names or regular expressions, matched with
            ``re.match``; the two are swapped if ``last`` comes first), in
            execution order with the InputLayers. An edge from a layer left
            out starts at a muted "from <name>". None draws all layers.
        max_depth: with ``expand_nested``, how many levels of nested models to
            expand (1: the models the model calls; the models they call stay
            boxes); None expands all.
        collapse_repeats: draw each run of identical blocks once, in a dashed
            cluster titled with the count (``×12``) and the first and last
            names. Blocks are identical when they are consecutive in execution
            order, chained (each reads only the previous block's last output,
            and only that output is read outside a block) and alike call by
            call: layer class, config apart from the name, shapes and wiring
            (see ``graph._repeats``).

    Returns:
        A ``graphviz.Digraph``; ``.source`` is the DOT text.

    Raises:
        ValueError: for an unknown ``rankdir``, a ``layer_range`` that is not
            two strings or matches no layer, or a ``max_depth`` that is not a
            positive integer or comes without ``expand_nested``.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> y = Dense(2, name="d2")(Dense(4, name="d1")(x))
        >>> dot = model_to_dot(Model(x, y), show_shapes=True, layer_range=("d1", "d2"))
        >>> "d1 -> d2" in dot.source, "x -> d1" in dot.source
        (True, False)
    """
    if rankdir not in _RANKDIRS:
        raise ValueError(f"model_to_dot expects rankdir in {_RANKDIRS}, received {rankdir!r}.")
    if max_depth is not None and (not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < 1):
        raise ValueError(f"max_depth must be a positive integer (how many levels of nested models to expand) "
                         f"or None, but received {max_depth!r}.")
    if max_depth is not None and not expand_nested:
        raise ValueError(f"max_depth={max_depth} limits how deep expand_nested expands nested models, but "
                         "expand_nested is False. Pass expand_nested=True as well, or leave max_depth out.")
    graph = walk(model, expand_nested, max_depth)
    shown = None if layer_range is None else _layers_in_range(model, graph, layer_range)
    return graph_to_dot(graph, model.name, rankdir=rankdir, dpi=dpi, per_call=per_call, shown=shown,
                        collapse_repeats=collapse_repeats, show_shapes=show_shapes, show_dtype=show_dtype,
                        show_layer_names=show_layer_names, show_activations=show_layer_activations,
                        show_trainable=show_trainable, show_params=show_params)


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, show_layer_names=True,
               rankdir="TB", expand_nested=False, dpi=96, show_layer_activations=False,
               show_trainable=False, show_params=False, per_call=False, layer_range=None, max_depth=None,
               collapse_repeats=False) -> graphviz.Digraph:
    """Draws ``model`` to ``to_file`` and returns the ``graphviz.Digraph``.

    The format follows the extension: ``.png``, ``.svg``, ``.pdf`` (or any
    other graphviz format) need the graphviz ``dot`` program; ``.dot`` (or
    ``.gv``) writes the DOT source and does not. A name without an extension
    is written as PNG. graphviz's own warnings are captured, never printed.

    A bitmap (PNG, JPEG...) wider or taller than the 32,767 pixels graphviz
    can draw is written as SVG instead, next to ``to_file`` with the extension
    ``.svg``, with a UserWarning saying so; ``collapse_repeats``,
    ``layer_range`` or ``max_depth`` draw fewer boxes.

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a Sequential
            model whose input shape is known).
        to_file: the file to write; its extension picks the format.
        show_shapes: show the shape of each box's outputs.
        show_dtype: show the dtype of each box's outputs.
        show_layer_names: show layer names (else only class names).
        rankdir: graphviz direction: "TB" (top to bottom), "LR", "BT" or "RL".
        expand_nested: draw nested functional models as clusters of their layers.
        dpi: the resolution of bitmap formats (PNG, JPEG...). Vector formats
            (SVG, PDF) are drawn at 72 dpi, so an SVG is never cropped, and so
            is the returned graph when a notebook displays it.
        show_layer_activations: show the activation of layers that have one.
        show_trainable: mark each layer that has weights "trainable" or "non-trainable".
        show_params: show each layer's parameter count (once for a shared layer).
        per_call: one box per call (Node) instead of one per layer.
        layer_range: ``(first, last)`` layer names or regular expressions: draw
            only the top-level layers from ``first`` to ``last``, as for
            ``model_to_dot``.
        max_depth: with ``expand_nested``, how many levels of nested models to expand.
        collapse_repeats: draw each run of identical blocks once, with its count (``×12``).

    Returns:
        The ``graphviz.Digraph`` drawn (at 72 dpi, whatever ``dpi``).

    Raises:
        ValueError: for an extension that is not a graphviz format, or bad
            arguments (see ``model_to_dot``).
        RuntimeError: when drawing needs the graphviz ``dot`` program and it is
            not installed.

    Example:
        >>> import os, tempfile
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> path = os.path.join(tempfile.mkdtemp(), "model.dot")
        >>> _ = plot_model(Model(x, Dense(2)(x)), to_file=path, show_shapes=True)
        >>> os.path.getsize(path) > 0
        True
    """
    dot = model_to_dot(model, show_shapes=show_shapes, show_dtype=show_dtype,
                       show_layer_names=show_layer_names, rankdir=rankdir, expand_nested=expand_nested,
                       show_layer_activations=show_layer_activations, show_trainable=show_trainable,
                       show_params=show_params, per_call=per_call, layer_range=layer_range,
                       max_depth=max_depth, collapse_repeats=collapse_repeats)
    to_file = os.fspath(to_file)
    extension = os.path.splitext(to_file)[1][1:].lower() or "png"
    if extension in _SOURCE_EXTENSIONS:
        with open(to_file, "w", encoding="utf-8") as file:
            file.write(dot.source)
        return dot
    if extension not in graphviz.FORMATS:
        raise ValueError(
            f"plot_model cannot write {to_file!r}: {extension!r} is not a graphviz output format. "
            "Use .png, .svg, .pdf, or .dot for the DOT source."
        )
    try:
        write(dot, to_file, extension, dpi, model.name)
    except graphviz.ExecutableNotFound as error:
        raise RuntimeError(
            f"plot_model cannot render model {model.name!r} to {to_file!r}: the graphviz `dot` "
            "program was not found on PATH. Install graphviz (`apt-get install graphviz` on "
            "Debian/Ubuntu, `brew install graphviz` on macOS, `conda install graphviz` in a conda "
            "environment), or write the DOT source instead with to_file='model.dot', which needs "
            "no `dot` (model_to_dot returns the graph without rendering)."
        ) from error
    return dot


def _layers_in_range(model, graph, layer_range):
    """The ids of the top-level layers from the first matching ``layer_range[0]``
    to the last matching ``layer_range[1]``, with Keras' rules for ``layer_range``."""
    if not isinstance(layer_range, (list, tuple)) or len(layer_range) != 2:
        length = f" of length {len(layer_range)}" if isinstance(layer_range, (list, tuple)) else ""
        raise ValueError(f"layer_range must be a list or tuple of two layer names (the first and last layer "
                         f"to draw), but received {layer_range!r}{length}. For example layer_range=('conv1', "
                         "'pool').")
    if not all(isinstance(pattern, str) for pattern in layer_range):
        raise ValueError(f"layer_range must hold two strings, layer names or regular expressions, but received "
                         f"{layer_range!r}. For example layer_range=('conv1', 'pool').")
    layers = list({id(call.layer): call.layer for call in graph.calls if call.container is None}.values())
    names = [layer.name for layer in layers]
    matches = []
    for pattern in layer_range:
        try:
            matches.append([i for i, name in enumerate(names) if re.match(pattern, name)])
        except re.error as error:
            raise ValueError(f"layer_range {layer_range!r}: {pattern!r} is not a valid regular expression "
                             f"({error}). Escape it with re.escape to match a name as it is.") from None
        if not matches[-1]:
            close = difflib.get_close_matches(pattern, names, n=3)
            hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
            listed = ", ".join(names[:_NAMES_LISTED]) + (f", ... ({len(names)} in all)"
                                                         if len(names) > _NAMES_LISTED else "")
            raise ValueError(f"layer_range {layer_range!r} matches no layer of model {model.name!r}: no layer name "
                             f"starts with a match of {pattern!r} (re.match).{hint} Its layers, in execution "
                             f"order: {listed}.")
    first, last = min(matches[0]), max(matches[1])
    if first > last:
        first, last = min(matches[1]), max(matches[0])
    return {id(layer) for layer in layers[first:last + 1]}
