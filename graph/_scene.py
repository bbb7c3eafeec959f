"""What a static picture of a ``graph._walk.ModelGraph`` shows, before anyone draws it.

A Scene holds boxes with their label lines, titled clusters (expanded nested
models, collapsed runs of identical blocks) and edges, decided once here and
drawn alike by ``graph._dot`` (graphviz) and by the built-in layout
(``graph._layout`` and ``graph._svg``).

One box per layer (or per call), one edge per tensor read. Each fact is shown
once: a box shows its outputs' shape (its inputs' shapes are on the boxes its
edges come from), a shared layer's parameters are on its first box only, and a
call index (``dense[1]``) only on a layer called more than once. An edge from a
call left out of the picture (by ``layer_range``) starts at a muted stand-in
box naming it. A box inside a nested model's frame shows its layer's own name;
text naming another box uses the qualified name (``shared with inner/dense``).

A label is a tuple of lines, a line a tuple of ``(text, bold)`` runs of plain,
unescaped text: each drawing escapes it for its own format.
"""

from dataclasses import dataclass, field

from graph._format import merged, shapes_text
from graph._node_data import fill_colour, legend_stops
from graph._repeats import runs_by_container

# The values a legend shows, from the lowest to the highest.
LEGEND_STOPS = 5


@dataclass(frozen=True)
class Box:
    """One box: a layer's or a call's (``key`` is its walk key), or with ``muted`` the
    stand-in for a call left out of the picture (``key`` is that call's key)."""

    key: str
    label: tuple
    cluster: str | None = None
    muted: bool = False
    fill: str | None = None


@dataclass
class Cluster:
    """A titled frame around boxes: an expanded nested model, or with ``dashed`` a run
    of identical blocks. ``first`` is the key of its first box, which its title sits beside."""

    key: str
    title: tuple
    parent: str | None
    dashed: bool
    first: str | None = None


@dataclass(frozen=True)
class Edge:
    """A tensor read: from the box ``source`` to the box ``target``; ``muted`` when it
    starts at a stand-in."""

    source: str
    target: str
    muted: bool = False


@dataclass(frozen=True)
class Legend:
    """What the fill colours mean: ``title`` and ``(value, colour)`` stops, lowest first."""

    title: str
    stops: list


@dataclass
class Scene:
    """Boxes (stand-ins last), clusters (parents before their children are drawn
    inside them) and edges, each in the order they are drawn."""

    boxes: dict = field(default_factory=dict)
    clusters: dict = field(default_factory=dict)
    edges: list = field(default_factory=list)
    legend: Legend | None = None


def build_scene(graph, per_call=False, shown=None, collapse_repeats=False, node_values=None, **facts) -> Scene:
    """Decides what a picture of ``graph`` shows.

    Args:
        graph: a ``graph._walk.ModelGraph`` (a model's, from ``walk``, or a
            tensor's, from ``ancestry``).
        per_call, collapse_repeats: as for ``model_to_dot``.
        shown: the ids of the top-level layers to draw (with what expanded
            nested models among them contain); None draws all.
        node_values: ``(legend title, {box key: number})`` from
            ``graph._node_data.node_values`` to colour boxes by, or None.
        **facts: what each box shows besides its name: ``show_shapes``,
            ``show_dtype``, ``show_layer_names``, ``show_activations``,
            ``show_trainable``, ``show_params`` (left out: names only).

    Returns:
        A Scene.

    Example:
        >>> from engine import Input
        >>> from layers import Dense
        >>> from graph._walk import ancestry
        >>> x = Input(shape=(3,), name="x")
        >>> scene = build_scene(ancestry(Dense(2, name="d")(x)), per_call=True)
        >>> [(edge.source, edge.target) for edge in scene.edges], scene.boxes["d[0]"].label
        ([('x[0]', 'd[0]')], ((('d', True), (' (Dense)', False)),))
    """
    level = "node" if per_call else "layer"
    names = _Names(graph, per_call)
    vertices = {key: calls for key, calls in graph.vertices(level).items() if _is_shown(calls[0], shown)}
    clusters = _model_clusters(graph, level, shown, names)
    placed = {key: _parent(calls[0], level) for key, calls in vertices.items()}  # key -> its cluster's key
    stand_in = {}  # the key of a box left out -> the key of the box drawn for it
    if collapse_repeats:
        stand_in = _collapse(graph, vertices, level, names, facts.get("show_params", False), clusters, placed)
    colours = {} if node_values is None else _colours(node_values[1])
    scene = Scene()
    counted = {}  # id(layer) -> (key, name) of the box that shows its parameters
    for key, calls in vertices.items():
        if key in stand_in:
            continue
        cluster = placed[key]
        if cluster is not None and clusters[cluster].first is None:
            clusters[cluster].first = key
        first_key, first_name = counted.setdefault(id(calls[0].layer), (key, names.qualified(calls[0])))
        shared_with = None if first_key == key else first_name
        scene.boxes[key] = Box(key, _label(calls, names.of(calls[0]), shared_with, **facts), cluster,
                               fill=colours.get(key))
    scene.clusters = clusters
    _add_edges(scene, graph, level, vertices, stand_in, names, facts.get("show_shapes", False))
    if colours:
        title, values = node_values
        scene.legend = Legend(title, legend_stops(min(values.values()), max(values.values()), LEGEND_STOPS))
    return scene


def _model_clusters(graph, level, shown, names):
    """A titled cluster per expanded nested model drawn, by key."""
    clusters = {}
    for call in graph.calls:
        if call.expanded and call.key(level) not in clusters and _is_shown(call, shown):
            title = ((names.of(call), True), (f" ({type(call.layer).__name__})", False)),
            clusters[call.key(level)] = Cluster(call.key(level), title, _parent(call, level), dashed=False)
    return clusters


def _collapse(graph, vertices, level, names, show_params, clusters, placed):
    """Adds a dashed cluster per run of identical blocks to ``clusters`` and places its
    first block there; returns, for the boxes of the other blocks, the first block's box
    that stands for each."""
    runs = [run for found in runs_by_container(graph, level, vertices).values() for run in found]
    stand_in = {}
    for index, run in enumerate(runs):
        run_key = f"run%/{index}"
        first, last = run.blocks[0], run.blocks[-1]
        title = (((f"×{len(run.blocks)}", True), (f"  {names.of(first[0])} … {names.of(last[-1])}", False)),)
        if show_params:
            layers = {id(call.layer): call.layer for block in run.blocks for call in block}
            title += (((f"params: {sum(layer.count_params() for layer in layers.values()):,} in all", False),),)
        clusters[run_key] = Cluster(run_key, title, placed[first[0].key(level)], dashed=True)
        for call in first:
            placed[call.key(level)] = run_key
        for block in run.blocks[1:]:
            stand_in.update((call.key(level), model.key(level)) for call, model in zip(block, first))
    return stand_in


def _add_edges(scene, graph, level, vertices, stand_in, names, show_shapes):
    """One edge per tensor read by a box drawn, from the box drawn for its source, or
    muted from a stand-in naming a source that is not drawn."""
    outside = {}
    for source, target, link in graph.edges(level):
        if target not in vertices or target in stand_in:
            continue
        source = stand_in.get(source, source)
        if source in vertices:
            scene.edges.append(Edge(source, target))
            continue
        if source not in outside:
            outside[source] = Box(source, _outside_label(link, names, show_shapes), muted=True)
        scene.edges.append(Edge(source, target, muted=True))
    scene.boxes.update(outside)


def _colours(values):
    """The fill colour of each box with a value, on one scale from the lowest to the highest."""
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    return {key: fill_colour(value, low, high) for key, value in values.items()}


class _Names:
    """A call's name as drawn: ``dense[1]`` per call for a layer called more than
    once in the graph, else the layer's name. Inside the frame of its nested model
    a box shows the layer's own name; text that names a box elsewhere (``shared
    with``, ``from``) uses its qualified name, ``inner/dense``."""

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

    def qualified(self, call):
        if self.per_call and id(call.layer) in self.called_more_than_once:
            return f"{call.layer_key}[{call.node_index}]"
        return call.layer_key


def _is_shown(call, shown):
    """Whether ``call`` is drawn: ``shown`` holds the ids of the top-level layers drawn, or is None for all."""
    while call.container is not None:
        call = call.container
    return shown is None or id(call.layer) in shown


def _parent(call, level):
    return None if call.container is None else call.container.key(level)


def _label(calls, name, shared_with, show_shapes=False, show_dtype=False, show_layer_names=True,
           show_activations=False, show_trainable=False, show_params=False):
    """Name and class in the first line, then the facts asked for; the parameters of a
    layer drawn before, as ``shared_with``, are not counted again."""
    layer = calls[0].layer
    class_name = type(layer).__name__
    lines = [((name, True), (f" ({class_name})", False)) if show_layer_names else ((class_name, True),)]
    if show_shapes:
        lines.append("output: " + merged(shapes_text(c.outputs) for c in calls))
    if show_dtype:
        lines.append("dtype: " + merged(t.dtype for c in calls for t in c.outputs))
    activation = getattr(layer, "activation", None)
    if show_activations and activation is not None:
        lines.append(f"activation: {activation.__name__}")
    if show_trainable and layer.weights:
        lines.append("trainable" if layer.trainable else "non-trainable")
    if show_params:
        lines.append(f"params: {layer.count_params():,}" if shared_with is None else f"params: shared with {shared_with}")
    return tuple(line if isinstance(line, tuple) else ((line, False),) for line in lines)


def _outside_label(link, names, show_shapes):
    """The stand-in for a call left out of the drawing: ``from`` its name (and its output's shape)."""
    lines = (((f"from {names.qualified(link.source)}", False),),)
    if show_shapes:
        lines += (((str(link.tensor.shape), False),),)
    return lines


def format_value(value) -> str:
    """A legend's number, short: ``950``, ``1.23k``, ``3.4M``, ``25G``.

    Example:
        >>> format_value(950), format_value(1234), format_value(3.4e6), format_value(0.25)
        ('950', '1.23k', '3.4M', '0.25')
    """
    for scale, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"
