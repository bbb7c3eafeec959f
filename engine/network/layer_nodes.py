"""What a layer's symbolic calls recorded: its Nodes, and the inputs and outputs of its only call.

``NodeQueries`` is a part of ``engine.network.layer.Layer``, which inherits it.
"""

from engine import tree


class NodeQueries:
    """The graph queries of ``Layer``: ``inbound_nodes``, ``outbound_nodes``, ``input``, ``output`` and their shapes."""

    @property
    def inbound_nodes(self):
        """The Nodes of this layer's symbolic calls, one per call, in order."""
        return self._inbound_nodes

    @property
    def outbound_nodes(self):
        """The Nodes of the calls that read this layer's outputs."""
        return self._outbound_nodes

    def _only_node(self, attribute):
        if not self._inbound_nodes:
            raise ValueError(
                f"Layer {self.name!r} has never been called on a symbolic tensor, so it has no {attribute}."
            )
        if len(self._inbound_nodes) > 1:
            raise ValueError(
                f"Layer {self.name!r} has been called {len(self._inbound_nodes)} times, so its "
                f"{attribute} is ambiguous. Use layer.inbound_nodes[i].input_tensors or "
                ".output_tensors for call number i."
            )
        return self._inbound_nodes[0]

    @property
    def input(self):
        """The input tensor(s) of the layer's only symbolic call (an error when called never or twice)."""
        node = self._only_node("input")
        return _unwrap(node.input_tensors)

    @property
    def output(self):
        """The output tensor(s) of the layer's only symbolic call (an error when called never or twice)."""
        node = self._only_node("output")
        return node.outputs

    @property
    def input_shape(self):
        """The shape(s) of ``input``."""
        return tree.map_structure(lambda t: t.shape, self.input)

    @property
    def output_shape(self):
        """The shape(s) of ``output``."""
        return tree.map_structure(lambda t: t.shape, self.output)


def _unwrap(tensors):
    return tensors[0] if len(tensors) == 1 else list(tensors)
