"""to_networkx: a model's graph as a networkx graph, for graph queries.

By default a DiGraph: one edge per pair of graph nodes that a tensor links,
listing the tensors it stands for, so path queries (``all_simple_paths``) give
each path once. With ``parallel_edges=True`` a MultiDiGraph with one edge per
tensor read, as plot_model draws them (a layer fed the same tensor twice, two
calls of a shared layer feeding one layer, two outputs of one call). Every
attribute is a string, a number or a bool, so ``networkx.write_graphml`` can
save the graph.
"""

import networkx as nx

from graph._format import merged, shapes_text
from graph._walk import LEVELS, walk


def to_networkx(model, level="layer", expand_nested=False, parallel_edges=False) -> nx.DiGraph:
    """Returns the graph of ``model`` as a ``networkx.DiGraph`` (or ``MultiDiGraph``).

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a built Sequential).
        level: "layer" for one graph node per layer, keyed by its name (a shared
            layer is one node, so its calls may form loops); "node" for one graph
            node per call (Node), keyed like ``dense[1]`` (always acyclic).
        expand_nested: replace nested functional models by their layers, keyed
            by their qualified names (``block/inner/dense``, as ``model.get_layer``
            takes them); at level "node" each component is a call
            (``block[0]/inner[0]/dense[0]``, as ``model.get_node`` takes them), so a
            nested model called twice is expanded twice.
        parallel_edges: one edge per tensor read (a MultiDiGraph), instead of one
            edge per linked pair of graph nodes.

    Returns:
        A DiGraph, or a MultiDiGraph with ``parallel_edges``. Graph nodes carry
        ``name`` (the qualified layer name), ``class_name``, ``output_shapes``
        (text, calls joined by ``"; "``), ``params`` and ``trainable``, plus
        ``node_index`` at level "node". An edge per tensor carries its qualified
        name ``tensor`` (``shared[1][0]``, for ``model.get_tensor``), its
        ``node_index`` and ``tensor_index`` (so that it is
        ``source_layer.inbound_nodes[node_index]``'s output number
        ``tensor_index``), its ``shape`` as text, and ``argument``, the
        parameter of the destination's ``call`` it feeds (``inputs``, or
        ``inputs[1]`` in a list; ``value`` and ``key`` for attention). An edge
        of the DiGraph carries ``tensors`` (the qualified names of the tensors
        it stands for, joined by ``"; "``), their ``count``, and their distinct
        ``shape`` and ``argument`` texts joined by ``"; "``.

    Example:
        >>> import networkx as nx
        >>> from engine import Input, Model
        >>> from layers import Dense, add
        >>> a, b = Input(shape=(3,), name="a"), Input(shape=(3,), name="b")
        >>> encoder = Dense(4, name="encoder")
        >>> G = to_networkx(Model([a, b], add([encoder(a), encoder(b)], name="sum")))
        >>> list(nx.all_simple_paths(G, "a", "sum")), G.edges["encoder", "sum"]["tensors"]
        ([['a', 'encoder', 'sum']], 'encoder[0][0]; encoder[1][0]')
        >>> to_networkx(Model([a, b], add([encoder(a), encoder(b)])), parallel_edges=True).number_of_edges()
        4
    """
    if level not in LEVELS:
        raise ValueError(f"to_networkx expects level in {LEVELS}, received {level!r}.")
    graph = walk(model, expand_nested)
    G = (nx.MultiDiGraph if parallel_edges else nx.DiGraph)(name=model.name)
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
    reads = {}  # (source, target) -> the attributes of each tensor read along it
    for source, target, link in graph.edges(level):
        history = link.tensor._keras_history
        read = {"tensor": f"{link.source.layer_key}[{history.node_index}][{history.tensor_index}]",
                "node_index": history.node_index, "tensor_index": history.tensor_index,
                "shape": str(link.tensor.shape), "argument": _argument_fed(*link.reader)}
        if parallel_edges:
            G.add_edge(source, target, **read)
        else:
            reads.setdefault((source, target), []).append(read)
    for (source, target), tensors in reads.items():
        G.add_edge(source, target, tensors="; ".join(r["tensor"] for r in tensors), count=len(tensors),
                   shape=merged(r["shape"] for r in tensors), argument=merged(r["argument"] for r in tensors))
    return G


def _argument_fed(node, index):
    """The parameter of ``node``'s call that its input tensor number ``index``
    feeds, with the tensor's position when the argument holds several."""
    return node.bound_arguments.argument_of(index)
