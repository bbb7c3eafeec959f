"""to_networkx: a model's graph as a networkx MultiDiGraph, for graph queries.

A MultiDiGraph, because a graph node pair can be linked by several tensors (a
layer fed the same tensor twice, or two outputs of one call): there is one
edge per tensor read, as in plot_model. Every attribute is a string, a number
or a bool, so ``networkx.write_graphml`` can save the graph.
"""

import networkx as nx

from engine import tree
from engine.argument_gradients import by_argument
from engine.keras_tensor import KerasTensor
from graph._format import merged, shapes_text
from graph._walk import LEVELS, walk


def to_networkx(model, level="layer", expand_nested=False) -> nx.MultiDiGraph:
    """Returns the graph of ``model`` as a ``networkx.MultiDiGraph``.

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a built Sequential).
        level: "layer" for one graph node per layer, keyed by its name (a shared
            layer is one node, so its calls may form loops); "node" for one graph
            node per call (Node), keyed like ``dense[1]`` (always acyclic).
        expand_nested: replace nested functional models by their layers, keyed
            by qualified names (``outer/inner/dense``, ``outer[0]/inner[0]/dense[0]``).

    Returns:
        A MultiDiGraph. Graph nodes carry ``name`` (the qualified layer name),
        ``class_name``, ``output_shapes`` (text, calls joined by ``"; "``),
        ``params`` and ``trainable``, plus ``node_index`` at level "node".
        Edges carry the tensor's ``node_index`` and ``tensor_index`` (so that
        it is ``source_layer.inbound_nodes[node_index]``'s output number
        ``tensor_index``), its ``shape`` as text, and ``argument``, the
        parameter of the destination's ``call`` it feeds (``inputs``, or
        ``inputs[1]`` in a list; ``value`` and ``key`` for attention), which
        tells parallel edges apart.

    Example:
        >>> import networkx as nx
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> G = to_networkx(Model(x, Dense(2, name="out")(Dense(4, name="hidden")(x))))
        >>> nx.shortest_path(G, "x", "out")
        ['x', 'hidden', 'out']
    """
    if level not in LEVELS:
        raise ValueError(f"to_networkx expects level in {LEVELS}, received {level!r}.")
    graph = walk(model, expand_nested)
    G = nx.MultiDiGraph(name=model.name)
    for key, calls in graph.vertices(level).items():
        layer = calls[0].layer
        attributes = {
            "name": calls[0].layer_key,
            "class_name": type(layer).__name__,
            "output_shapes": merged(shapes_text(c.outputs) for c in calls),
            "params": layer.count_params(),
            "trainable": layer.trainable,
        }
        if level == "node":
            attributes["node_index"] = calls[0].node_index
        G.add_node(key, **attributes)
    for source, target, link in graph.edges(level):
        history = link.tensor._keras_history
        G.add_edge(source, target, node_index=history.node_index, tensor_index=history.tensor_index,
                   shape=str(link.tensor.shape), argument=_argument_fed(*link.reader))
    return G


def _argument_fed(node, index):
    """The parameter of ``node``'s call that its input tensor number ``index``
    feeds, with the tensor's position when the argument holds several."""
    start = 0
    for name, value in by_argument(node.outbound_layer, node.call_args, node.call_kwargs).items():
        count = sum(isinstance(t, KerasTensor) for t in tree.flatten(value))
        if index < start + count:
            return name if isinstance(value, KerasTensor) else f"{name}[{index - start}]"
        start += count
    raise ValueError(f"Node of layer {node.outbound_layer.name!r} has no input tensor {index}.")
