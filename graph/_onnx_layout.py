"""The exporter's clean-up pass: transposes moved down the graph until they cancel.

Converters of channels-last layers wrap their channels-first operator in two
transposes, so a Conv -> BatchNormalization -> ReLU -> Conv -> Add stack
comes out with a pair between every two layers. The pass walks the nodes in
order and holds each transpose back instead of writing it ("pending"): a
transpose of a pending value composes with it (and disappears when the two
compose to the identity), and an elementwise operator (Relu, Clip, Add of a
residual block whose inputs carry the same transpose, Mul by a constant that
is re-broadcast, ...) or a Concat (axis remapped) runs on the untransposed
values and passes the transpose on to its output. A pending value is written
as a Transpose only where an operator needs it as it is (a Flatten, a graph
output), once, under its own name, so its consumers need no renaming.
"""

import numpy as np

# Operators that work value by value: a transpose of every tensor input commutes with them.
_ELEMENTWISE = frozenset({
    "Abs", "Add", "And", "Cast", "Ceil", "Clip", "Div", "Elu", "Equal", "Erf", "Exp", "Floor", "Greater",
    "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "LeakyRelu", "Less", "LessOrEqual", "Log", "Max",
    "Mean", "Min", "Mod", "Mul", "Neg", "Not", "Or", "Pow", "PRelu", "Reciprocal", "Relu", "Round", "Selu",
    "Sigmoid", "Sign", "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tanh", "Where", "Xor", "Gelu",
})


class _Node:
    """One ONNX node before it is made a NodeProto (this pass edits these)."""

    __slots__ = ("op_type", "inputs", "outputs", "name", "domain", "attributes")

    def __init__(self, op_type, inputs, outputs, name, domain, attributes):
        self.op_type = op_type
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.name = name
        self.domain = domain
        self.attributes = attributes


def clean_transposes(graph, outputs):
    """Rewrites ``graph.nodes`` with transposes moved and cancelled; returns the
    names of ``outputs`` afterwards (a value that became another's alias is
    renamed to it). Initializers no node reads any more are dropped."""
    pass_ = _Pass(graph)
    for node in graph.nodes:
        pass_.visit(node)
    outputs = [pass_.real(pass_.alias.get(name, name)) for name in outputs]
    nodes = _drop_unused(pass_.written, outputs)
    read = {name for node in nodes for name in node.inputs}
    for name in [name for name in graph.initializers if name not in read]:
        del graph.initializers[name]
    graph.nodes = nodes
    return outputs


class _Pass:
    def __init__(self, graph):
        self.graph = graph
        self.written = []
        self.pending = {}  # value -> (untransposed value, perm, name of the Transpose that would write it)
        self.materialized = set()
        self.alias = {}
        self._rebroadcast = {}

    def real(self, name):
        """``name`` as a written tensor: its pending Transpose is written on first need."""
        if name in self.pending and name not in self.materialized:
            source, perm, node_name = self.pending[name]
            self.written.append(_Node("Transpose", [source], [name], node_name, "", {"perm": perm}))
            self.materialized.add(name)
        return name

    def visit(self, node):
        node.inputs = [self.alias.get(name, name) for name in node.inputs]
        if node.op_type == "Transpose" and not node.domain:
            self._transpose(node)
        elif not node.domain and len(node.outputs) == 1 and (
                node.op_type in _ELEMENTWISE and self._push_elementwise(node)
                or node.op_type == "Concat" and self._push_concat(node)):
            return
        else:
            node.inputs = [self.real(name) for name in node.inputs]
            self.written.append(node)

    def _transpose(self, node):
        source, perm = node.inputs[0], list(node.attributes["perm"])
        if source in self.pending:
            source, first, _ = self.pending[source]
            perm = [first[axis] for axis in perm]
        if perm == sorted(perm):
            self.alias[node.outputs[0]] = source
        else:
            self.pending[node.outputs[0]] = (source, perm, node.name)

    def _pushed(self, node, inputs, perm, **attributes):
        """Writes ``node`` on untransposed ``inputs``; its output becomes pending."""
        output = node.outputs[0]
        moved = self.graph.unique(f"{output}:moved")
        node.inputs, node.outputs = inputs, [moved]
        node.attributes.update(attributes)
        self.written.append(node)
        self.pending[output] = (moved, perm, self.graph.unique(f"{node.name}/Transpose"))
        return True

    def _push_elementwise(self, node):
        perms = {tuple(self.pending[name][1]) for name in node.inputs if name in self.pending}
        if len(perms) != 1:
            return False
        perm = list(perms.pop())
        inputs = []
        for name in node.inputs:
            if name in self.pending:
                inputs.append(self.pending[name][0])
            elif name == "":
                inputs.append(name)
            else:
                moved = self._constant_for(name, perm)
                if moved is None:
                    return False
                inputs.append(moved)
        return self._pushed(node, inputs, perm)

    def _constant_for(self, name, perm):
        """The initializer ``name`` laid out so that, broadcast against the
        untransposed values, it meets each value it met before; None when it is
        not an initializer or has more axes than the values."""
        array = self.graph.initializers.get(name)
        if array is None or array.ndim > len(perm):
            return None
        if array.size == 1:
            return name
        key = (name, tuple(perm))
        if key not in self._rebroadcast:
            full = array.reshape((1,) * (len(perm) - array.ndim) + array.shape)
            inverse = np.argsort(perm)
            self._rebroadcast[key] = self.graph.store(f"{name}:moved", np.ascontiguousarray(full.transpose(inverse)))
        return self._rebroadcast[key]

    def _push_concat(self, node):
        entries = [self.pending.get(name) for name in node.inputs]
        if None in entries or len({tuple(perm) for _, perm, _ in entries}) != 1:
            return False
        perm = entries[0][1]
        axis = node.attributes["axis"] % len(perm)
        return self._pushed(node, [source for source, _, _ in entries], perm, axis=perm[axis])


def _drop_unused(nodes, outputs):
    """The nodes some output depends on, in order."""
    used = set(outputs)
    kept = []
    for node in reversed(nodes):
        if any(output in used for output in node.outputs):
            used.update(node.inputs)
            kept.append(node)
    return kept[::-1]
