"""extract: a functional model made of any part of another, sharing its layers.

The part is given by the tensors it starts and ends at, anywhere in the graph:
inside nested models, at the second call of a shared layer, or in the middle
(the graph is cut there and new ``Input`` tensors take the cut tensors' place).

A nested model stays a nested model: for tensors inside it, the extracted
model calls a model of the same name made of the part of it that is needed
(extracted the same way, to any depth), so qualified names are kept
(``"backbone/conv2"`` in both) and the result saves like any model.

When the part starts at the model's own inputs and ends in its own graph, the
extracted model reuses the model's calls, as ``Model(model.input, tensor)``
does in Keras. Otherwise the layers are called again on new ``Input`` tensors,
in plan order, each with the arguments of its original call (for a shared
layer, the call the path goes through): as Keras' ``clone_graph_nodes`` does,
this adds a call (Node) to each layer reused.
"""

import re

from engine import tree
from engine.network.functional import Functional, functional_of
from engine.network.input_layer import Input, InputLayer
from engine.network.keras_tensor import KerasTensor
from engine.network.qualified_names import node_paths, path_of
from engine.network.requested_outputs import plan_between, resolve_tensor


def extract(model: Functional, inputs=None, outputs=None) -> Functional:
    """Returns the part of ``model`` between ``inputs`` and ``outputs`` as a new
    functional model made of the same layers (weights shared, not copied).

    Args:
        model: a functional or Sequential model.
        inputs: where the part starts: KerasTensors of the graph or their
            qualified names (``"block/conv[0][0]"``, ``"shared[1][0]"``, a
            layer path for its only call's only output), one or in a list,
            tuple or dict; by default the model's inputs. A tensor that is not
            an input of the model is replaced by a new ``Input`` of its shape
            and dtype, named after its qualified name (``block_conv_0_0``).
        outputs: where the part ends, given the same way; by default the
            model's outputs.

    Returns:
        A Functional model with the structure of ``inputs`` and ``outputs``.

    Raises:
        ValueError: an unknown name (the message names the closest paths), an
            ambiguous layer path, or an output that needs a tensor which is not
            among ``inputs`` (the message names it and the layers in between).

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> inner = Model(x, Dense(2, name="last")(Dense(4, name="hidden")(x)), name="block")
        >>> z = Input(shape=(3,), name="z")
        >>> model = Model(z, Dense(1, name="head")(inner(z)))
        >>> hidden = extract(model, outputs="block/hidden[0][0]")
        >>> [layer.name for layer in hidden.layers], hidden.get_layer("block/hidden") is inner.get_layer("hidden")
        (['z', 'block'], True)
        >>> tail = extract(model, inputs="block[0][0]")
        >>> tail.input_names, tail.get_layer("head") is model.get_layer("head")
        (['block_0_0'], True)
        >>> data = np.ones((2, 3), "float32")
        >>> bool(np.allclose(tail(inner(data)), model(data)))
        True
    """
    if functional_of(model) is None:
        raise ValueError(
            f"extract() takes a functional or Sequential model, with a graph to take a part of; received "
            f"{getattr(model, 'name', model)!r} ({type(model).__name__}). A subclassed model's call() is Python "
            "code: build it with the functional API to extract parts of it."
        )
    inputs = model.input if inputs is None else inputs
    outputs = model.output if outputs is None else outputs
    input_tensors = [resolve_tensor(model, item) for item in tree.flatten(inputs)]
    output_tensors = [resolve_tensor(model, item) for item in tree.flatten(outputs)]
    new_inputs, new_outputs = _part(model, input_tensors, output_tensors, model)
    return Functional(tree.pack_as(inputs, new_inputs), tree.pack_as(outputs, new_outputs),
                      name=f"{model.name}_extract")


def _part(model, inputs, outputs, root):
    """The flat input and output tensors of a graph computing ``outputs`` from
    ``inputs`` (flat tensors of ``model``'s graph, at any depth) with
    ``model``'s layers; ``root`` is the model ``extract`` was given (it names
    new Inputs)."""
    own = {id(tensor) for tensor in model.plan.tensors}
    holders = _nested_holders(model, own)
    if any(id(tensor) in holders for tensor in inputs):
        return _part_inside(model, inputs, outputs, holders, root)
    requests = {}  # id(call of a nested model) -> (that call, the tensors asked of the model)
    for tensor in outputs:
        if id(tensor) in holders:
            node = _only_call(model, tensor, holders[id(tensor)], root)
            requests.setdefault(id(node), (node, []))[1].append(tensor)
    fed = [tensor for node, _ in requests.values() for tensor in node.input_tensors]
    given = ", ".join(_describe(root, tensor) for tensor in inputs)
    plan = plan_between(model, inputs, [t for t in outputs if id(t) not in holders] + fed,
                        f"Cannot extract from model {root.name!r} the part starting at inputs ({given}); pass "
                        "inputs= that every path to the outputs goes through, or leave inputs= at the model's inputs")
    model_inputs = {id(tensor) for tensor in model.plan.inputs}
    if not requests and all(id(tensor) in model_inputs for tensor in inputs):
        return inputs, outputs  # the model's own calls
    new_inputs = [_input_like(root, tensor, id(tensor) in model_inputs) for tensor in inputs]
    values = {id(old): new for old, new in zip(inputs, new_inputs)}
    for step in plan.steps:
        asked = requests.pop(id(step.node), (None, []))[1]
        layer = _nested_part(step.layer, list(step.layer.outputs) + asked, root) if asked else step.layer
        _call_again(layer, step.node, asked, values)
    for node, asked in requests.values():
        _call_again(_nested_part(node.outbound_layer, asked, root), node, asked, values, own_outputs=False)
    return new_inputs, [values[id(tensor)] for tensor in outputs]


def _part_inside(model, inputs, outputs, holders, root):
    """The part of a nested model, for inputs cut inside it: every input and
    output must be inside the same call of it."""
    calls = {id(holders.get(id(tensor), [None])[0]) for tensor in inputs + outputs}
    if len(calls) > 1 or any(id(tensor) not in holders for tensor in outputs):
        inner = next(tensor for tensor in inputs if id(tensor) in holders)
        nested = holders[id(inner)][0].outbound_layer
        raise ValueError(
            f"Cannot extract from model {root.name!r}: input {path_of(root, inner)!r} is inside nested model "
            f"{nested.name!r}, but not every input and output is inside that same call of it (a nested model is one "
            f"step of the graph around it). Extract from the nested model itself, "
            f"extract(model.get_layer({path_of(root, nested)!r}), inputs=..., outputs=...), or start at tensors "
            "outside it."
        )
    node = _only_call(model, inputs[0], holders[id(inputs[0])], root)
    return _part(node.outbound_layer, inputs, outputs, root)


def _nested_holders(model, own):
    """``{id(tensor): [calls]}``: for each tensor inside a nested model (at any
    depth) and not of ``model``'s own graph, the steps of ``model``'s plan that
    call the nested model holding it."""
    holders = {}
    for step in model.plan.steps:
        if functional_of(step.layer) is not None:
            for node in node_paths(step.layer).values():
                for tensor in node.output_tensors:
                    if id(tensor) not in own:
                        holders.setdefault(id(tensor), []).append(step.node)
    return holders


def _only_call(model, tensor, calls, root):
    """The one call of a nested model that holds ``tensor``."""
    if len(calls) == 1:
        return calls[0]
    nested = calls[0].outbound_layer
    names = ", ".join(f"{nested.name}[{nested.inbound_nodes.index(call)}]" for call in calls)
    raise ValueError(
        f"Tensor {path_of(root, tensor)!r} is inside nested model {nested.name!r}, which model {model.name!r} calls "
        f"{len(calls)} times ({names}), so which call's value is meant is ambiguous. Extract from the nested model "
        f"itself: extract(model.get_layer({path_of(root, nested)!r}), ...)."
    )


def _nested_part(nested, outputs, root):
    """A model named as ``nested`` and taking its inputs, computing ``outputs`` (flat tensors inside it)."""
    new_inputs, new_outputs = _part(nested, nested.inputs, outputs, root)
    return Functional(tree.pack_as(nested.input, new_inputs), new_outputs, name=nested.name)


def _call_again(layer, node, asked, values, own_outputs=True):
    """Calls ``layer`` with the arguments of ``node``, its tensors replaced by
    their ``values`` (new tensors by id of the old), and records the new values
    of the node's outputs (when ``own_outputs``) and of ``asked``."""
    args, kwargs = tree.map_structure(
        lambda leaf: values[id(leaf)] if isinstance(leaf, KerasTensor) else leaf, (node.call_args, node.call_kwargs))
    made = layer(*args, **kwargs)
    made = [made] if isinstance(made, KerasTensor) else tree.flatten(made)
    olds = (list(node.output_tensors) if own_outputs else []) + list(asked)
    for old, new in zip(olds, made):
        values[id(old)] = new


def _input_like(model, tensor, is_model_input):
    """A new Input of ``tensor``'s shape and dtype: named as the model's input
    it stands for, or after the qualified name of the tensor it cuts at."""
    layer = tensor._keras_history.layer
    if is_model_input:
        return Input(batch_shape=tensor.shape, dtype=tensor.dtype, name=tensor.name,
                     optional=isinstance(layer, InputLayer) and layer.optional)
    name = re.sub(r"\W+", "_", path_of(model, tensor)).strip("_")
    return Input(batch_shape=tensor.shape, dtype=tensor.dtype, name=name)


def _describe(model, tensor):
    """A tensor by its qualified name, or by its own name when the model does not hold it."""
    try:
        return repr(path_of(model, tensor))
    except ValueError:
        return repr(tensor.name)
