"""plot_model and model_to_dot: a model's graph drawn with graphviz.

One box per layer (or per call, with ``per_call``), one edge per tensor read,
and expanded nested models drawn as nested ``cluster_`` subgraphs. Box ids in
the DOT source are the keys of ``graph._walk`` (``dense``, ``outer/inner/dense``,
``dense[1]``).
"""

import html
import os

import graphviz

from graph._format import merged, shapes_text
from graph._walk import walk

_RANKDIRS = ("TB", "LR", "BT", "RL")
_SOURCE_EXTENSIONS = ("dot", "gv")
# Formats made of pixels, the only ones a dpi applies to. Vector formats are drawn at graphviz's 72 dpi:
# graphviz 2.43 writes an SVG drawn at any other dpi with a viewBox that crops it (the drawing is scaled by
# dpi/72, the viewBox is not), so a browser shows only its top-left part.
_BITMAP_FORMATS = frozenset({"png", "jpg", "jpeg", "jpe", "gif", "bmp", "tif", "tiff", "webp", "ico"})


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
                 expand_nested=False, dpi=None, show_layer_activations=False, show_trainable=False,
                 show_params=False, per_call=False) -> graphviz.Digraph:
    """Returns the graph of ``model`` as a ``graphviz.Digraph``, without rendering it.

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a built Sequential).
        show_shapes: show each box's input and output shapes, and each edge's tensor shape.
        show_dtype: show the dtype of each box's outputs.
        show_layer_names: show layer names (else only class names).
        rankdir: graphviz direction: "TB" (top to bottom), "LR", "BT" or "RL".
        expand_nested: draw nested functional models as clusters of their layers.
        dpi: the graph's ``dpi`` attribute, for bitmap renders; None (the
            default) leaves graphviz's 72, the only one at which graphviz 2.43
            draws an SVG uncropped, so the returned graph displays whole in
            a notebook (``plot_model`` applies its ``dpi`` to bitmaps only).
        show_layer_activations: show ``layer.activation.__name__`` for layers that have one.
        show_trainable: show whether each layer is trainable.
        show_params: show each layer's parameter count.
        per_call: one box per call (Node), named ``dense[0]``, ``dense[1]``,
            instead of one box per layer.

    Returns:
        A ``graphviz.Digraph``; ``.source`` is the DOT text.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> dot = model_to_dot(Model(x, Dense(2, name="d")(x)), show_shapes=True)
        >>> "x -> d" in dot.source
        True
    """
    if rankdir not in _RANKDIRS:
        raise ValueError(f"model_to_dot expects rankdir in {_RANKDIRS}, received {rankdir!r}.")
    return graph_to_dot(walk(model, expand_nested), model.name, rankdir=rankdir, dpi=dpi, per_call=per_call,
                        show_shapes=show_shapes, show_dtype=show_dtype, show_layer_names=show_layer_names,
                        show_activations=show_layer_activations, show_trainable=show_trainable,
                        show_params=show_params)


def graph_to_dot(graph, name, rankdir="TB", dpi=None, per_call=False, **facts) -> graphviz.Digraph:
    """Draws the calls and links of a ``graph._walk.ModelGraph`` (a model's, from
    ``walk``, or a tensor's, from ``ancestry``): ``model_to_dot`` after the walk.

    Args:
        graph: the ModelGraph.
        name: the name of the ``graphviz.Digraph``.
        rankdir, dpi, per_call: as for ``model_to_dot``.
        **facts: what each box shows besides its name: ``show_shapes``,
            ``show_dtype``, ``show_layer_names``, ``show_activations``,
            ``show_trainable``, ``show_params`` (left out: names only).

    Example:
        >>> from engine import Input
        >>> from layers import Dense
        >>> from graph._walk import ancestry
        >>> x = Input(shape=(3,), name="x")
        >>> dot = graph_to_dot(ancestry(Dense(2, name="d")(x)), "y", per_call=True)
        >>> '"x[0]" -> "d[0]"' in dot.source
        True
    """
    level = "node" if per_call else "layer"
    graph_attr = {"rankdir": rankdir, "fontname": "Helvetica"}
    if dpi is not None:
        graph_attr["dpi"] = str(dpi)
    dot = graphviz.Digraph(name=name, graph_attr=graph_attr,
                           node_attr={"shape": "box", "style": "rounded", "fontname": "Helvetica"},
                           edge_attr={"fontname": "Helvetica", "fontsize": "10"})
    clusters = {}  # key -> (parent key or None, depth, Digraph)
    for call in graph.calls:
        if call.expanded and call.key(level) not in clusters:
            parent = call.container.key(level) if call.container is not None else None
            cluster_name = call.call_name if per_call else call.layer.name
            clusters[call.key(level)] = (parent, call.depth, graphviz.Digraph(
                name=f"cluster_{_dot_id(call.key(level))}",
                graph_attr={"label": f"{cluster_name} ({type(call.layer).__name__})", "style": "rounded"}))
    for key, calls in graph.vertices(level).items():
        container = calls[0].container
        target = dot if container is None else clusters[container.key(level)][2]
        target.node(_dot_id(key), label=_label(calls, per_call=per_call, **facts))
    # Attach the deepest clusters first, so that each is complete when copied into its parent.
    for parent, _, cluster in sorted(clusters.values(), key=lambda item: -item[1]):
        (dot if parent is None else clusters[parent][2]).subgraph(cluster)
    show_shapes = facts.get("show_shapes", False)
    for source, target, link in graph.edges(level):
        dot.edge(_dot_id(source), _dot_id(target), label=str(link.tensor.shape) if show_shapes else None)
    return dot


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, show_layer_names=True,
               rankdir="TB", expand_nested=False, dpi=96, show_layer_activations=False,
               show_trainable=False, show_params=False, per_call=False) -> graphviz.Digraph:
    """Draws ``model`` to ``to_file`` and returns the ``graphviz.Digraph``.

    The format follows the extension: ``.png``, ``.svg``, ``.pdf`` (or any
    other graphviz format) need the graphviz ``dot`` program; ``.dot`` (or
    ``.gv``) writes the DOT source and does not. A name without an extension
    is written as PNG. ``dpi`` applies to bitmap formats (PNG, JPEG...);
    vector formats are drawn at 72 dpi, so an SVG is never cropped, and so is
    the returned graph when a notebook displays it. The other arguments are
    those of ``model_to_dot``.

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
                       show_layer_activations=show_layer_activations,
                       show_trainable=show_trainable, show_params=show_params, per_call=per_call)
    extension = os.path.splitext(to_file)[1][1:].lower() or "png"
    if extension in _SOURCE_EXTENSIONS:
        data = dot.source.encode("utf-8")
    elif extension not in graphviz.FORMATS:
        raise ValueError(
            f"plot_model cannot write {to_file!r}: {extension!r} is not a graphviz output format. "
            "Use .png, .svg, .pdf, or .dot for the DOT source."
        )
    else:
        drawn = dot
        if extension in _BITMAP_FORMATS:
            drawn = dot.copy()
            drawn.graph_attr["dpi"] = str(dpi)
        try:
            data = drawn.pipe(format=extension)
        except graphviz.ExecutableNotFound as error:
            raise RuntimeError(
                f"plot_model cannot render model {model.name!r} to {to_file!r}: the graphviz `dot` "
                "program was not found on PATH. Install graphviz (`apt-get install graphviz` on "
                "Debian/Ubuntu, `brew install graphviz` on macOS, `conda install graphviz` in a conda "
                "environment), or write the DOT source instead with to_file='model.dot', which needs "
                "no `dot` (model_to_dot returns the graph without rendering)."
            ) from error
    with open(to_file, "wb") as file:
        file.write(data)
    return dot


def _label(calls, per_call, show_shapes=False, show_dtype=False, show_layer_names=True,
           show_activations=False, show_trainable=False, show_params=False):
    """An HTML-like label: name and class in the first line, then the facts asked for."""
    layer = calls[0].layer
    class_name = html.escape(type(layer).__name__)
    name = html.escape(calls[0].call_name if per_call else layer.name)
    lines = [f"<b>{name}</b> ({class_name})" if show_layer_names else f"<b>{class_name}</b>"]
    facts = []
    if show_shapes:
        facts.append("in: " + merged(shapes_text(c.reads or c.outputs) for c in calls))
        facts.append("out: " + merged(shapes_text(c.outputs) for c in calls))
    if show_dtype:
        facts.append("dtype: " + merged(t.dtype for c in calls for t in c.outputs))
    activation = getattr(layer, "activation", None)
    if show_activations and activation is not None:
        facts.append(f"activation: {activation.__name__}")
    if show_trainable:
        facts.append(f"trainable: {layer.trainable}")
    if show_params:
        facts.append(f"params: {layer.count_params():,}")
    lines.extend(html.escape(fact, quote=False) for fact in facts)
    return "<" + "<br/>".join(lines) + ">"


def _dot_id(key):
    """``key`` safe as a DOT edge end, where ``:`` would start a port name."""
    return key.replace("%", "%25").replace(":", "%3A")
