"""Tensors asked of a functional model by name or by tensor, and the plan computing them.

``model.predict(x, outputs=...)`` and ``model(x, outputs=...)`` return
intermediate values; ``graph.extract`` builds a model from any part of the
graph. All three take a KerasTensor of the graph or a qualified name
(engine/network/qualified_names.py): a tensor (``"block/conv[0][0]"``,
``"shared[1][0]"``, an input's name), or a layer path meaning its only call's
only output (``"block/conv"``).

The values come from an ExecutionPlan from the model's inputs to the requested
tensors, made once per request and kept on the model: one walk computes every
requested tensor, runs only the steps they need and frees the rest as the
model's own plan does. A plan maps a tensor made inside a nested model to the
call of that model the inputs reach (``plan._nested_calls``), so tensors at any
depth need no extracted model.
"""

import threading

from engine import extensions, tree
from engine.network.functional import functional_of
from engine.network.keras_tensor import KerasTensor
from engine.network.plan import ExecutionPlan
from engine.network.qualified_names import _CALL_SUFFIX, find_tensor, layer_paths, node_paths

# Requests remembered per model: a loop asking for a few sets of tensors resolves each set once.
_CACHED_REQUESTS = 16
_cache_lock = threading.Lock()


def resolve_tensor(model, item) -> KerasTensor:
    """The symbolic tensor of ``model`` that ``item`` names.

    Args:
        model: a functional or Sequential model.
        item: a KerasTensor (returned as it is), or a qualified name: a tensor
            (``"block/conv[0][0]"``, ``"shared[1][0]"``, an input's name) or
            a layer path for its only call's only output (``"block/conv"``).

    Returns:
        The KerasTensor.

    Raises:
        ValueError: no such tensor (the message names the closest paths), or a
            layer path whose layer has several calls or outputs (it names them).
        TypeError: ``item`` is neither a string nor a KerasTensor.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> y = Dense(2, name="d")(x)
        >>> model = Model(x, y)
        >>> resolve_tensor(model, "d") is resolve_tensor(model, "d[0][0]") is y
        True
    """
    if isinstance(item, KerasTensor):
        return item
    if not isinstance(item, str):
        raise TypeError(
            f"Expected a KerasTensor or a qualified name ('block/conv[0][0]', 'shared[1][0]', 'block/conv') of "
            f"a tensor of model {model.name!r}, received {type(item).__name__}: {item!r}."
        )
    try:
        return find_tensor(model, item)
    except ValueError as missing:
        if item not in layer_paths(model):
            raise missing from None
    calls = {path: node for path, node in node_paths(model).items()
             if _CALL_SUFFIX.match(path) and _CALL_SUFFIX.match(path).group(1) == item}
    outputs = [f"{path}[{i}]" for path, node in calls.items() for i in range(len(node.output_tensors))]
    if len(outputs) == 1:
        return calls[next(iter(calls))].output_tensors[0]
    if not calls:
        raise ValueError(f"Layer {item!r} of model {model.name!r} is not called in the model's graph, so it makes "
                         "no tensor. Name a tensor the graph computes: 'layer[k][i]' for output i of call k.")
    made = (f"{len(calls)} calls ({', '.join(map(repr, calls))})" if len(calls) > 1
            else f"one call, {next(iter(calls))!r}, with {len(outputs)} outputs")
    raise ValueError(
        f"Layer path {item!r} of model {model.name!r} is ambiguous: the layer has {made}, so which tensor is "
        f"meant is not clear. Name the tensor: {', '.join(map(repr, outputs))}."
    )


def plan_between(model, inputs, outputs, context: str) -> ExecutionPlan:
    """The ExecutionPlan from ``inputs`` to ``outputs``, flat lists of tensors of
    ``model``'s graph; a ValueError starting with ``context`` when an output
    depends on a tensor that is not among the inputs (the message names it)."""
    try:
        return ExecutionPlan(inputs, outputs)
    except ValueError as error:
        raise ValueError(f"{context}: {error}") from None


def requested_plan(model, outputs) -> ExecutionPlan:
    """The plan computing ``outputs`` (tensors or qualified names of ``model``'s
    graph, one or in lists, tuples and dicts) from the model's inputs; its flat
    outputs follow ``tree.flatten(outputs)``. Made once per request and model
    and kept on the model (a Sequential rebuilt by ``add`` makes new ones).

    Args:
        model: the model asked.
        outputs: the requested tensors or names.

    Returns:
        The ExecutionPlan.

    Raises:
        ValueError: a model without a graph (subclassed), an unknown name, or
            a tensor the model's inputs do not compute.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> model = Model(x, Dense(1, name="out")(Dense(4, name="hidden")(x)))
        >>> requested_plan(model, {"h": "hidden"}).run([np.ones((2, 3), "float32")])[0].shape
        (2, 4)
    """
    functional = functional_of(model)  # a Sequential's is new after add() or pop(): so is the cache
    if functional is None:
        raise ValueError(
            f"outputs= needs a functional or Sequential model, with a graph to name tensors in; model "
            f"{model.name!r} ({type(model).__name__}) has none. A subclassed model's call() is Python code: return "
            "the values you need from it, or build it with the functional API. A Sequential model has a graph "
            "once its input shape is known: call build(input_shape) first."
        )
    leaves = tree.flatten(outputs)
    key = tuple(leaf if isinstance(leaf, str) else id(leaf) for leaf in leaves)
    cache = functional.__dict__.setdefault("_requested_plans", {})
    own_plan = functional.plan
    entry = cache.get(key)
    if entry is not None and entry[0] is own_plan and all(
            isinstance(leaf, str) or leaf is tensor for leaf, tensor in zip(leaves, entry[1])):
        return entry[2]
    tensors = [resolve_tensor(model, leaf) for leaf in leaves]
    plan = plan_between(model, own_plan.inputs, tensors,
                        f"Model {model.name!r} cannot compute the requested outputs from its inputs")
    with _cache_lock:
        if len(cache) >= _CACHED_REQUESTS:
            cache.pop(next(iter(cache)))
        cache[key] = (own_plan, tensors, plan)
    return plan


extensions.provide("requested_plan", requested_plan)  # model(x, outputs=...), model.predict(x, outputs=...)
