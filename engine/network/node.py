"""One call of a layer on symbolic tensors.

A Node is not the layer: a layer called twice (a shared layer) is one layer
with two Nodes. If the graph linked layers directly, a layer fed its own output
through another layer would be a cycle; linking calls keeps the graph a DAG.
"""

import threading
from typing import NamedTuple

from engine import extensions, tree
from engine.network.argument_gradients import first_argument_name
from engine.network.bound_arguments import BoundArguments, one_tensor_call
from engine.network.keras_tensor import KerasTensor

# Registration reads a layer's node count and then appends, so two threads
# calling one layer would otherwise get the same node index.
_registration_lock = threading.Lock()


class CallArguments(NamedTuple):
    """A call's arguments as Keras' Node shows them: ``args`` and ``kwargs``, tensors in place."""

    args: tuple
    kwargs: dict


class Node:
    """Links the layers that produced ``input_tensors`` to ``outbound_layer``.

    Creating a Node appends it to ``outbound_layer.inbound_nodes`` and to the
    ``outbound_nodes`` of each inbound layer, and stamps ``_keras_history`` on
    each output tensor, all under one lock: layers may be called from several
    threads at once. Layers create Nodes when called on KerasTensors; users
    read them (``layer.inbound_nodes[i]``), they rarely make one.

    Args:
        outbound_layer: the layer that was called.
        call_args: the call's positional arguments.
        call_kwargs: its keyword arguments.
        outputs: the call's symbolic outputs (KerasTensors), in any structure.
        fed_inputs: for a call of a functional model, see ``fed_inputs`` below.

    Raises:
        ValueError: an output that is not a KerasTensor.

    Attributes:
        outbound_layer: the layer that was called.
        call_args, call_kwargs: the call's arguments, tensors left in place.
        bound_arguments: the call's arguments bound to ``call``'s parameters
            (a ``BoundArguments``): per parameter, its structure and its tensors.
        input_tensors: the symbolic tensors among the arguments, flattened.
        output_tensors: the symbolic outputs, flattened; ``outputs`` keeps their structure.
        inbound_layers, node_indices, tensor_indices: per input tensor, its ``_keras_history``.
        fed_inputs: for a call of a functional model, the tensors fed to each of
            the model's inputs, in the order of ``model.inputs`` (None for a layer):
            what maps the nested model's inner inputs to this call's tensors.

    Example:
        >>> from engine import Input
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> dense = Dense(2, name="d")
        >>> y = dense(x)
        >>> node = dense.inbound_nodes[0]
        >>> node
        <Node d <- ['x[0][0]']>
        >>> node.inbound_layers[0].name, node.output_tensors[0] is y, node.parent_nodes[0].is_input
        ('x', True, True)
    """

    # A call on one tensor and nothing else, the common one, keeps only that tensor (``_input``): its arguments,
    # ``input_tensors`` and ``bound_arguments`` are made when read, and ``call_shape`` is shared by all such calls.
    # ``_output_list`` holds the flat outputs of a call with several; a call with one output keeps none. So a layer
    # of a deep graph leaves fewer objects for the garbage collector.
    __slots__ = ("outbound_layer", "_args", "call_kwargs", "_bound", "_input", "outputs", "_output_list",
                 "fed_inputs", "__weakref__")

    def __init__(self, outbound_layer, call_args=(), call_kwargs=None, outputs=(), fed_inputs=None):
        self.outbound_layer = outbound_layer
        self.fed_inputs = fed_inputs
        self.call_kwargs = dict(call_kwargs) if call_kwargs else {}
        if len(call_args) == 1 and not call_kwargs and isinstance(call_args[0], KerasTensor):
            self._args = self._bound = None
            self._input = call_args[0]
            input_tensors = (self._input,)
        else:
            self._args = call_args if type(call_args) is tuple else tuple(call_args)
            self._input = None
            self._bound = BoundArguments(outbound_layer, self._args, self.call_kwargs)
            input_tensors = self._bound.tensors
        self.outputs = outputs
        if isinstance(outputs, KerasTensor):
            self._output_list = None
            output_tensors = (outputs,)
        else:
            self._output_list = output_tensors = tree.flatten(outputs)
            for output in output_tensors:
                if not isinstance(output, KerasTensor):
                    raise ValueError(
                        f"All operation outputs must be tensors: a Node of layer {outbound_layer.name!r} "
                        f"({type(outbound_layer).__name__}) was given a non-tensor output, "
                        f"{type(output).__name__}: {output!r}. A Node records a call on symbolic tensors; its "
                        "outputs are KerasTensors (from compute_output_spec), not values."
                    )

        with _registration_lock:
            node_index = len(outbound_layer._inbound_nodes)
            outbound_layer._inbound_nodes.append(self)
            if len(input_tensors) == 1:
                tensor = input_tensors[0]
                if tensor._node_index is None:
                    tensor._mark_graph_entry()
                if tensor._layer is not None:  # a tensor made directly is an entry point: no inbound layer
                    tensor._layer._outbound_nodes.append(self)
            else:
                seen = {id(None)}
                for tensor in input_tensors:
                    tensor._mark_graph_entry()
                    inbound = tensor._layer
                    if id(inbound) not in seen:
                        seen.add(id(inbound))
                        inbound._outbound_nodes.append(self)
            for tensor_index, tensor in enumerate(output_tensors):
                tensor._set_history(outbound_layer, node_index, tensor_index)

    @property
    def single(self):
        """Whether the call is on one tensor and nothing else (then ``call_shape`` is shared)."""
        return self._args is None

    @property
    def call_args(self):
        """The call's positional arguments, a tuple, tensors in place."""
        return (self._input,) if self._args is None else self._args

    @property
    def input_tensors(self):
        """The symbolic tensors among the arguments, flattened (a new list for a call on one tensor)."""
        return [self._input] if self._args is None else self._bound.tensors

    @property
    def bound_arguments(self):
        """The call's arguments bound to ``call``'s parameters (a ``BoundArguments``, made on first read for a
        call on one tensor)."""
        if self._bound is None:
            self._bound = BoundArguments(self.outbound_layer, (self._input,), self.call_kwargs)
        return self._bound

    @property
    def call_shape(self):
        """What running the call needs of its arguments (``fill_in``, ``route``, the masks' slots): the
        ``bound_arguments``, or for a call on one tensor the ``BoundArguments`` shared by all such calls
        of the same parameter (``engine.network.bound_arguments.one_tensor_call``)."""
        if self._args is None:
            return one_tensor_call(first_argument_name(self.outbound_layer))
        return self._bound

    @property
    def output_tensors(self):
        """The symbolic outputs, flattened (a new list for a call with one output)."""
        return [self.outputs] if self._output_list is None else self._output_list

    @property
    def arguments(self) -> CallArguments:
        """The call's positional and keyword arguments (``.args``, ``.kwargs``), as Keras' ``Node.arguments``."""
        return CallArguments(tuple(self.call_args), dict(self.call_kwargs))

    @property
    def operation(self):
        """Keras 3's name for ``outbound_layer``: the layer this Node is a call of."""
        return self.outbound_layer

    @property
    def inbound_layers(self):
        """Per input tensor, the layer that produced it."""
        return [t._keras_history.layer for t in self.input_tensors]

    @property
    def node_indices(self):
        """Per input tensor, which call of its layer produced it."""
        return [t._keras_history.node_index for t in self.input_tensors]

    @property
    def tensor_indices(self):
        """Per input tensor, which output of that call it is."""
        return [t._keras_history.tensor_index for t in self.input_tensors]

    @property
    def parent_nodes(self):
        """The Nodes that produced this Node's inputs, each once, in input order
        (none for a tensor made directly, which no layer produced)."""
        parents = []
        for tensor in self.input_tensors:
            layer = tensor._layer
            if layer is None:
                continue
            parent = layer._inbound_nodes[tensor._node_index]
            if parent not in parents:
                parents.append(parent)
        return parents

    @property
    def is_input(self):
        """Whether the Node has no input tensors (the Node of an ``Input``)."""
        return self._args is not None and not self._bound.tensors

    def __repr__(self):
        inbound = [t.name if t._keras_history.layer is None else
                   f"{t._keras_history.layer.name}[{t._keras_history.node_index}][{t._keras_history.tensor_index}]"
                   for t in self.input_tensors]
        return f"<Node {self.outbound_layer.name} <- {inbound}>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Notebook display: an HTML card of the call's inbound layers and tensors."""
        return extensions.provided("node_display")(self)
