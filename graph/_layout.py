"""The built-in layout of a ``graph._scene.Scene``, for pictures drawn without graphviz's ``dot``.

A layered (Sugiyama) layout, cluster by cluster from the innermost out: each
cluster's boxes are laid out as a graph of their own, and the cluster then takes
part in its parent's layout as one box of the size it came to, so a cluster's
frame encloses its boxes and nothing else. An edge that crosses a cluster's
frame passes through a port on it: the layout of the cluster's inside routes it
between the port and its box, the parent's between the port and the other end.

In each graph, layers follow the scene's order (the execution order): an edge
drawn against it (a cycle, as a shared layer makes at layer level) is laid out
upwards. igraph's ``layout_sugiyama`` (C) orders each layer to reduce crossings
and puts a dummy point on each layer a long edge passes; the points are then
spread along the layer to the boxes' widths, keeping igraph's order, pulled
towards the points they connect to. Edges are polylines through the dummies,
vertical inside a layer, so no edge crosses a box.

Everything is laid out top to bottom with the boxes' sizes turned for
``rankdir="LR"`` or ``"RL"``, then turned or mirrored into place. Sizes are in
points (1/72 inch); text is measured with Helvetica's widths, the font the
drawings ask for.
"""

import itertools
import math
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from graph._scene import format_value

FONT_SIZE = 14.0
LINE_HEIGHT = 17.0
PAD_X, PAD_Y = 8.0, 6.0  # between a box's text and its border
_MIN_WIDTH, _MIN_HEIGHT = 54.0, 36.0  # dot's smallest box
_NODE_SEP, _EDGE_SEP, _RANK_SEP = 18.0, 8.0, 36.0  # dot's nodesep and ranksep; between an edge and its neighbours
_CLUSTER_PAD = 8.0
_LOOP = 14.0  # how far a self-loop reaches beside its box
_PARALLEL_SEP = 5.0  # between the lines of edges with the same ends
MARGIN = 8.0
SWATCH = 24.0  # the width of a legend's colour swatch
_SWEEPS = 8  # passes of pulling points towards their neighbours
_WEIGHTS = (8.0, 2.0, 1.0)  # dot's: how straight a link between 2, 1 or 0 dummy points is kept
_UNLINKED = 1e-3  # the weight of an entry with no links: it stays where it is unless pushed

# Helvetica's advance widths (its AFM metrics, in 1/1000 of the font size) for ' ' to '~', regular and bold.
_HELVETICA = (
    (278, 278, 355, 556, 556, 889, 667, 222, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556,
     556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667,
     556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 222, 556,
     556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722,
     500, 500, 500, 334, 260, 334, 584),
    (278, 333, 474, 556, 556, 889, 722, 278, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556,
     556, 556, 556, 556, 333, 333, 584, 584, 584, 611, 975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722,
     611, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, 278, 556,
     611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611, 611, 611, 389, 556, 333, 611, 556, 778,
     556, 556, 500, 389, 280, 389, 584),
)
_OTHER_WIDTHS = {"×": 584, "…": 1000, "→": 1000}


class Rect(NamedTuple):
    """A rectangle by its top-left corner and size, in points."""

    x: float
    y: float
    width: float
    height: float


@dataclass
class Layout:
    """Where everything of a scene goes, in points from the picture's top-left corner.

    Attributes:
        width, height: the picture's size.
        boxes: each scene box's rectangle, by key.
        clusters, titles: each cluster's frame and its title's rectangle, by key.
        edges: one polyline per scene edge, in the scene's order, from the
            source's border to the target's.
        legend: the legend's rectangle, or None.
    """

    width: float
    height: float
    boxes: dict = field(default_factory=dict)
    clusters: dict = field(default_factory=dict)
    titles: dict = field(default_factory=dict)
    edges: list = field(default_factory=list)
    legend: Rect | None = None


def text_width(text, bold=False) -> float:
    """The width of ``text`` in Helvetica at FONT_SIZE, in points.

    Example:
        >>> text_width("Dense"), text_width("Dense", bold=True)
        (40.46, 42.014)
    """
    table = _HELVETICA[bold]
    units = 0
    for char in text:
        code = ord(char)
        if 32 <= code <= 126:
            units += table[code - 32]
        elif char in _OTHER_WIDTHS:
            units += _OTHER_WIDTHS[char]
        else:
            units += 1000 if unicodedata.east_asian_width(char) in "WF" else 600
    return round(units * FONT_SIZE / 1000, 3)


def line_width(line) -> float:
    """The width of a label line, a tuple of ``(text, bold)`` runs."""
    return sum(text_width(text, bold) for text, bold in line)


def label_size(label, framed=True) -> tuple[float, float]:
    """The size of a box around ``label`` (at least dot's 54 x 36), or of the bare text without ``framed``."""
    width = max((line_width(line) for line in label), default=0.0) + 2 * PAD_X
    height = len(label) * LINE_HEIGHT + 2 * PAD_Y
    return (max(width, _MIN_WIDTH), max(height, _MIN_HEIGHT)) if framed else (width, height)


def legend_size(legend) -> tuple[float, float]:
    """The size of a legend: its title over one row per stop (a swatch and the value)."""
    widest = max(text_width(legend.title, bold=True),
                 SWATCH + PAD_X + max(text_width(format_value(value)) for value, _ in legend.stops))
    return widest + 2 * PAD_X, (len(legend.stops) + 1) * LINE_HEIGHT + 2 * PAD_Y


def layout_scene(scene, rankdir="TB") -> Layout:
    """Lays ``scene`` out in the direction ``rankdir`` ("TB", "LR", "BT" or "RL").

    Example:
        >>> from graph._scene import Box, Edge, Scene
        >>> scene = Scene({"a": Box("a", ((("a", True),),)), "b": Box("b", ((("b", False),),))}, {},
        ...               [Edge("a", "b")])
        >>> layout = layout_scene(scene)
        >>> layout.boxes["a"].y < layout.boxes["b"].y, len(layout.edges[0]) >= 2
        (True, True)
    """
    across = rankdir in ("TB", "BT")  # whether boxes keep their width across the layers
    sizes = {key: label_size(box.label, framed=not box.muted) for key, box in scene.boxes.items()}
    titles = {key: label_size(cluster.title, framed=False) for key, cluster in scene.clusters.items()}
    if not across:
        sizes = {key: (h, w) for key, (w, h) in sizes.items()}
        titles = {key: (h, w) for key, (w, h) in titles.items()}
    units = _Units(scene, sizes, titles)
    for key in reversed(list(scene.clusters)):  # children come after their parents
        units[key].place(units)
    root = units[None]
    root.place(units)
    offsets = {None: (0.0, 0.0)}
    for key, cluster in scene.clusters.items():
        parent_x, parent_y = offsets[cluster.parent]
        rect = units[cluster.parent].rect_of(("cluster", key))
        offsets[key] = (parent_x + rect.x, parent_y + rect.y)
    flat = _Flat(root.width, root.height)
    for key, unit in units.items():
        dx, dy = offsets[key]
        for ident, rect in unit.rects():
            moved = Rect(rect.x + dx, rect.y + dy, rect.width, rect.height)
            kind = ident[0]
            if kind == "box":
                flat.boxes[ident[1]] = moved
            elif kind == "cluster":
                flat.clusters[ident[1]] = moved
            elif kind == "title":
                flat.titles[key] = moved
        for route_key, points in unit.routes.items():
            flat.routes[(key, route_key)] = [(x + dx, y + dy) for x, y in points]
    for box_key, rect in list(flat.boxes.items()):
        if box_key in units.loops:
            flat.boxes[box_key] = Rect(rect.x + _LOOP, rect.y, rect.width - 2 * _LOOP, rect.height)
    edges = _apart([_edge_polyline(flat, units, index, edge) for index, edge in enumerate(scene.edges)], scene.edges)
    layout = Layout(flat.width, flat.height, flat.boxes, flat.clusters, flat.titles, edges)
    if scene.legend is not None:
        width, height = legend_size(scene.legend)
        layout.legend = Rect(layout.width + _NODE_SEP, 0.0, width, height) if across else \
            Rect(0.0, layout.height + _NODE_SEP, height, width)
        layout.width = max(layout.width, layout.legend.x + layout.legend.width)
        layout.height = max(layout.height, layout.legend.y + layout.legend.height)
    return _turned(layout, rankdir)


@dataclass
class _Flat:
    width: float
    height: float
    boxes: dict = field(default_factory=dict)
    clusters: dict = field(default_factory=dict)
    titles: dict = field(default_factory=dict)
    routes: dict = field(default_factory=dict)


class _Units(dict):
    """The graph laid out inside each cluster (and at the top, key None), with the
    segments each scene edge is made of."""

    def __init__(self, scene, sizes, titles):
        super().__init__()
        self.scene = scene
        self.loops = {edge.source for edge in scene.edges if edge.source == edge.target}
        self[None] = _Unit(None, None)
        for key, cluster in scene.clusters.items():
            self[key] = _Unit(key, cluster.first)
            self[key].add(("title",), titles[key])
        order = {}
        muted = 0
        for index, (key, box) in enumerate(scene.boxes.items()):
            if box.muted:
                muted -= 1
            order[key] = muted if box.muted else index
            width, height = sizes[key]
            self[box.cluster].add(("box", key), (width + 2 * _LOOP if key in self.loops else width, height))
        self.order = {}  # the order of each item: its box's, or a cluster's first box's
        for key, box in scene.boxes.items():
            item, unit = ("box", key), box.cluster
            while True:
                self.order[(unit, item)] = min(self.order.get((unit, item), order[key]), order[key])
                if unit is None:
                    break
                item, unit = ("cluster", unit), scene.clusters[unit].parent
        for key, cluster in scene.clusters.items():
            self[cluster.parent].add(("cluster", key), None)
        self.segments = [self._segments(edge) for edge in scene.edges]

    def chain(self, box_key):
        """The clusters around a box, innermost first, then None."""
        chain = [self.scene.boxes[box_key].cluster]
        while chain[-1] is not None:
            chain.append(self.scene.clusters[chain[-1]].parent)
        return chain

    def _segments(self, edge):
        """The unit edges a scene edge is made of, from source to target: ``(unit, route key, reversed)``."""
        if edge.source == edge.target:
            return []
        source_chain, target_chain = self.chain(edge.source), self.chain(edge.target)
        common = next(unit for unit in source_chain if unit in target_chain)
        source_clusters = source_chain[:source_chain.index(common)]
        target_clusters = target_chain[:target_chain.index(common)]
        item_of = {}  # unit -> the item standing for the source (or target) there
        for unit, ident in _items_along(edge.source, source_clusters + [common]):
            item_of[("s", unit)] = ident
        for unit, ident in _items_along(edge.target, target_clusters + [common]):
            item_of[("t", unit)] = ident
        upper_source, lower_target = item_of[("s", common)], item_of[("t", common)]
        forward = self.order[(common, upper_source)] < self.order[(common, lower_target)]
        out_side, in_side = ("bottom", "top") if forward else ("top", "bottom")
        segments = []
        for unit in source_clusters:
            port = ("port", out_side, edge.source)
            inner = (item_of[("s", unit)], _port_of(item_of[("s", unit)], out_side, edge.source))
            segments.append(self[unit].connect(inner, (port, None), forward))
        source_end = (upper_source, _port_of(upper_source, out_side, edge.source))
        target_end = (lower_target, _port_of(lower_target, in_side, edge.source))
        segments.append(self[common].connect(source_end, target_end, forward))
        for unit in reversed(target_clusters):
            port = ("port", in_side, edge.source)
            inner = (item_of[("t", unit)], _port_of(item_of[("t", unit)], in_side, edge.source))
            segments.append(self[unit].connect((port, None), inner, forward))
        return segments


def _items_along(box_key, units):
    """``(unit, item)`` for a box in each of ``units`` (its own cluster outwards): the box, then its clusters."""
    item = ("box", box_key)
    for unit in units:
        yield unit, item
        item = ("cluster", unit)


def _port_of(item, side, source):
    """The port on a cluster item that an edge from ``source`` passes, or None for another item."""
    return (side, source) if item[0] == "cluster" else None


class _Unit:
    """One graph laid out: a cluster's inside, or the top level."""

    def __init__(self, key, first):
        self.key = key
        self.first = first  # the box its title sits beside
        self.items, self.index, self.sizes = [], {}, []
        self.edges, self.edge_index = [], {}  # (upper item, upper port, lower item, lower port)
        self.routes = {}
        self.ports = {}  # (side, source) -> x of the port on this cluster's frame, once placed
        self.width = self.height = 0.0

    def add(self, ident, size):
        if ident not in self.index:
            self.index[ident] = len(self.items)
            self.items.append(ident)
            self.sizes.append(size)
        return self.index[ident]

    def connect(self, start, end, forward):
        """Adds the unit edge from ``start`` to ``end`` (each ``(item, port or None)``); returns
        ``(unit key, route key, reversed)`` for the scene edge it is part of."""
        for item, _ in (start, end):
            if item[0] == "port":
                self.add(item, (0.0, 0.0))
        upper, lower = (start, end) if forward else (end, start)
        route_key = (upper[0], upper[1], lower[0], lower[1])
        if route_key not in self.edge_index:
            self.edge_index[route_key] = len(self.edges)
            self.edges.append(route_key)
        return self.key, route_key, not forward

    def rect_of(self, ident):
        return self._rects[self.index[ident]]

    def rects(self):
        return ((ident, rect) for ident, rect in zip(self.items, self._rects) if ident[0] != "port")

    def place(self, units):
        """Lays this graph out; its clusters' insides are laid out already."""
        for i, ident in enumerate(self.items):
            if ident[0] == "cluster":
                inner = units[ident[1]]
                self.sizes[i] = (inner.width, inner.height)
        layers = self._layers(units)
        rows = self._rows(layers)
        x = _spread(rows, self._neighbours(units), self.sizes)
        _straighten(rows, x, self._dummies, self.sizes)
        thickness = [max((self.sizes[entry][1] for entry in row if isinstance(entry, int)), default=0.0)
                     for row in rows]
        tops = []
        y = 0.0
        for size in thickness:
            tops.append(y)
            y += size + _RANK_SEP
        self._frame(x, rows, tops, thickness, layers, units)

    def _layers(self, units):
        """Each item's layer: the longest path from the top, sources as low as their first
        reader, top ports above everything and bottom ports below."""
        n = len(self.items)
        layer = [0] * n
        top_ports = any(ident[0] == "port" and ident[1] == "top" for ident in self.items)
        base = 1 if top_ports else 0
        predecessors = [[] for _ in range(n)]
        successors = [[] for _ in range(n)]
        for upper, _, lower, _ in self.edges:
            u, v = self.index[upper], self.index[lower]
            if self.items[u][0] != "port" and self.items[v][0] != "port":
                predecessors[v].append(u)
                successors[u].append(v)
        inner = [i for i, ident in enumerate(self.items) if ident[0] in ("box", "cluster")]
        inner.sort(key=lambda i: units.order.get((self.key, self.items[i]), math.inf))
        for i in inner:
            layer[i] = max([base] + [layer[p] + 1 for p in predecessors[i]])
        for i in inner:
            if not predecessors[i] and successors[i]:
                layer[i] = max(base, min(layer[s] for s in successors[i]) - 1)
        bottom = max((layer[i] for i in inner), default=base) + 1
        for i, ident in enumerate(self.items):
            if ident[0] == "port":
                layer[i] = 0 if ident[1] == "top" else bottom
            elif ident[0] == "title":
                layer[i] = layer[self.index[("box", self.first)]] if ("box", self.first) in self.index else base
        return layer

    def _rows(self, layers):
        """The entries of each layer in igraph's order: item indices and dummy points
        ``(edge index, layer)``, one on each layer a long edge passes (made here, so
        that each is known by its edge); a cluster's title first in its layer."""
        entries = list(range(len(self.items)))
        vertex = {i: i for i in entries}
        links = []
        self._dummies = {}
        for e, (upper, _, lower, _) in enumerate(self.edges):
            u, v = self.index[upper], self.index[lower]
            self._dummies[e] = list(range(layers[u] + 1, layers[v]))
            previous = u
            for layer in self._dummies[e]:
                vertex[(e, layer)] = len(entries)
                entries.append((e, layer))
                links.append((previous, vertex[(e, layer)]))
                previous = vertex[(e, layer)]
            links.append((previous, v))
        entry_layers = [layers[entry] if isinstance(entry, int) else entry[1] for entry in entries]
        import igraph  # here, not at module level: importing igraph imports Matplotlib when it is installed (0.7 s)

        drawn = igraph.Graph(n=len(entries), edges=links, directed=True).layout_sugiyama(layers=entry_layers)
        rows = [[] for _ in range(max(layers) + 1)]
        for entry, layer, (x, _) in zip(entries, entry_layers, drawn.coords):
            first = isinstance(entry, int) and self.items[entry][0] == "title"
            rows[layer].append((not first, x, entry))
        return [[entry for _, _, entry in sorted(row, key=lambda item: item[:2])] for row in rows]

    def _neighbours(self, units):
        """``{entry: [(neighbour entry, offset)]}``: the entries each one connects to in the
        layers next to it, with the offset of the neighbour's end from its own centre."""
        neighbours = {}
        for e, (upper, upper_port, lower, lower_port) in enumerate(self.edges):
            u, v = self.index[upper], self.index[lower]
            chain = [(u, self._port_offset(u, upper_port, units))]
            chain += [((e, layer), 0.0) for layer in self._dummy_layers(e)]
            chain.append((v, self._port_offset(v, lower_port, units)))
            for (a, offset_a), (b, offset_b) in itertools.pairwise(chain):
                weight = _WEIGHTS[isinstance(a, int) + isinstance(b, int)]
                neighbours.setdefault(a, []).append((b, offset_b - offset_a, weight))
                neighbours.setdefault(b, []).append((a, offset_a - offset_b, weight))
        return neighbours

    def _port_offset(self, index, port, units):
        """How far right of a cluster item's centre its port lies (0 for any other end)."""
        if port is None:
            return 0.0
        inner = units[self.items[index][1]]
        return inner.ports[port] - inner.width / 2

    def _dummy_layers(self, e):
        return self._dummies[e]

    def _frame(self, x, rows, tops, thickness, layers, units):
        """Puts every entry in place, frames the graph and routes its edges."""
        centres = {}
        for row, top, size in zip(rows, tops, thickness):
            for entry in row:
                centres[entry] = (x[entry], top + size / 2)
        lefts = [x[entry] - (self.sizes[entry][0] / 2 if isinstance(entry, int) else 0.0) for row in rows for entry in row]
        rights = [x[entry] + (self.sizes[entry][0] / 2 if isinstance(entry, int) else 0.0) for row in rows for entry in row]
        pad = MARGIN if self.key is None else _CLUSTER_PAD
        left, right = min(lefts) - pad, max(rights) + pad
        has_top = any(ident[0] == "port" and ident[1] == "top" for ident in self.items)
        has_bottom = any(ident[0] == "port" and ident[1] == "bottom" for ident in self.items)
        top = tops[0] if has_top else tops[0] - pad
        bottom = tops[-1] + thickness[-1] if has_bottom else tops[-1] + thickness[-1] + pad
        self.width, self.height = right - left, bottom - top
        self._rects = []
        for i, (width, height) in enumerate(self.sizes):
            cx, cy = centres[i]
            self._rects.append(Rect(cx - width / 2 - left, cy - height / 2 - top, width, height))
        for ident, rect in zip(self.items, self._rects):
            if ident[0] == "port":
                self.ports[(ident[1], ident[2])] = rect.x
        layer_bounds = [(t - top, t + s - top) for t, s in zip(tops, thickness)]
        for e, (upper, upper_port, lower, lower_port) in enumerate(self.edges):
            u, v = self.index[upper], self.index[lower]
            points = self._end(u, upper_port, layers[u], layer_bounds, units, leaving=True)
            for layer in self._dummy_layers(e):
                dx = x[(e, layer)] - left
                points += [(dx, layer_bounds[layer][0]), (dx, layer_bounds[layer][1])]
            points += self._end(v, lower_port, layers[v], layer_bounds, units, leaving=False)
            self.routes[self.edges[e]] = _without_repeats(points)

    def _end(self, index, port, layer, layer_bounds, units, leaving):
        """The points where an edge leaves an item downwards (or reaches it from above):
        its border (a port's place on a cluster's frame), then the edge of its layer."""
        rect = self._rects[index]
        if port is not None:
            along = rect.x + units[self.items[index][1]].ports[port]
        else:
            along = rect.x + rect.width / 2
        top, bottom = layer_bounds[layer]
        if leaving:
            return [(along, rect.y + rect.height), (along, bottom)]
        return [(along, top), (along, rect.y)]


def _spread(rows, neighbours, sizes):
    """The centre of every entry along its layer: igraph's order kept, boxes apart by
    their widths, each pulled towards the entries it connects to.

    The places minimise the sum of ``weight * (horizontal length)**2`` over the
    links between layers (dot's objective, with its weights: a link between two
    dummy points counts 8, so long edges run straight), found by solving for one
    layer at a time, alternately downwards and upwards, from every layer packed
    around 0."""
    def width(entry):
        return sizes[entry][0] if isinstance(entry, int) else 0.0

    gaps, x = [], {}
    for row in rows:
        gap = [(width(a) + width(b)) / 2 + (_NODE_SEP if isinstance(a, int) and isinstance(b, int) else _EDGE_SEP)
               for a, b in itertools.pairwise(row)]
        gaps.append(gap)
        position = -sum(gap) / 2
        for i, entry in enumerate(row):
            x[entry] = position
            position += gap[i] if i < len(gap) else 0.0
    for sweep in range(_SWEEPS):
        order = range(len(rows)) if sweep % 2 == 0 else range(len(rows) - 1, -1, -1)
        for r in order:
            row = rows[r]
            targets, weights = [], []
            for entry in row:
                pulls = neighbours.get(entry)
                if pulls:
                    total = sum(weight for _, _, weight in pulls)
                    targets.append(sum(weight * (x[other] + offset) for other, offset, weight in pulls) / total)
                    weights.append(total)
                else:
                    targets.append(x[entry])
                    weights.append(_UNLINKED)
            for entry, placed in zip(row, _closest_in_order(targets, weights, gaps[r])):
                x[entry] = placed
    return x


def _straighten(rows, x, dummies, sizes):
    """Puts the dummy points of each long edge at one place, the median of theirs, where
    that moves none past its neighbours: the edge runs straight instead of wavering."""
    def width(entry):
        return sizes[entry][0] if isinstance(entry, int) else 0.0

    where = {entry: (r, i) for r, row in enumerate(rows) for i, entry in enumerate(row)}

    def fits(point, place):
        r, i = where[point]
        row = rows[r]
        left = i == 0 or x[row[i - 1]] + width(row[i - 1]) / 2 + _EDGE_SEP <= place
        return left and (i == len(row) - 1 or place + _EDGE_SEP + width(row[i + 1]) / 2 <= x[row[i + 1]])

    for e, layers in dummies.items():
        points = [(e, layer) for layer in layers]
        if len(points) > 1:
            place = sorted(x[point] for point in points)[len(points) // 2]
            if all(fits(point, place) for point in points):
                x.update(dict.fromkeys(points, place))


def _closest_in_order(targets, weights, gaps):
    """Positions as close to ``targets`` as can be (weighted least squares) with each at
    least ``gaps[i]`` after the one before: isotonic regression by pooling adjacent violators."""
    offsets = [0.0]
    for gap in gaps:
        offsets.append(offsets[-1] + gap)
    blocks = []  # [weighted sum, weight, count] of targets less offsets, pooled where out of order
    for target, weight, offset in zip(targets, weights, offsets):
        blocks.append([weight * (target - offset), weight, 1])
        while len(blocks) > 1 and blocks[-2][0] * blocks[-1][1] > blocks[-1][0] * blocks[-2][1]:
            total, weight_sum, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += weight_sum
            blocks[-1][2] += count
    positions = []
    for total, weight_sum, count in blocks:
        positions.extend([total / weight_sum] * count)
    return [position + offset for position, offset in zip(positions, offsets)]


def _without_repeats(points):
    kept = [points[0]]
    for point in points[1:]:
        if abs(point[0] - kept[-1][0]) > 1e-6 or abs(point[1] - kept[-1][1]) > 1e-6:
            kept.append(point)
    return kept


def _edge_polyline(flat, units, index, edge):
    """A scene edge's polyline from its source to its target: its segments joined, or a loop beside its box."""
    if edge.source == edge.target:
        rect = flat.boxes[edge.source]
        right, middle = rect.x + rect.width, rect.y + rect.height / 2
        return [(right, middle - rect.height / 4), (right + _LOOP, middle - rect.height / 4),
                (right + _LOOP, middle + rect.height / 4), (right, middle + rect.height / 4)]
    points = []
    for unit, route_key, backwards in units.segments[index]:
        route = flat.routes[(unit, route_key)]
        points.extend(reversed(route) if backwards else route)
    return _without_repeats(points)


def _apart(polylines, edges):
    """The polylines with those of parallel edges (a layer reading one tensor twice) moved
    side by side, so that each is seen."""
    counts = Counter((edge.source, edge.target) for edge in edges if edge.source != edge.target)
    drawn = Counter()
    for index, edge in enumerate(edges):
        count = counts[(edge.source, edge.target)]
        if count > 1:
            shift = (drawn[(edge.source, edge.target)] - (count - 1) / 2) * _PARALLEL_SEP
            drawn[(edge.source, edge.target)] += 1
            polylines[index] = [(x + shift, y) for x, y in polylines[index]]
    return polylines


def _turned(layout, rankdir):
    """A layout made top to bottom, turned for "LR" (and mirrored for "BT" and "RL")."""
    if rankdir == "TB":
        return layout
    width, height = layout.width, layout.height

    def point(x, y):
        if rankdir in ("LR", "RL"):
            x, y = y, x
            return (width_out - x if rankdir == "RL" else x), y
        return x, height - y

    def rect(r):
        x, y = point(r.x, r.y)
        x2, y2 = point(r.x + r.width, r.y + r.height)
        return Rect(min(x, x2), min(y, y2), abs(x2 - x), abs(y2 - y))

    width_out = height if rankdir in ("LR", "RL") else width
    turned = Layout(width_out, width if rankdir in ("LR", "RL") else height)
    turned.boxes = {key: rect(r) for key, r in layout.boxes.items()}
    turned.clusters = {key: rect(r) for key, r in layout.clusters.items()}
    turned.titles = {key: rect(r) for key, r in layout.titles.items()}
    turned.edges = [[point(x, y) for x, y in line] for line in layout.edges]
    turned.legend = None if layout.legend is None else rect(layout.legend)
    return turned
