"""to_model_explorer: a model's graph as Model Explorer's graph JSON, for graphs too big for anything else.

Model Explorer (google-ai-edge/model-explorer; ``pip install
ai-edge-model-explorer``, then ``model-explorer graph.json``) draws namespaces
as groups that open on demand and lays out only the group opened, so a graph of
tens of thousands of calls opens there. The JSON is a GraphCollection of its
``model_explorer.graph_builder`` dataclasses (GraphCollection, Graph,
GraphNode, IncomingEdge, KeyValue, MetadataItem) as ``dataclasses.asdict``
writes them, without the fields nodeweave has nothing for:

- one GraphNode per call, the calls of nested models included (the nested
  models themselves are namespaces): ``id`` is the call's key of
  ``graph._walk`` (``outer[0]/inner[0]/dense[1]``), ``label`` its layer's class,
  ``namespace`` the path of the nested models around it (``outer/inner``; by
  call, ``outer[1]``, for a model called more than once), with a run of
  identical blocks as one more component, its first call's name and the count
  (``conv2_block1_1_conv_x3``);
- ``attrs``: the qualified layer name, class, config (each entry in short),
  output shapes, parameters (on a shared layer's first call only) and FLOPs at
  batch size 1 from ``graph.profile``;
- ``incomingEdges``: one per tensor read; ``sourceNodeOutputId`` is the
  tensor's index among its call's outputs, ``targetNodeInputId`` its position
  among the reader's inputs;
- ``outputsMetadata``: each output's ``shape`` and ``dtype``, which Model
  Explorer can show on the edges;
- ``groupNodeAttributes``: what each group is (a nested model, a run, a
  section), and the model's totals under the empty namespace, shown when
  nothing is selected.

Model Explorer lays out the whole of a group when it processes a graph: on two
cores, a group of 2,000 calls takes it seconds and one of 4,000 more than five
minutes. So a group (the model included) of more than 100 members, calls and
groups, is split into ``section_<i>_of_<n>`` groups of consecutive members.
"""

import json
import os

from graph._format import shapes_text
from graph._repeats import runs_by_container
from graph._scene import _Names
from graph._walk import walk
from graph.profiler import profile

_LONGEST = 200  # characters of a config value shown; a vocabulary or a weight list is cut there
_OWN_KEYS = ("name", "class_name", "output_shapes", "params", "flops")  # config entries with these keys are left out
_LARGEST_GROUP = 100  # members of one group, calls and groups; more are split into sections


def to_model_explorer(model, collapse_repeats=True) -> dict:
    """Returns the graph of ``model`` as Model Explorer's graph JSON (a GraphCollection).

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a Sequential
            model whose input shape is known).
        collapse_repeats: put each run of identical blocks (as ``plot_model``
            finds them) in a namespace of its own, ``<first name>_x<count>``,
            which Model Explorer shows as one group until it is opened.

    Returns:
        A dict ready for ``json.dump``: ``{"label": model name, "graphs": [graph]}``.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> collection = to_model_explorer(Model(x, Dense(2, name="d")(x), name="m"))
        >>> node = collection["graphs"][0]["nodes"][1]
        >>> node["id"], node["label"], node["incomingEdges"]
        ('d[0]', 'Dense', [{'sourceNodeId': 'x[0]', 'sourceNodeOutputId': '0', 'targetNodeInputId': '0'}])
        >>> [(item["key"], item["value"]) for item in node["attrs"] if item["key"] in ("units", "params", "flops")]
        [('units', '2'), ('params', '8'), ('flops', '14')]
    """
    graph = walk(model, expand_nested=True)
    names = _Names(graph, per_call=True)
    costs = profile(model)
    flops = {row["node"]: row["flops"] for row in costs.rows}
    total = ("≥ " if costs.uncounted["flops"] else "") + str(costs.totals["flops"])
    paths, groups = _namespaces(graph, names, collapse_repeats)
    calls = [call for call in graph.calls if not call.expanded]
    sections = _Sections(calls, paths)
    attributes = {"": {"name": model.name, "class_name": type(model).__name__, "params": str(model.count_params()),
                       "flops": total}}
    attributes.update((sections.namespace(path), group) for path, group in groups.items())
    attributes.update(sections.attributes({id(call): call.node_key for call in calls}))
    incoming = {}
    for _, target, link in graph.edges("node"):
        reader, index = link.reader
        incoming.setdefault(target, []).append({
            "sourceNodeId": link.source.node_key,
            "sourceNodeOutputId": str(link.tensor._keras_history.tensor_index),
            # A nested model's InputLayer reads the tensor fed to the model as its only input.
            "targetNodeInputId": str(index if reader is link.target.node else 0),
        })
    nodes, first_calls = [], {}
    for call in calls:
        first = first_calls.setdefault(id(call.layer), call.node_key)
        attrs = [("name", call.layer_key), ("class_name", type(call.layer).__name__), *_config(call.layer),
                 ("output_shapes", shapes_text(call.outputs)),
                 ("params", str(call.layer.count_params()) if first == call.node_key else f"shared with {first}")]
        if call.node_key in flops:  # a nested model's InputLayer passes its input on: profile leaves it out
            cost = flops[call.node_key]
            attrs.append(("flops", "unknown" if cost is None else str(cost)))
        nodes.append({
            "id": call.node_key,
            "label": type(call.layer).__name__,
            "namespace": sections.namespace(paths[id(call)], id(call)),
            "attrs": [{"key": key, "value": value} for key, value in attrs],
            "incomingEdges": incoming.get(call.node_key, []),
            "outputsMetadata": [{"id": str(index), "attrs": [{"key": "shape", "value": str(tensor.shape)},
                                                             {"key": "dtype", "value": str(tensor.dtype)}]}
                                for index, tensor in enumerate(call.outputs)],
        })
    return {"label": model.name, "graphs": [{"id": model.name, "nodes": nodes, "groupNodeAttributes": attributes}]}


def save_model_explorer(model, path, collapse_repeats=True) -> None:
    """Writes ``to_model_explorer(model)`` to the JSON file ``path``, to open in Model Explorer.

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a built Sequential).
        path: the file to write (``model.json``); open it with ``model-explorer
            model.json``, or from Model Explorer's page.
        collapse_repeats: as for ``to_model_explorer``.

    Example:
        >>> import json, os, tempfile
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> path = os.path.join(tempfile.mkdtemp(), "model.json")
        >>> save_model_explorer(Model(x, Dense(2)(x), name="m"), path)
        >>> with open(path, encoding="utf-8") as file:
        ...     json.load(file)["label"]
        'm'
    """
    collection = to_model_explorer(model, collapse_repeats=collapse_repeats)
    with open(os.fspath(path), "w", encoding="utf-8") as file:
        json.dump(collection, file, ensure_ascii=False, separators=(",", ":"))


def _namespaces(graph, names, collapse_repeats):
    """The namespace of each call drawn as a tuple of names, by ``id(call)``, and each
    group's attributes by its namespace."""
    paths, groups = {}, {}  # for an expanded nested model's call, paths holds the namespace of its calls
    for call in graph.calls:
        outer = () if call.container is None else paths[id(call.container)]
        if not call.expanded:
            paths[id(call)] = outer
            continue
        paths[id(call)] = (*outer, names.of(call))
        groups[paths[id(call)]] = {"name": call.layer_key, "class_name": type(call.layer).__name__,
                                   "params": str(call.layer.count_params())}
    if collapse_repeats:
        for runs in runs_by_container(graph, "node").values():
            for run in runs:
                first, last = run.blocks[0], run.blocks[-1]
                path = (*paths[id(first[0])], f"{names.of(first[0])}_x{len(run.blocks)}")
                layers = {id(call.layer): call.layer for block in run.blocks for call in block}
                groups[path] = {"blocks": str(len(run.blocks)), "first": names.of(first[0]),
                                "last": names.of(last[-1]),
                                "params": str(sum(layer.count_params() for layer in layers.values()))}
                paths.update((id(call), path) for block in run.blocks for call in block)
    return paths, groups


class _Sections:
    """Where groups of more than ``_LARGEST_GROUP`` members (calls and groups) are split into
    ``section_<i>_of_<n>`` groups of consecutive members: Model Explorer lays out a whole
    group at once, and takes minutes over thousands of members where it takes seconds over
    hundreds. ``namespace`` writes a path with its sections."""

    def __init__(self, calls, paths):
        members = {}  # namespace -> its members in execution order: a group's name, or a Call's id
        for call in calls:
            path = paths[id(call)]
            for depth in range(len(path) + 1):
                members.setdefault(path[:depth], {}).setdefault(path[depth] if depth < len(path) else id(call))
        self.section = {}  # (namespace, member) -> the name of the member's section
        self.bounds = {}  # (namespace, section name) -> its first and last member
        for namespace, held in members.items():
            if len(held) > _LARGEST_GROUP:
                count = -(-len(held) // _LARGEST_GROUP)
                size = -(-len(held) // count)
                for index, member in enumerate(held):
                    name = f"section_{index // size + 1}_of_{count}"
                    self.section[namespace, member] = name
                    self.bounds.setdefault((namespace, name), [member, member])[1] = member

    def attributes(self, keys):
        """Each section's namespace and attributes, its first and last member (a call by its key in ``keys``)."""
        for (path, name), bounds in self.bounds.items():
            first, last = (keys.get(member, member) for member in bounds)
            yield "/".join(filter(None, (self.namespace(path), name))), {"first": first, "last": last}

    def namespace(self, path, member=None):
        """``path`` (of the group ``member`` is in, or of a group when None) as a namespace, with sections."""
        names = []
        for depth in range(len(path) + (member is not None)):
            name = self.section.get((path[:depth], path[depth] if depth < len(path) else member))
            if name is not None:
                names.append(name)
            if depth < len(path):
                names.append(path[depth])
        return "/".join(names)


def _config(layer):
    """The layer's config but its name, ``(key, value in short)``: an initializer or
    other object by its class name, a long value cut, None values left out."""
    try:
        config = layer.get_config()
    except NotImplementedError:
        return []
    return [(key, _short(value)) for key, value in config.items() if key not in _OWN_KEYS and value is not None]


def _short(value):
    if isinstance(value, dict) and "class_name" in value:
        return str(value["class_name"])
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= _LONGEST else f"{text[:_LONGEST]}… ({len(text):,} characters)"
