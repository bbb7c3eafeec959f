"""The order in which Keras 3 lists the operations of a functional model.

Keras names each layer's group in ``model.weights.h5`` by its class and its
rank among the layers of that class in ``model.layers`` (``dense``,
``dense_1``...), and it computes ``model.layers`` from the graph, not from the
config: a depth-first walk back from the outputs numbers the operations, then
they are sorted by depth (longest path to an output) and, within a depth, by
that number. A file Keras loads must therefore name the groups in the order
Keras will find the layers, so this module repeats that walk on our graph.
"""

from engine import tree


def keras_operations(model) -> tuple[list, set]:
    """The operations (layers, op layers, InputLayers) of functional ``model``
    in the order Keras 3's ``Functional`` keeps them, and the nodes of the
    model (``{id(node)}``, InputLayer nodes included).

    Args:
        model: a functional model.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> operations, _ = keras_operations(Model(x, Dense(2)(Dense(4)(x))))
        >>> [type(op).__name__ for op in operations]
        ['InputLayer', 'Dense', 'Dense']
    """
    plan = model.plan
    nodes, first_seen = _walk(plan)
    node_ids = {id(node) for node in nodes}
    node_depth, operation_depth, operations = {}, {}, {}
    for node in reversed(nodes):
        layer = node.outbound_layer
        depth = max(node_depth.setdefault(id(node), 0), operation_depth.get(id(layer), 0))
        operation_depth[id(layer)], node_depth[id(node)] = depth, depth
        operations[id(layer)] = layer
        for parent in _parent_nodes(plan, node):
            if id(parent) in node_ids:
                node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
    for tensor in plan.inputs:  # inputs no output depends on still belong to the model
        layer = tensor._keras_history.layer
        if id(layer) not in operation_depth:
            operation_depth[id(layer)], first_seen[id(layer)], operations[id(layer)] = 0, -1, layer
            node_ids.add(id(layer._inbound_nodes[tensor._keras_history.node_index]))
    ordered = sorted(operations, key=lambda key: (-operation_depth[key], first_seen[key]))
    return [operations[key] for key in ordered], node_ids


def _walk(plan):
    """Keras' depth-first walk from the outputs (``_build_map``), without
    recursion: the nodes from inputs to outputs, and for each operation the
    rank at which the walk first met it."""
    input_ids = {id(tensor) for tensor in plan.inputs}
    finished, first_seen, nodes = set(), {}, []
    for output in tree.flatten(plan.outputs):
        stack = [(output, None)]
        while stack:
            tensor, done_node = stack.pop()
            if done_node is not None:
                finished.add(id(done_node))
                nodes.append(done_node)
                continue
            node = _node_of(plan, tensor)
            if id(node) in finished:
                continue
            if not node.is_input and id(plan._resolve(tensor)) in input_ids:
                finished.add(id(node))
                continue
            first_seen.setdefault(id(node.outbound_layer), len(first_seen))
            stack.append((None, node))
            if not node.is_input:
                stack.extend((t, None) for t in reversed(node.input_tensors))
    return nodes, first_seen


def _node_of(plan, tensor):
    layer, node_index, _ = plan._resolve(tensor)._keras_history
    return layer._inbound_nodes[node_index]


def _parent_nodes(plan, node):
    return [] if node.is_input else [_node_of(plan, tensor) for tensor in node.input_tensors]
