"""Qualified names: one name for every layer, call and tensor of a model, at any depth.

- a layer: its name prefixed by the names of the nested models that hold it,
  outermost first, joined by ``/``: ``"block/inner/conv"``. The model's own
  name is never part of a path, so two nested models may hold layers of one name.
- a call (Node): ``"<layer path>[k]"``, k the Node's index in the layer's
  ``inbound_nodes`` (the ``node_index`` of ``_keras_history``): ``"shared[1]"``.
- an output tensor of a call: ``"<call>[i]"``, i its position among the Node's
  outputs: ``"shared[1][0]"``. An input tensor is ``"<input name>[0][0]"`` or
  just its name.

The views (summary, plot_model, the HTML viewer, to_networkx) and the editing
functions (extract, surgery, diff, to_python) name things with these paths and
resolve them here. The views key a call inside a nested model called several
times by the calls that contain it (``"block[1]/dense[0]"``): ``find_node`` and
``find_tensor`` accept those keys too (every call of ``block`` runs the same Node).

Names are read off the models' execution plans each time (no cache a change to a
Sequential could make stale); a model without a plan (subclassed, or a Sequential
with no input shape yet) contributes its ``layers``.
"""

import difflib
import re
import sys

from engine import extensions
from engine.network.functional import functional_of
from engine.network.keras_tensor import KerasTensor
from engine.network.model import Model
from engine.network.node import Node

_CALL_SUFFIX = re.compile(r"^(.*)\[(\d+)\]$")
_INDICES = re.compile(r"(\[\d+\])+$")  # the call and output indices ending a path


def layer_paths(model) -> dict:
    """Every layer of ``model`` at every depth by qualified name, in plan order.

    A nested model comes right before the layers it holds (``"block"``, then
    ``"block/conv"``). A layer reached by two paths (a layer shared between a
    model and a model nested in it) is listed under both.

    Args:
        model: a model (functional, Sequential or subclassed).

    Returns:
        A dict from path to layer.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> inner = Model(x, Dense(2, name="dense")(x), name="inner")
        >>> z = Input(shape=(3,), name="z")
        >>> outer = Model(z, Dense(1, name="dense")(inner(z)), name="outer")
        >>> list(layer_paths(outer))
        ['z', 'inner', 'inner/x', 'inner/dense', 'dense']
    """
    paths = {}
    for path, layer in _walk_layers(model):
        paths.setdefault(path, layer)
    return paths


def node_paths(model) -> dict:
    """Every call (Node) of ``model``'s graph at every depth by qualified name
    (``"<layer path>[k]"``), in plan order; for a nested model, its own call
    comes right before the calls inside it.

    Args:
        model: a model (functional, Sequential or subclassed).

    Returns:
        A dict from path to Node.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense, add
        >>> a, b = Input(shape=(3,), name="a"), Input(shape=(3,), name="b")
        >>> shared = Dense(2, name="shared")
        >>> model = Model([a, b], add([shared(a), shared(b)], name="sum"))
        >>> list(node_paths(model))
        ['a[0]', 'b[0]', 'shared[0]', 'shared[1]', 'sum[0]']
    """
    paths = {}
    for path, node in _walk_nodes(model):
        paths.setdefault(path, node)
    return paths


def find_layer(model, path: str):
    """Returns the layer of ``model`` at ``path`` (``"block/inner/conv"``).

    Args:
        model: a model.
        path: the layer's qualified name.

    Returns:
        The layer.

    Raises:
        ValueError: no layer at ``path`` (the message names the closest paths).

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> inner = Model(x, Dense(2, name="mid")(x), name="inner")
        >>> z = Input(shape=(3,), name="z")
        >>> outer = Model(z, inner(z), name="outer")
        >>> find_layer(outer, "inner/mid").units
        2
    """
    paths = layer_paths(model)
    if path in paths:
        return paths[path]
    raise ValueError(_missing("layer", model, path, paths))


def find_node(model, path: str) -> Node:
    """Returns the call (Node) of ``model`` at ``path`` (``"shared[1]"``,
    ``"block/conv[0]"``, or a view's key such as ``"block[1]/conv[0]"``).

    Args:
        model: a model.
        path: the call's qualified name.

    Returns:
        The Node.

    Raises:
        ValueError: no call at ``path`` (the message names the closest paths).

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense, add
        >>> a, b = Input(shape=(3,), name="a"), Input(shape=(3,), name="b")
        >>> shared = Dense(2, name="shared")
        >>> model = Model([a, b], add([shared(a), shared(b)]))
        >>> find_node(model, "shared[1]") is shared.inbound_nodes[1]
        True
    """
    paths = node_paths(model)
    found = _lookup(paths, path, model)
    if found is None:
        raise ValueError(_missing("call", model, path, paths))
    return found


def find_tensor(model, path: str) -> KerasTensor:
    """Returns the symbolic tensor of ``model`` at ``path``: output ``i`` of a
    call, ``"shared[1][0]"``, or an input of the model (or of a nested model,
    ``"block/x"``) by its name.

    Args:
        model: a model.
        path: the tensor's qualified name.

    Returns:
        The KerasTensor.

    Raises:
        ValueError: no tensor at ``path`` (the message names the closest paths).

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> y = Dense(2, name="d")(x)
        >>> model = Model(x, y)
        >>> find_tensor(model, "d[0][0]") is y, find_tensor(model, "x") is x
        (True, True)
    """
    nodes = node_paths(model)
    match = _CALL_SUFFIX.match(path)
    if match:
        node = _lookup(nodes, match.group(1), model)
        index = int(match.group(2))
        if node is not None and index < len(node.output_tensors):
            return node.output_tensors[index]
    inputs = dict(_input_names(model))
    if path in inputs:
        return inputs[path]
    known = [f"{call}[{i}]" for call, node in nodes.items() for i in range(len(node.output_tensors))]
    raise ValueError(_missing("tensor", model, path, known + list(inputs)))


def path_of(model, item) -> str:
    """The qualified name of a layer, a Node or a KerasTensor reached from ``model``.

    Args:
        model: a model.
        item: a layer, a Node or a KerasTensor of the model's graph (at any depth).

    Returns:
        ``"block/conv"`` for a layer (its first path in plan order, for a layer
        reached by two), ``"block/conv[0]"`` for a Node, ``"block/conv[0][0]"`` for a tensor.

    Raises:
        ValueError: ``item`` is not part of ``model``.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> inner = Model(x, Dense(2, name="d")(x), name="inner")
        >>> z = Input(shape=(3,), name="z")
        >>> outer = Model(z, inner(z), name="outer")
        >>> path_of(outer, inner.layers[1]), path_of(outer, inner.outputs[0]), path_of(outer, outer.outputs[0])
        ('inner/d', 'inner/d[0][0]', 'inner[0][0]')
    """
    if isinstance(item, KerasTensor):
        history = item._keras_history
        if history is not None and history.layer is not None:
            node = history.layer.inbound_nodes[history.node_index]
            for path, candidate in _walk_nodes(model):
                if candidate is node:
                    return f"{path}[{history.tensor_index}]"
        what = f"Tensor {item.name!r}"
    elif isinstance(item, Node):
        for path, candidate in _walk_nodes(model):
            if candidate is item:
                return path
        what = f"Node {item!r}"
    else:
        for path, candidate in _walk_layers(model):
            if candidate is item:
                return path
        what = f"Layer {getattr(item, 'name', item)!r} ({type(item).__name__})"
    raise ValueError(
        f"{what} is not part of model {model.name!r}: no layer, call or tensor reached from its inputs, at any "
        "depth, is it. Pass a layer, Node or tensor of this model's graph (model.layers, layer.inbound_nodes, "
        "layer.output)."
    )


def _plan_of(layer):
    """The layer's ExecutionPlan, or None (a layer, a subclassed model, a
    Sequential model with no input shape yet)."""
    functional = functional_of(layer)
    return None if functional is None else functional.plan


def _children(layer):
    """The layers a model holds, in plan order (its InputLayers included)."""
    plan = _plan_of(layer)
    if plan is not None:
        return plan.layers
    return layer.layers if isinstance(layer, Model) else []


def _walk_layers(model):
    """Yields ``(path, layer)`` depth first, a nested model before its layers."""
    stack = [("", list(reversed(_children(model))))]
    while stack:
        prefix, pending = stack[-1]
        if not pending:
            stack.pop()
            continue
        layer = pending.pop()
        path = prefix + layer.name
        yield path, layer
        inner = _children(layer)
        if inner:
            stack.append((path + "/", list(reversed(inner))))


def _plan_nodes(plan):
    """The Nodes of a plan: those making its inputs, then its steps."""
    nodes, seen = [], set()
    for tensor in plan.inputs:
        layer, node_index, _ = tensor._keras_history
        node = layer.inbound_nodes[node_index]
        if id(node) not in seen:
            seen.add(id(node))
            nodes.append(node)
    return nodes + [step.node for step in plan.steps if id(step.node) not in seen]


def _nodes_of(layer):
    """The calls inside a model: its plan's Nodes, or for a model without a
    plan every call of the layers it holds."""
    plan = _plan_of(layer)
    if plan is not None:
        return _plan_nodes(plan)
    return [node for child in _children(layer) for node in child.inbound_nodes]


def _walk_nodes(model):
    """Yields ``(path, node)`` depth first, a nested model's call before the
    calls inside it (those once, however often the model is called)."""
    stack = [("", list(reversed(_nodes_of(model))))]
    expanded = set()  # (prefix, id(model)): a nested model called twice is entered once
    while stack:
        prefix, pending = stack[-1]
        if not pending:
            stack.pop()
            continue
        node = pending.pop()
        layer = node.outbound_layer
        path = f"{prefix}{layer.name}"
        yield f"{path}[{node.output_tensors[0]._keras_history.node_index}]", node
        if (prefix, id(layer)) not in expanded:
            expanded.add((prefix, id(layer)))
            inner = _nodes_of(layer)
            if inner:
                stack.append((path + "/", list(reversed(inner))))


def _input_names(model):
    """Yields ``(prefix + input name, tensor)`` for the inputs of the model and of its nested models."""
    plan = _plan_of(model)
    if plan is not None:
        for tensor in plan.inputs:
            yield tensor.name, tensor
    for path, layer in _walk_layers(model):
        plan = _plan_of(layer)
        if plan is not None:
            for tensor in plan.inputs:
                yield f"{path}/{tensor.name}", tensor


def _lookup(paths, path, model):
    """``paths[path]``, also for a view's key that names the calls of the nested
    models on the way (``"block[1]/conv[0]"``, when ``block[1]`` is a call)."""
    if path in paths:
        return paths[path]
    parts = path.split("/")
    plain = []
    for depth, part in enumerate(parts[:-1]):
        match = _CALL_SUFFIX.match(part)
        if match is None:
            return None
        plain.append(match.group(1))
        if "/".join(plain[:depth] + [part]) not in paths:
            return None
    return paths.get("/".join(plain + parts[-1:]))


def closest_paths(path: str, known, n: int = 5) -> list:
    """The paths of ``known`` closest to ``path``, for an error: those of the
    same layer first (its other calls, the layer inside nested models, best
    match first), then the closest by ``difflib``.

    Args:
        path: a path that names nothing.
        known: the existing paths.
        n: how many to return at most.

    Returns:
        A list of paths.

    Example:
        >>> closest_paths("mid", ["x", "inner/x", "inner/mid", "mod"])
        ['inner/mid', 'mod']
    """
    known = list(known)
    layer = _INDICES.sub("", path)
    tail = layer.rsplit("/", 1)[-1]
    same_name = [p for p in known if _INDICES.sub("", p) == layer or _INDICES.sub("", p).endswith("/" + tail)]
    same_name.sort(key=lambda p: -difflib.SequenceMatcher(None, path, p).ratio())
    close = difflib.get_close_matches(path, known, n=n, cutoff=0.6)
    return (same_name + [p for p in close if p not in same_name])[:n]


def _missing(what, model, path, known):
    """The message for a path that names nothing: the closest existing paths."""
    known = list(known)
    closest = closest_paths(path, known)
    if closest:
        hint = "Closest: " + ", ".join(repr(p) for p in closest) + "."
    else:
        shown = ", ".join(repr(p) for p in known[:10])
        hint = f"Existing {what} paths include: {shown}{', ...' if len(known) > 10 else ''}." if known else (
            f"The model has no {what}s yet.")
    return (f"No {what} {path!r} in model {model.name!r}. {hint} A {what} path names the nested models that hold "
            "it, outermost first, without the model's own name: 'block/inner/conv' for a layer, "
            "'block/inner/conv[0]' for its first call, 'block/inner/conv[0][0]' for that call's first output.")


extensions.provide("qualified_names", sys.modules[__name__])  # Model.get_layer, get_node, get_tensor by path
