"""The drawing behind ``model_to_dot``: a ``graph._walk.ModelGraph`` as a ``graphviz.Digraph``.

One box per layer (or per call), one edge per tensor read, clusters for
expanded nested models and for collapsed runs of identical blocks. Each fact is
shown once: a box shows its outputs' shape (its inputs' shapes are on the boxes
its edges come from), a shared layer's parameters are on its first box only,
and a call index (``dense[1]``) only on a layer called more than once.

A cluster's title is a box of its own beside the cluster's first box rather
than graphviz's cluster label, which the edges entering the cluster cross.
Ids in the DOT source are the keys of ``graph._walk`` (``dense``,
``outer/inner/dense``, ``dense[1]``; ``%`` and ``:`` escaped). The ids of
titles and of the stand-ins for boxes left out by a layer range hold a bare
``%/``, which no escaped key does (they cannot start with ``%``: graphviz
renames such ids in what it draws).
"""

import html

import graphviz

from graph._format import merged, shapes_text
from graph._repeats import find_runs

_FONT = "Helvetica"
_MUTED = "gray40"


def graph_to_dot(graph, name, rankdir="TB", dpi=None, per_call=False, shown=None, collapse_repeats=False,
                 **facts) -> graphviz.Digraph:
    """Draws the calls and links of a ``graph._walk.ModelGraph`` (a model's, from
    ``walk``, or a tensor's, from ``ancestry``): ``model_to_dot`` after the walk.

    Args:
        graph: the ModelGraph.
        name: the name of the ``graphviz.Digraph``.
        rankdir, dpi, per_call, collapse_repeats: as for ``model_to_dot``.
        shown: the ids of the top-level layers to draw (with what expanded
            nested models among them contain); None draws all. An edge from a
            call left out starts at a muted stand-in naming it.
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
    graph_attr = {"rankdir": rankdir, "fontname": _FONT}
    if dpi is not None:
        graph_attr["dpi"] = str(dpi)
    dot = graphviz.Digraph(name=name, graph_attr=graph_attr,
                           node_attr={"shape": "box", "style": "rounded", "fontname": _FONT},
                           edge_attr={"fontname": _FONT, "fontsize": "10"})
    names = _Names(graph, per_call)
    vertices = {key: calls for key, calls in graph.vertices(level).items() if _is_shown(calls[0], shown)}
    clusters = _model_clusters(graph, level, shown, names)  # key -> (parent key or None, depth, Digraph)
    placed = {key: _parent(calls[0], level) for key, calls in vertices.items()}  # key -> its cluster's key
    stand_in = {}  # the key of a box left out -> the key of the box drawn for it
    if collapse_repeats:
        stand_in = _collapse(graph, vertices, level, names, facts.get("show_params", False), clusters, placed)
    firsts = {}  # cluster key -> the key of its first box, which its title sits beside
    counted = {}  # id(layer) -> (key, name) of the box that shows its parameters
    for key, calls in vertices.items():
        if key in stand_in:
            continue
        cluster = placed[key]
        firsts.setdefault(cluster, key)
        first_key, first_name = counted.setdefault(id(calls[0].layer), (key, names.of(calls[0])))
        shared_with = None if first_key == key else first_name
        (dot if cluster is None else clusters[cluster][2]).node(
            _dot_id(key), label=_label(calls, names.of(calls[0]), shared_with, **facts))
    for cluster_key, (_, _, cluster) in clusters.items():
        if cluster_key in firsts:
            with cluster.subgraph() as row:
                row.attr(rank="same")
                row.node(_title_id(cluster_key))
                row.node(_dot_id(firsts[cluster_key]))
    # Attach the deepest clusters first, so that each is complete when copied into its parent.
    for parent, _, cluster in sorted(clusters.values(), key=lambda item: -item[1]):
        (dot if parent is None else clusters[parent][2]).subgraph(cluster)
    _draw_edges(dot, graph, level, vertices, stand_in, names, facts.get("show_shapes", False))
    return dot


def _model_clusters(graph, level, shown, names):
    """A titled cluster per expanded nested model drawn: key -> (parent key, depth, Digraph)."""
    clusters = {}
    for call in graph.calls:
        if call.expanded and call.key(level) not in clusters and _is_shown(call, shown):
            title = f"<b>{html.escape(names.of(call))}</b> ({html.escape(type(call.layer).__name__)})"
            clusters[call.key(level)] = (_parent(call, level), call.depth, _cluster(call.key(level), title, "rounded"))
    return clusters


def _collapse(graph, vertices, level, names, show_params, clusters, placed):
    """Adds a dashed cluster per run of identical blocks to ``clusters`` and places its
    first block there; returns, for the boxes of the other blocks, the first block's box
    that stands for each."""
    sequences = {}  # the boxes of each cluster (and of the top level), in execution order
    for key, calls in vertices.items():
        sequences.setdefault(placed[key], []).append(calls[0])
    runs = [run for calls in sequences.values() for run in find_runs(calls, graph.links, level)]
    stand_in = {}
    for index, run in enumerate(runs):
        run_key = f"run%/{index}"
        first, last = run.blocks[0], run.blocks[-1]
        title = f"<b>×{len(run.blocks)}</b>  {html.escape(names.of(first[0]))} … {html.escape(names.of(last[-1]))}"
        if show_params:
            layers = {id(call.layer): call.layer for block in run.blocks for call in block}
            title += f"<br/>params: {sum(layer.count_params() for layer in layers.values()):,} in all"
        clusters[run_key] = (placed[first[0].key(level)], first[0].depth, _cluster(run_key, title, "dashed,rounded"))
        for call in first:
            placed[call.key(level)] = run_key
        for block in run.blocks[1:]:
            stand_in.update((call.key(level), model.key(level)) for call, model in zip(block, first))
    return stand_in


def _draw_edges(dot, graph, level, vertices, stand_in, names, show_shapes):
    """One edge per tensor read by a box drawn, from the box drawn for its source, or
    dashed from a muted stand-in naming a source that is not drawn."""
    outside = {}
    for source, target, link in graph.edges(level):
        if target not in vertices or target in stand_in:
            continue
        source = stand_in.get(source, source)
        if source in vertices:
            dot.edge(_dot_id(source), _dot_id(target))
            continue
        if source not in outside:
            outside[source] = f"from%/{_dot_id(source)}"
            dot.node(outside[source], label=_outside_label(link, names, show_shapes), shape="plaintext",
                     fontcolor=_MUTED)
        dot.edge(outside[source], _dot_id(target), style="dashed", color=_MUTED)


class _Names:
    """A call's name as drawn: ``dense[1]`` per call for a layer called more than
    once in the graph, else the layer's name."""

    def __init__(self, graph, per_call):
        self.per_call = per_call
        nodes = {}
        for call in graph.calls:
            nodes.setdefault(id(call.layer), set()).add(id(call.node))
        self.called_more_than_once = {layer for layer, called in nodes.items() if len(called) > 1}

    def of(self, call):
        if self.per_call and id(call.layer) in self.called_more_than_once:
            return call.call_name
        return call.layer.name


def _is_shown(call, shown):
    """Whether ``call`` is drawn: ``shown`` holds the ids of the top-level layers drawn, or is None for all."""
    while call.container is not None:
        call = call.container
    return shown is None or id(call.layer) in shown


def _parent(call, level):
    return None if call.container is None else call.container.key(level)


def _cluster(key, title, style):
    cluster = graphviz.Digraph(name=f"cluster_{_dot_id(key)}", graph_attr={"style": style, "color": _MUTED})
    cluster.node(_title_id(key), label=f"<{title}>", shape="plaintext")
    return cluster


def _label(calls, name, shared_with, show_shapes=False, show_dtype=False, show_layer_names=True,
           show_activations=False, show_trainable=False, show_params=False):
    """An HTML-like label: name and class in the first line, then the facts asked for; the
    parameters of a layer drawn before, as ``shared_with``, are not counted again."""
    layer = calls[0].layer
    class_name = html.escape(type(layer).__name__)
    lines = [f"<b>{html.escape(name)}</b> ({class_name})" if show_layer_names else f"<b>{class_name}</b>"]
    facts = []
    if show_shapes:
        facts.append("output: " + merged(shapes_text(c.outputs) for c in calls))
    if show_dtype:
        facts.append("dtype: " + merged(t.dtype for c in calls for t in c.outputs))
    activation = getattr(layer, "activation", None)
    if show_activations and activation is not None:
        facts.append(f"activation: {activation.__name__}")
    if show_trainable and layer.weights:
        facts.append("trainable" if layer.trainable else "non-trainable")
    if show_params:
        facts.append(f"params: {layer.count_params():,}" if shared_with is None else f"params: shared with {shared_with}")
    lines.extend(html.escape(fact, quote=False) for fact in facts)
    return "<" + "<br/>".join(lines) + ">"


def _outside_label(link, names, show_shapes):
    """The stand-in for a call left out of the drawing: ``from`` its name (and its output's shape)."""
    text = f"from {html.escape(names.of(link.source))}"
    if show_shapes:
        text += f"<br/>{html.escape(str(link.tensor.shape))}"
    return f"<{text}>"


def _title_id(key):
    return f"title%/{_dot_id(key)}"


def _dot_id(key):
    """``key`` safe as a DOT edge end, where ``:`` would start a port name."""
    return key.replace("%", "%25").replace(":", "%3A")
