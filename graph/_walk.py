"""The one reading of a model's execution plan that every view shares.

(``ancestry`` reads the same calls and links for one tensor, from its Nodes.)

plot_model, to_networkx, summary, print_tabular and profile all show the same
thing: the calls of a model (its Nodes, in execution order) and one link per
tensor read between them. ``walk`` reads both off ``model.plan``. With
``expand_nested`` it replaces each call of a nested functional model by the
calls of that model's own plan, at any depth, using an explicit stack rather
than recursion; the nested model's InputLayers stay as calls, so the tensor fed
to the nested model links to them.

Names are paths of model names. At layer level a layer is keyed
``outer/inner/dense``; at node level every path component is a call,
``outer[0]/inner[0]/dense[1]``. A nested model called twice is therefore
expanded twice at node level (the calls always form a DAG) and merged into one
set of layers at layer level (where, as for any shared layer, the graph may
loop back on itself).
"""

from engine import Sequential
from engine.network.functional import functional_of

LEVELS = ("layer", "node")


class Call:
    """One Node of the model as the views show it.

    Attributes:
        layer, node: the layer called and its Node.
        node_index: the Node's position in ``layer.inbound_nodes``.
        layer_key, node_key: the qualified names at layer and at node level.
        depth: how many expanded nested models contain the call.
        container: the Call of the expanded nested model that contains it, or None.
        reads: the tensors the call reads, as its own plan holds them (none for inputs).
        expanded: whether this is a nested model shown as its inner calls.
    """

    __slots__ = ("container", "depth", "expanded", "layer", "layer_key", "node", "node_index",
                 "node_key", "reads")

    def __init__(self, node, container, reads):
        self.layer = node.outbound_layer
        self.node = node
        # Every Node stamps its outputs with its index: O(1), unlike inbound_nodes.index(node).
        self.node_index = node.output_tensors[0]._keras_history.node_index
        self.container = container
        self.depth = 0 if container is None else container.depth + 1
        layer_prefix = "" if container is None else container.layer_key + "/"
        node_prefix = "" if container is None else container.node_key + "/"
        self.layer_key = layer_prefix + self.layer.name
        self.node_key = f"{node_prefix}{self.call_name}"
        self.reads = reads
        self.expanded = False

    @property
    def call_name(self):
        """``dense[1]``: the layer's own name and the call's node index."""
        return f"{self.layer.name}[{self.node_index}]"

    @property
    def outputs(self):
        return self.node.output_tensors

    def key(self, level):
        """The call's key at ``level`` ("layer" or "node")."""
        return self.layer_key if level == "layer" else self.node_key


class Link:
    """One tensor read: ``source`` made ``tensor``, ``target`` reads it.

    ``tensor`` is the tensor as its source made it (its ``_keras_history``
    names ``source``); ``reader`` is ``(node, index)``, the Node that reads it
    in its own plan and the input position, which tells links apart.
    """

    __slots__ = ("reader", "source", "target", "tensor")

    def __init__(self, source, target, tensor, reader):
        self.source = source
        self.target = target
        self.tensor = tensor
        self.reader = reader


class ModelGraph:
    """The calls of a model in execution order (an expanded nested model's call
    right before its inner calls) and the links between the calls drawn."""

    def __init__(self):
        self.calls = []
        self.links = []

    def vertices(self, level):
        """The calls drawn (expanded nested models left out) grouped by key:
        one group per layer at level "layer", one call per group at level "node"."""
        groups = {}
        for call in self.calls:
            if not call.expanded:
                groups.setdefault(call.key(level), []).append(call)
        return groups

    def edges(self, level):
        """``(source key, target key, Link)`` per tensor read at ``level``; the
        copies of a nested model's inner links made by expanding each of its
        calls count once at layer level."""
        edges, seen = [], set()
        for link in self.links:
            source, target = link.source.key(level), link.target.key(level)
            identity = (source, target, id(link.reader[0]), link.reader[1])
            if identity not in seen:
                seen.add(identity)
                edges.append((source, target, link))
        return edges


class _Frame:
    """One plan being read: where each of its slots comes from, and how far the reading got."""

    __slots__ = ("container", "exports", "plan", "position", "sources")

    def __init__(self, plan, container, exports=()):
        self.plan = plan
        self.container = container
        self.sources = [None] * len(plan.tensors)  # slot -> (Call, tensor as that Call made it)
        self.position = 0
        self.exports = exports  # the slots of the parent plan that this plan's outputs fill


def plan_of(model):
    """The model's ExecutionPlan, or None when it has none: a layer or a
    subclassed model, or a Sequential model with no input shape yet."""
    functional = functional_of(model)
    return None if functional is None else functional.plan


def walk(model, expand_nested=False, max_depth=None):
    """Reads the calls of ``model`` and the links between them from its plan.

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a Sequential
            model whose input shape is known).
        expand_nested: whether to show nested functional models as their inner calls.
        max_depth: with ``expand_nested``, how many levels of nested models to
            expand (1: the models the model calls, not the models they call);
            None expands all.

    Returns:
        A ModelGraph.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> graph = walk(Model(x, Dense(2, name="d")(x)))
        >>> [(s, t) for s, t, _ in graph.edges("layer")]
        [('x', 'd')]
    """
    plan = plan_of(model)
    if plan is None:
        raise ValueError(_no_plan_message(model))
    graph = ModelGraph()
    root = _Frame(plan, None)
    for slot, (call, tensor) in enumerate(zip(_input_calls(graph, plan, None), plan.inputs)):
        root.sources[slot] = (call, tensor)
    stack = [root]
    while stack:
        frame = stack[-1]
        if frame.position == len(frame.plan.steps):
            stack.pop()
            for slot, inner_slot in zip(frame.exports, frame.plan.output_slots):
                stack[-1].sources[slot] = frame.sources[inner_slot]
            continue
        step = frame.plan.steps[frame.position]
        frame.position += 1
        call = Call(step.node, frame.container, [frame.plan.tensors[s] for s in step.in_slots])
        graph.calls.append(call)
        deep_enough = max_depth is not None and call.depth >= max_depth
        inner = plan_of(step.layer) if expand_nested and not deep_enough else None
        if inner is None:
            for index, slot in enumerate(step.in_slots):
                _link(graph, frame.sources[slot], call, (step.node, index))
            for slot, tensor in zip(step.out_slots, step.node.output_tensors):
                frame.sources[slot] = (call, tensor)
            continue
        call.expanded = True
        child = _Frame(inner, call, step.out_slots)
        outer_slot = {id(t): s for t, s in zip(step.node.input_tensors, step.in_slots)}
        fed = step.node.fed_inputs  # the call's tensors in the order of inner.inputs
        input_calls = _input_calls(graph, inner, call)
        for index, (input_call, tensor, outer) in enumerate(zip(input_calls, inner.inputs, fed)):
            _link(graph, frame.sources[outer_slot[id(outer)]], input_call, (step.node, index))
            child.sources[index] = (input_call, tensor)
        stack.append(child)
    return graph


def ancestry(tensor):
    """The calls that ``tensor``'s value depends on, back to the Inputs, read
    off the Nodes through ``_keras_history``: no model is built and nothing is
    recorded on the graph. Iterative, so any depth works.

    Args:
        tensor: a KerasTensor.

    Returns:
        A ModelGraph with the calls in execution order (none for a tensor made
        directly); a nested model's call is one call. Tensors made directly and
        fed to a layer have no call, so no link.

    Example:
        >>> from engine import Input
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> y = Dense(2, name="d")(Dense(4, name="h")(x))
        >>> [call.call_name for call in ancestry(y).calls]
        ['x[0]', 'h[0]', 'd[0]']
    """
    graph = ModelGraph()
    layer, node_index, _ = tensor._keras_history or (None, 0, 0)
    if layer is None:
        return graph
    made = {}  # id(node) -> its Call, made once all its parents have one
    stack = [(layer.inbound_nodes[node_index], False)]
    while stack:
        node, parents_done = stack.pop()
        if id(node) in made:
            continue
        if not parents_done:
            stack.append((node, True))
            stack.extend((parent, False) for parent in node.parent_nodes if id(parent) not in made)
            continue
        call = made[id(node)] = Call(node, None, node.input_tensors)
        graph.calls.append(call)
        for index, read in enumerate(node.input_tensors):
            source, source_index, _ = read._keras_history
            if source is not None:
                _link(graph, (made[id(source.inbound_nodes[source_index])], read), call, (node, index))
    return graph


def _input_calls(graph, plan, container):
    """One Call per Node that makes the plan's inputs (an InputLayer each, as a
    rule; two inputs may come from one call of a multi-output layer)."""
    made, calls = {}, []
    for tensor in plan.inputs:
        layer, node_index, _ = tensor._keras_history
        node = layer.inbound_nodes[node_index]
        if id(node) not in made:
            made[id(node)] = Call(node, container, [])
            graph.calls.append(made[id(node)])
        calls.append(made[id(node)])
    return calls


def _link(graph, source, target, reader):
    source_call, tensor = source
    graph.links.append(Link(source_call, target, tensor, reader))


def _no_plan_message(model):
    name = getattr(model, "name", None)
    if isinstance(model, Sequential):
        return (
            f"Sequential model {name!r} has no input shape yet, so it has no graph of layer calls "
            "to read. Add an Input first, pass input_shape= to its first layer, or call "
            "model.build(input_shape)."
        )
    return (
        f"Expected a functional model (built with Model(inputs, outputs), or a Sequential model), "
        f"whose graph of layer calls can be read, but received {type(model).__name__} {name!r}, "
        "which has no execution plan. Build a functional model from Input tensors instead."
    )
