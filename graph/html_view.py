"""The interactive view: a model's graph as one self-contained HTML document.

``to_html`` describes the graph as JSON (``view_data``) and inlines it, with the
vendored layout library (dagre, ``graph/_viewer/``) and the viewer's own script
and style, into one HTML fragment. The same string is a file (``save_html``), a
notebook's ``text/html`` output and a VS Code output: nothing is fetched, no id
or global is shared between two views on one page (each view's script finds its
root by an attribute holding a hash of its data, and starts every copy of it
not yet started), and names reach the page only as JSON read into
``textContent``.

Groups are the expanded nested models, the runs of identical blocks (``×N``,
``graph._repeats``) and, where a group would hold more than ``BUDGET`` boxes,
consecutive segments of it, cut where a single box's outputs cross. Groups open
depth by depth while the boxes shown stay within ``BUDGET``; the page lays out a
group only when it is open, so the first display costs the same for 100 or
10,000 layers.
"""

import hashlib
import json
import math
import os
from collections.abc import Mapping
from importlib import resources

from graph._format import shapes_text
from graph._node_data import fill_colour, legend_stops, node_values
from graph._repeats import runs_by_container
from graph._walk import LEVELS, plan_of, walk
from graph.profiler import profile

BUDGET = 150  # the most boxes shown at first, and in any group's own layout
EDGE_BUDGET = 2 * BUDGET  # the most edges inside a segment: dagre's time grows with them
_LONGEST_VALUE = 60  # config values longer than this are abbreviated
_NOUNS = {"layer": "layers", "node": "calls"}


def to_html(model, node_data: str | Mapping[str, float] | None = None, title: str | None = None,
            height: int = 600) -> str:
    """The interactive view of ``model``'s graph: one HTML document, nothing fetched.

    Boxes are layers (or calls, with the page's toggle); nested models and runs of
    identical blocks are groups that open and close. The page searches names and
    classes, shows a card per box (class, config, calls with shapes, parameters,
    FLOPs and bytes), highlights what is upstream or downstream of a box, pans and
    zooms. It works as a file, in JupyterLab, Notebook 7 and VS Code.

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a built Sequential).
        node_data: colours boxes by a number, with a legend: ``"params"``,
            ``"flops"``, ``"activation_bytes"``, ``"weight_bytes"`` or a mapping
            from layer or call keys to numbers (see ``graph._node_data.node_values``).
        title: the title shown above the graph (default: the model's name).
        height: the view's height in pixels in a notebook; the graph pans and
            zooms inside it. A page of its own fills the browser's window.

    Returns:
        The HTML, to write to a file or to show as a notebook's ``text/html`` output.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> page = to_html(Model(x, Dense(2, name="d")(x), name="tiny"))
        >>> page.startswith("<!DOCTYPE html>"), "<title>tiny</title>" in page
        (True, True)
    """
    if not isinstance(height, int) or isinstance(height, bool) or height < 100:
        raise ValueError(f"to_html expects height to be a whole number of pixels of at least 100, but received "
                         f"{height!r}. Pass for instance height=600.")
    data = view_data(model, node_data)
    title = model.name if title is None else str(title)
    data["title"] = title
    payload = _script_json(data)
    view_id = "nwv-" + hashlib.sha1(payload.encode("utf-8")).hexdigest()[:12]
    script = "\n".join([_asset("dagre.min.js"), _asset("viewer.js")])
    return (
        '<!DOCTYPE html>\n<meta charset="utf-8">\n'
        f"<title>{_escape_text(title)}</title>\n"
        f'<div class="nwv" data-nwv-view="{view_id}" style="height:{height}px">\n'
        f"<style>{_asset('viewer.css')}</style>\n"
        '<p class="nwv-nojs">This interactive graph needs JavaScript, which did not run here '
        "(in Jupyter: trust the notebook, or run the cell again).</p>\n"
        f'<script type="application/json" class="nwv-data">{payload}</script>\n'
        f'<script>(function (viewId) {{\n{script}\nnodeweaveView.startAll(viewId);\n}})("{view_id}");</script>\n'
        "</div>\n"
    )


def save_html(model, path: str | os.PathLike, **options) -> None:
    """Writes ``to_html(model, **options)`` to ``path`` (UTF-8), a page that opens offline in any browser.

    Args:
        model: a functional model, as for ``to_html``.
        path: the file to write (``graph.html``); an existing file is replaced.
        **options: ``node_data``, ``title`` and ``height``, as for ``to_html``.

    Example:
        >>> import os, tempfile
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> path = os.path.join(tempfile.mkdtemp(), "tiny.html")
        >>> save_html(Model(x, Dense(2)(x)), path)
        >>> open(path, encoding="utf-8").read(15)
        '<!DOCTYPE html>'
    """
    page = to_html(model, **options)
    with open(os.fspath(path), "w", encoding="utf-8") as file:
        file.write(page)


def view_data(model, node_data: str | Mapping[str, float] | None = None) -> dict:
    """The JSON-able description of ``model``'s graph that the page draws.

    Args:
        model: a functional model, as for ``to_html``.
        node_data: as for ``to_html``: adds each box's number and colour, and a legend.

    Returns:
        A dict with ``layers`` (``key``, ``class``, ``params``, ``weight_bytes``,
        ``config``: an index into ``configs`` or None, ``calls``), ``calls``
        (``key``, ``layer``, ``in`` and ``out`` shapes, ``flops`` and ``bytes`` at
        batch 1, None when unknown), ``configs`` (each distinct config, its values
        as abbreviated texts, ``name`` left out) and ``levels``: for ``"layer"``
        and ``"node"``, ``items`` (a box is the index of its layer or call; a
        group is a dict with ``kind``: ``root`` for item 0, ``model``, ``run`` or
        ``segment``, and ``key``, ``title``, ``children``, ``open``, ``leaves``, a
        model's ``ref``), ``edges`` (box item ids, flat: source, target, source,
        target...) and, with ``node_data``, ``legend`` and ``colours``: ``[item,
        value, "#rrggbb"]`` per box with a value.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> data = view_data(Model(x, Dense(2, name="d")(x)))
        >>> [layer["key"] for layer in data["layers"]], data["levels"]["node"]["edges"]
        (['x', 'd'], [1, 2])
    """
    graph = walk(model, expand_nested=True)
    data = _tables(model, graph)
    layer_of = {layer["key"]: index for index, layer in enumerate(data["layers"])}
    call_of = {call["key"]: index for index, call in enumerate(data["calls"])}
    runs = {"node": runs_by_container(graph, "node")}
    if all(len(calls) == 1 for calls in graph.vertices("layer").values()):
        # Every layer is called once: both levels group the same calls, so their runs are found once.
        layer_key = {call.node_key: call.layer_key for call in graph.calls if call.expanded}
        runs["layer"] = {layer_key.get(key): found for key, found in runs["node"].items()}
    else:
        runs["layer"] = runs_by_container(graph, "layer")
    data["levels"] = {}
    for level in LEVELS:
        refs = layer_of if level == "layer" else call_of
        data["levels"][level] = _Level(graph, level, refs, runs[level]).data(model, node_data)
    return data


def _tables(model, graph):
    """The ``layers``, ``calls`` and ``configs`` tables, in the order of ``graph.calls``."""
    costs = {row["node"]: (row["flops"], row["activation_bytes"]) for row in profile(model).rows}
    layers, calls, configs = [], [], []
    layer_of, config_of = {}, {}
    for call in graph.calls:
        if call.layer_key not in layer_of:
            layer_of[call.layer_key] = len(layers)
            config = _config(call.layer)
            config_index = None
            if config is not None:
                config_index = config_of.setdefault(tuple(config.items()), len(configs))
                if config_index == len(configs):
                    configs.append(config)
            weights = call.layer.weights
            layers.append({"key": call.layer_key, "class": type(call.layer).__name__,
                           "params": sum(math.prod(v.shape) for v in weights),
                           "weight_bytes": sum(int(v.value.nbytes) for v in weights),
                           "config": config_index, "calls": []})
        layers[layer_of[call.layer_key]]["calls"].append(len(calls))
        flops, activation_bytes = costs.get(call.node_key, (None, None))
        calls.append({"key": call.node_key, "layer": layer_of[call.layer_key],
                      "in": shapes_text(call.reads) if call.reads else "", "out": shapes_text(call.outputs),
                      "flops": flops, "bytes": activation_bytes})
    return {"layers": layers, "calls": calls, "configs": configs}


def _config(layer):
    """``layer.get_config()`` without its name, each value as a short text; None for a
    nested model (its group shows its layers) or a layer without a config."""
    if plan_of(layer) is not None:
        return None
    try:
        config = layer.get_config()
    except NotImplementedError:
        return None
    return {str(key): _abbreviated(value) for key, value in config.items() if key != "name"}


def _abbreviated(value):
    if isinstance(value, str):
        text = value
    elif value is None or isinstance(value, bool):
        text = "null" if value is None else str(value).lower()
    elif isinstance(value, int):
        text = int.__repr__(value)
    elif isinstance(value, float):
        text = float.__repr__(value)
    else:
        try:
            text = json.dumps(value, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= _LONGEST_VALUE else text[:_LONGEST_VALUE - 1] + "…"


class _Item:
    """A box or a group of one level's tree."""

    __slots__ = ("children", "key", "kind", "open", "ordinal", "parent", "ref", "title")

    def __init__(self, kind, parent, ref=None, key=None, title=None):
        self.kind, self.parent, self.ref, self.key, self.title = kind, parent, ref, key, title
        self.children = []
        self.open = False
        self.ordinal = None  # a box's position among the level's boxes


class _Level:
    """The tree of boxes and groups at one level ("layer" or "node") and its edges."""

    def __init__(self, graph, level, refs, runs):
        self.level = level
        self.graph = graph
        self.items = [_Item("root", None)]
        self.box_of = {}  # box key -> item id
        self.call_of_item = {}  # item id -> the Call it was made from (its first call)
        box_of_call = {}  # id(Call) -> the item id of its box, for every call drawn
        nodes = {}
        for call in graph.calls:
            nodes.setdefault(id(call.layer), set()).add(id(call.node))
        self.called_more_than_once = {layer for layer, called in nodes.items() if len(called) > 1}
        group_of = {None: 0}  # container key -> item id
        for call in graph.calls:
            key = call.layer_key if level == "layer" else call.node_key
            parent = group_of[None if call.container is None else call.container.key(level)]
            if call.expanded:
                if key not in group_of:
                    group_of[key] = self._add(_Item("model", parent, refs[key], key, self._name(call)))
                    self.call_of_item[group_of[key]] = call
                continue
            if key not in self.box_of:
                self.box_of[key] = self._add(_Item("box", parent, refs[key]))
                self.items[self.box_of[key]].ordinal = len(self.box_of)
                self.call_of_item[self.box_of[key]] = call
            box_of_call[id(call)] = self.box_of[key]
        self.edges = self._edges(box_of_call)
        for container, group in group_of.items():
            for run in runs.get(container, ()):
                self._group_run(group, run)
        for group in range(len(self.items)):
            while self.items[group].kind != "box" and len(self.items[group].children) > BUDGET:
                self._segment(group)
        self._open_within_budget()

    def data(self, model, node_data):
        items = []
        for item in self.items:
            if item.kind == "box":
                items.append(item.ref)
                continue
            entry = {"kind": item.kind, "children": item.children, "open": item.open, "leaves": self._leaf_count(item)}
            if item.kind != "root":
                entry.update(key=item.key, title=item.title)
            if item.kind == "model":
                entry["ref"] = item.ref
            items.append(entry)
        data = {"items": items, "edges": [end for edge in self.edges for end in edge]}
        if node_data is not None:
            legend_title, values = node_values(model, self.graph, node_data, self.level)
            if values:
                low, high = min(values.values()), max(values.values())
                data["colours"] = [[self.box_of[key], value, fill_colour(value, low, high)]
                                   for key, value in values.items()]
                data["legend"] = {"title": legend_title, "stops": legend_stops(low, high)}
        return data

    def _name(self, call):
        """A box's name: the layer's, or at node level ``dense[1]`` for a layer called more than once."""
        if self.level == "node" and id(call.layer) in self.called_more_than_once:
            return call.call_name
        return call.layer.name

    def _add(self, item):
        self.items.append(item)
        index = len(self.items) - 1
        if item.parent is not None:
            self.items[item.parent].children.append(index)
        return index

    def _edges(self, box_of_call):
        """The distinct (source box, target box) pairs of the level's tensor reads (``graph.edges(level)``,
        whose finer distinctions the boxes merge anyway), self-loops left out."""
        edges = {}
        for link in self.graph.links:
            pair = (box_of_call[id(link.source)], box_of_call[id(link.target)])
            if pair[0] != pair[1]:
                edges[pair] = None
        return list(edges)

    def _group_run(self, group, run):
        """Moves the boxes of ``run`` from ``group`` into a new run group in their place."""
        members = [self.box_of[call.key(self.level)] for block in run.blocks for call in block]
        first, last = self.call_of_item[members[0]], self.call_of_item[members[-1]]
        title = f"×{len(run.blocks)}  {self._name(first)} … {self._name(last)}"
        run_item = _Item("run", group, key=f"run:{first.key(self.level)}", title=title)
        run_item.children = members
        self.items.append(run_item)
        self._replace_children(group, members, len(self.items) - 1)

    def _replace_children(self, group, members, replacement):
        """Puts ``replacement`` where the first of ``members`` is among ``group``'s children, drops the others."""
        moved = set(members)
        children = []
        for child in self.items[group].children:
            if child not in moved:
                children.append(child)
            elif child == members[0]:
                children.append(replacement)
        self.items[group].children = children
        for member in members:
            self.items[member].parent = replacement

    def _segment(self, group):
        """Splits the children of ``group`` into consecutive segments of at most BUDGET children
        and EDGE_BUDGET edges, each ending where a single child's outputs cross if one does
        in its second half."""
        children = self.items[group].children
        links = self._child_links(group)
        clean = self._clean_cuts(len(children), links)
        reads = [[] for _ in children]  # per child: the positions of the children it reads
        for _, start, end in links:
            if 0 <= start < end < len(children):
                reads[end].append(start)
        cuts, start = [], 0
        while True:
            limit, edges = start + 1, 0
            while limit < len(children) and limit - start < BUDGET:
                edges += sum(1 for source in reads[limit] if source >= start)
                if edges > EDGE_BUDGET and limit - start >= 2:
                    break
                limit += 1
            if limit >= len(children):
                break
            end = max((cut for cut in range(start + (limit - start + 1) // 2, limit + 1) if clean[cut]), default=limit)
            cuts.append(end)
            start = end
        regrouped = []
        for begin, end in zip([0, *cuts], [*cuts, len(children)]):
            members = children[begin:end]
            if len(members) < 2:
                regrouped.extend(members)
                continue
            first, last = self._first_leaf(members[0]), self._last_leaf(members[-1])
            first_call, last_call = self.call_of_item[first], self.call_of_item[last]
            title = (f"{_NOUNS[self.level]} {self.items[first].ordinal}–{self.items[last].ordinal}  "
                     f"{self._name(first_call)} … {self._name(last_call)}")
            segment = _Item("segment", group, key=f"segment:{first_call.key(self.level)}..{last_call.key(self.level)}",
                            title=title)
            segment.children = members
            self.items.append(segment)
            regrouped.append(len(self.items) - 1)
            for member in members:
                self.items[member].parent = regrouped[-1]
        self.items[group].children = regrouped

    def _child_links(self, group):
        """``(source, start, end)`` per edge touching the children of ``group``: what makes the
        tensor read (a child's position, or the box outside), and the source's and the
        target's positions among the children: -1 for a source outside the group, the
        number of children for a target outside it."""
        position = {child: i for i, child in enumerate(self.items[group].children)}
        links = []
        for source, target in self.edges:
            source_child, target_child = self._child_of(source, group), self._child_of(target, group)
            if source_child is None and target_child is None:
                continue
            start = -1 if source_child is None else position[source_child]
            links.append((("outside", source) if source_child is None else start, start,
                          len(position) if target_child is None else position[target_child]))
        return links

    @staticmethod
    def _clean_cuts(count, links):
        """``clean[c]``: whether the outputs of at most one child (or outside box) are read both
        before and from child ``c`` on."""
        reach = {}  # source -> (lowest, highest) position it spans
        for source, start, end in links:
            low, high = min(start, end), max(start, end)
            previous = reach.get(source, (low, high))
            reach[source] = (min(previous[0], low), max(previous[1], high))
        crossing = [0] * (count + 2)
        for low, high in reach.values():
            crossing[low + 1] += 1
            crossing[high + 1] -= 1
        clean, running = [False] * (count + 1), 0
        for cut in range(count + 1):
            running += crossing[cut]
            clean[cut] = 0 < cut < count and running <= 1
        return clean

    def _child_of(self, item, group):
        """The child of ``group`` that holds ``item``, or None when ``item`` is outside it."""
        while item is not None and self.items[item].parent != group:
            item = self.items[item].parent
        return item

    def _first_leaf(self, item):
        while self.items[item].kind != "box":
            item = self.items[item].children[0]
        return item

    def _last_leaf(self, item):
        while self.items[item].kind != "box":
            item = self.items[item].children[-1]
        return item

    def _leaf_count(self, item):
        stack, count = [item], 0
        while stack:
            current = stack.pop()
            if current.kind == "box":
                count += 1
            else:
                stack.extend(self.items[child] for child in current.children)
        return count

    def _open_within_budget(self):
        """Opens the model, then the groups depth by depth while all the boxes shown stay within BUDGET."""
        root = self.items[0]
        root.open = True
        shown = len(root.children)
        frontier = [child for child in root.children if self.items[child].kind != "box"]
        while frontier:
            shown += sum(len(self.items[group].children) - 1 for group in frontier)
            if shown > BUDGET:
                return
            for group in frontier:
                self.items[group].open = True
            frontier = [child for group in frontier for child in self.items[group].children
                        if self.items[child].kind != "box"]


def _asset(name):
    text = resources.files("graph").joinpath("_viewer", name).read_text(encoding="utf-8")
    if "</script" in text.lower() or "<!--" in text:
        raise RuntimeError(f"graph/_viewer/{name} holds '</script' or '<!--', which would end the page's script early.")
    return text


def _script_json(data):
    """``data`` as JSON safe inside ``<script>``: ``<``, ``>`` and ``&`` written as ``\\u003c`` etc."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _escape_text(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
