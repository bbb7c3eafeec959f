"""plot_model, model_to_dot and static_svg: a model's graph drawn as a picture.

The model is read by ``graph._walk.walk``, the boxes a big graph needs are
chosen here (``layer_range``, ``max_depth``) and ``graph._scene`` decides what
the picture shows. graphviz's ``dot`` draws it where it is installed
(``graph._dot`` writes the DOT, ``graph._render`` runs ``dot``); elsewhere the
built-in layout does (``graph._layout``, ``graph._svg``).
"""

import difflib
import os
import re
import shutil

import graphviz

from graph._dot import scene_to_dot
from graph._layout import layout_scene
from graph._node_data import node_values
from graph._render import BUILT_IN_FORMATS, pipe, write, write_built_in
from graph._scene import build_scene
from graph._svg import scene_to_svg
from graph._walk import walk

RANKDIRS = ("TB", "LR", "BT", "RL")
_SOURCE_EXTENSIONS = ("dot", "gv")
_NAMES_LISTED = 20  # the layer names an unmatched layer_range lists


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
                 expand_nested=False, dpi=None, show_layer_activations=False, show_trainable=False,
                 show_params=False, per_call=False, layer_range=None, max_depth=None,
                 collapse_repeats=False, node_data=None) -> graphviz.Digraph:
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
        node_data: colour each box by a number, on one light-to-dark scale,
            with a legend: ``"params"``, ``"flops"``, ``"activation_bytes"``
            or ``"weight_bytes"`` (from ``graph.profile`` at batch 1), or a
            mapping from layer keys (``"dense"``, ``"outer/inner/dense"``) or
            call keys (``"dense[1]"``) to numbers. Boxes without a number stay
            white. None (the default) colours nothing.

    Returns:
        A ``graphviz.Digraph``; ``.source`` is the DOT text.

    Raises:
        ValueError: for an unknown ``rankdir``, a ``layer_range`` that is not
            two strings or matches no layer, a ``max_depth`` that is not a
            positive integer or comes without ``expand_nested``, or a
            ``node_data`` that is no known name or names no layer or call.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> y = Dense(2, name="d2")(Dense(4, name="d1")(x))
        >>> dot = model_to_dot(Model(x, y), show_shapes=True, layer_range=("d1", "d2"))
        >>> "d1 -> d2" in dot.source, "x -> d1" in dot.source
        (True, False)
    """
    scene = _scene(model, show_shapes=show_shapes, show_dtype=show_dtype, show_layer_names=show_layer_names,
                   rankdir=rankdir, expand_nested=expand_nested, show_layer_activations=show_layer_activations,
                   show_trainable=show_trainable, show_params=show_params, per_call=per_call,
                   layer_range=layer_range, max_depth=max_depth, collapse_repeats=collapse_repeats,
                   node_data=node_data)
    return scene_to_dot(scene, model.name, rankdir, dpi)


def static_svg(model, **options) -> str:
    """The picture of ``model`` as SVG text: drawn by graphviz's ``dot`` where it is
    installed, else by the built-in layout (``graph._layout``), which needs nothing
    beyond ``pip``.

    Args:
        model: a functional model.
        **options: ``model_to_dot``'s options but ``dpi`` (an SVG is drawn at
            72 dpi, whole): ``show_shapes``, ``rankdir``, ``expand_nested``,
            ``collapse_repeats``, ``node_data``...

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> svg = static_svg(Model(x, Dense(2, name="d")(x)), show_shapes=True)
        >>> svg.lstrip().startswith(("<?xml", "<svg", "<!DOCTYPE")), "(None, 2)" in svg
        (True, True)
    """
    return scene_svg(_scene(model, **options), model.name, options.get("rankdir", "TB"))


def scene_svg(scene, name, rankdir="TB") -> str:
    """A ``graph._scene.Scene`` drawn as SVG text by ``dot`` where it is installed,
    else by the built-in layout: ``static_svg`` after the scene is built.

    Example:
        >>> from engine import Input
        >>> from layers import Dense
        >>> from graph._scene import build_scene
        >>> from graph._walk import ancestry
        >>> scene = build_scene(ancestry(Dense(2, name="d")(Input(shape=(3,), name="x"))), per_call=True)
        >>> "d[0]" in scene_svg(scene, "y")
        True
    """
    if dot_installed():
        return pipe(scene_to_dot(scene, name, rankdir), "svg").decode("utf-8")
    return scene_to_svg(scene, rankdir)


def static_layout(model, **options):
    """What the built-in layout draws for ``model`` and where: ``(Scene, Layout)``
    (``graph._scene``, ``graph._layout``), with ``static_svg``'s options.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> scene, layout = static_layout(Model(x, Dense(2, name="d")(x)))
        >>> sorted(layout.boxes), layout.boxes["x"].y < layout.boxes["d"].y
        (['d', 'x'], True)
    """
    scene = _scene(model, **options)
    return scene, layout_scene(scene, options.get("rankdir", "TB"))


def dot_installed() -> bool:
    """Whether graphviz's ``dot`` program is on PATH.

    Example:
        >>> isinstance(dot_installed(), bool)
        True
    """
    return shutil.which("dot") is not None


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, show_layer_names=True,
               rankdir="TB", expand_nested=False, dpi=96, show_layer_activations=False,
               show_trainable=False, show_params=False, per_call=False, layer_range=None, max_depth=None,
               collapse_repeats=False, node_data=None) -> graphviz.Digraph:
    """Draws ``model`` to ``to_file`` and returns the ``graphviz.Digraph``.

    The format follows the extension: ``.png``, ``.svg``, ``.pdf`` or any
    other graphviz format. graphviz's ``dot`` program draws them where it is
    installed (its own warnings are captured, never printed); without it,
    PNG, SVG and PDF are drawn by the built-in layout (``graph._layout``:
    the same boxes, labels, clusters and edges), and other formats cannot
    be. ``.dot`` (or ``.gv``) writes the DOT source. A name without an
    extension is written as PNG.

    A bitmap (PNG, JPEG...) wider or taller than 32,767 pixels (the most
    graphviz can draw) is written as SVG instead, next to ``to_file`` with the
    extension ``.svg``, with a UserWarning saying so; ``collapse_repeats``,
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
        node_data: colour each box by a number, with a legend: ``"params"``,
            ``"flops"``, ``"activation_bytes"``, ``"weight_bytes"`` or a mapping
            from layer or call keys to numbers (see ``model_to_dot``).

    Returns:
        The ``graphviz.Digraph`` of the drawing (at 72 dpi, whatever ``dpi``),
        also when the built-in layout drew it.

    Raises:
        ValueError: for an extension that is not a graphviz format, or bad
            arguments (see ``model_to_dot``).
        RuntimeError: for a format other than PNG, SVG, PDF and DOT when the
            graphviz ``dot`` program is not installed.

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
    scene = _scene(model, show_shapes=show_shapes, show_dtype=show_dtype, show_layer_names=show_layer_names,
                   rankdir=rankdir, expand_nested=expand_nested, show_layer_activations=show_layer_activations,
                   show_trainable=show_trainable, show_params=show_params, per_call=per_call,
                   layer_range=layer_range, max_depth=max_depth, collapse_repeats=collapse_repeats,
                   node_data=node_data)
    dot = scene_to_dot(scene, model.name, rankdir)
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
    if dot_installed():
        write(dot, to_file, extension, dpi, model.name)
        return dot
    if extension not in BUILT_IN_FORMATS:
        raise RuntimeError(
            f"plot_model cannot render model {model.name!r} to {to_file!r}: the graphviz `dot` "
            f"program was not found on PATH, and without it plot_model draws only "
            f"{', '.join('.' + name for name in BUILT_IN_FORMATS)}. Install graphviz (`apt-get install graphviz` "
            "on Debian/Ubuntu, `brew install graphviz` on macOS, `conda install graphviz` in a conda "
            "environment), or write one of those, or the DOT source with to_file='model.dot'."
        )
    write_built_in(scene, layout_scene(scene, rankdir), to_file, extension, dpi, model.name)
    return dot


def _scene(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB", expand_nested=False,
           show_layer_activations=False, show_trainable=False, show_params=False, per_call=False, layer_range=None,
           max_depth=None, collapse_repeats=False, node_data=None):
    """Checks the options of ``model_to_dot`` (but ``dpi``) and decides what the picture of ``model`` shows."""
    check_drawing_options("model_to_dot", rankdir, expand_nested, max_depth)
    graph = walk(model, expand_nested, max_depth)
    shown = None if layer_range is None else _layers_in_range(model, graph, layer_range)
    level = "node" if per_call else "layer"
    values = None if node_data is None else node_values(model, graph, node_data, level)
    return build_scene(graph, per_call=per_call, shown=shown, collapse_repeats=collapse_repeats, node_values=values,
                       show_shapes=show_shapes, show_dtype=show_dtype, show_layer_names=show_layer_names,
                       show_activations=show_layer_activations, show_trainable=show_trainable,
                       show_params=show_params)


def check_drawing_options(caller, rankdir, expand_nested, max_depth) -> None:
    """Refuses a ``rankdir`` or ``max_depth`` that ``caller`` (``model_to_dot``,
    ``to_mermaid``) cannot draw, with a ValueError saying what to pass."""
    if rankdir not in RANKDIRS:
        raise ValueError(f"{caller} expects rankdir in {RANKDIRS}, received {rankdir!r}.")
    if max_depth is not None and (not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < 1):
        raise ValueError(f"max_depth must be a positive integer (how many levels of nested models to expand) "
                         f"or None, but received {max_depth!r}.")
    if max_depth is not None and not expand_nested:
        raise ValueError(f"max_depth={max_depth} limits how deep expand_nested expands nested models, but "
                         "expand_nested is False. Pass expand_nested=True as well, or leave max_depth out.")


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
