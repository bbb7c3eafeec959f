"""A functional model as a config, and back.

The config lists the model's layers, each with the calls (``inbound_nodes``) it
makes in this model; every tensor argument is written as the reference
``[layer_name, node_index, tensor_index]`` (the ``_keras_history`` triple, with
node indices counted among the layer's calls inside this model). Rebuilding
creates the layers from the registry and replays the calls; shared layers stay
shared and nested models stay nested.
"""

from collections import deque

from engine import tree
from engine.errors import ModelFormatError
from engine.keras_tensor import KerasTensor
from engine.registry import custom_object_scope, lookup, registered_name


def serialize_layer(layer):
    """``{"class_name", "name", "config", "build_config"}`` for one layer."""
    # An unregistered class is written by its class name; loading it then needs
    # custom_objects={"ClassName": cls}.
    name = registered_name(type(layer)) or type(layer).__name__
    entry = {"class_name": name, "name": layer.name, "config": layer.get_config()}
    if getattr(layer, "_build_shapes", None) is not None:
        entry["build_config"] = {"input_shape": layer._build_shapes}
    return entry


def deserialize_layer(entry, custom_objects=None):
    """Creates a layer from ``serialize_layer``'s output, by registered name."""
    _expect(isinstance(entry, dict), f"a layer entry must be a dict, received {type(entry).__name__}")
    _expect("class_name" in entry and "config" in entry, f"layer entry {entry.get('name')!r} lacks class_name or config")
    cls = lookup(entry["class_name"], custom_objects)
    config = entry["config"]
    _expect(isinstance(config, dict), f"the config of layer {entry.get('name')!r} must be a dict")
    try:
        with custom_object_scope(custom_objects):
            return cls.from_config(config)
    except ModelFormatError:
        raise
    except (TypeError, ValueError, KeyError) as error:
        raise ModelFormatError(f"Cannot create layer {entry.get('name')!r} ({entry['class_name']}) from its config: {error}") from error


def functional_config(model):
    """The config of a functional model (see the module docstring)."""
    plan = model.plan
    for tensor in plan.inputs:
        if type(tensor._keras_history.layer).__name__ != "InputLayer":
            raise ValueError(
                f"Model {model.name!r} takes the intermediate tensor {tensor.name!r} as an input, so its "
                "config cannot be rebuilt. Build the model from Input() tensors to serialize it."
            )
    node_numbers = {}  # id(node) -> its index among the layer's calls in this model
    calls = {}  # id(layer) -> list of nodes
    for step in plan.steps:
        nodes = calls.setdefault(id(step.layer), [])
        node_numbers[id(step.node)] = len(nodes)
        nodes.append(step.node)

    def reference(tensor):
        tensor = plan._resolve(tensor)
        layer, node_index, tensor_index = tensor._keras_history
        node = layer._inbound_nodes[node_index]
        return [layer.name, node_numbers.get(id(node), 0), tensor_index]

    def encode(value):
        if isinstance(value, KerasTensor):
            return {"__tensor__": reference(value)}
        if isinstance(value, (list, tuple)):
            return [encode(v) for v in value]
        if isinstance(value, dict):
            return {k: encode(v) for k, v in value.items()}
        return value

    layer_configs = []
    for layer in plan.layers:
        entry = serialize_layer(layer)
        entry["inbound_nodes"] = [
            {"args": encode(list(node.call_args)), "kwargs": encode(node.call_kwargs)}
            for node in calls.get(id(layer), [])
        ]
        layer_configs.append(entry)
    return {
        "name": model.name,
        "trainable": model.trainable,
        "layers": layer_configs,
        "input_layers": tree.map_structure(reference, model._inputs_struct),
        "output_layers": tree.map_structure(reference, model._outputs_struct),
    }


def functional_from_config(cls, config, make_layer=deserialize_layer):
    """Rebuilds a functional model: creates its layers (``make_layer(entry)``,
    from the registry by default), then replays their calls in an order where
    every call's inputs exist (a work queue, no recursion)."""
    _expect(isinstance(config, dict), "a model config must be a dict")
    for key in ("layers", "input_layers", "output_layers"):
        _expect(key in config, f"the model config lacks {key!r}")
    _expect(isinstance(config["layers"], list), "'layers' must be a list")
    layers, produced = {}, {}  # name -> layer; (name, node, tensor) -> KerasTensor
    pending = deque()
    for entry in config["layers"]:
        _expect(isinstance(entry, dict), f"a layer entry must be a dict, received {type(entry).__name__}")
        layer = make_layer(entry)
        name = entry.get("name", layer.name)
        _expect(name not in layers, f"the layer name {name!r} appears twice")
        layers[name] = layer
        nodes = entry.get("inbound_nodes", [])
        _expect(isinstance(nodes, list), f"inbound_nodes of layer {name!r} must be a list")
        if type(layer).__name__ == "InputLayer":
            produced[(name, 0, 0)] = layer.output
            continue
        for node_number, node in enumerate(nodes):
            _expect(isinstance(node, dict) and "args" in node, f"node {node_number} of layer {name!r} is malformed")
            pending.append((name, node_number, node))

    def lookup_tensor(ref):
        _expect(isinstance(ref, list) and len(ref) == 3, f"a tensor reference must be [layer, node, tensor], received {ref!r}")
        return produced.get((ref[0], ref[1], ref[2]))

    def decode(value, missing):
        if isinstance(value, dict) and "__tensor__" in value:
            tensor = lookup_tensor(value["__tensor__"])
            if tensor is None:
                missing.append(value["__tensor__"])
            return tensor
        if isinstance(value, list):
            return [decode(v, missing) for v in value]
        if isinstance(value, dict):
            return {k: decode(v, missing) for k, v in value.items()}
        return value

    stalled = 0
    next_call = {name: 0 for name in layers}
    while pending:
        name, node_number, node = pending.popleft()
        missing = []
        args = decode(node["args"], missing)
        kwargs = decode(node.get("kwargs", {}), missing)
        if missing or next_call[name] != node_number:
            pending.append((name, node_number, node))
            stalled += 1
            if stalled > len(pending):
                references = [ref for ref in missing] or [[name, node_number]]
                raise ModelFormatError(
                    f"The model config cannot be rebuilt: layer {name!r} call {node_number} needs tensors "
                    f"{references} that no layer produces (a missing layer or node, or a cycle)."
                )
            continue
        stalled = 0
        _expect(isinstance(args, list) and args, f"call {node_number} of layer {name!r} has no inputs")
        try:
            outputs = layers[name](*args, **(kwargs if isinstance(kwargs, dict) else {}))
        except ModelFormatError:
            raise
        except (TypeError, ValueError) as error:
            raise ModelFormatError(f"Replaying call {node_number} of layer {name!r} failed: {error}") from error
        for index, tensor in enumerate(tree.flatten(outputs)):
            produced[(name, node_number, index)] = tensor
        next_call[name] += 1

    def resolve(ref):
        tensor = lookup_tensor(ref)
        _expect(tensor is not None, f"the model's input or output {ref!r} refers to no tensor")
        return tensor

    inputs = _map_refs(config["input_layers"], resolve)
    outputs = _map_refs(config["output_layers"], resolve)
    try:
        return cls(inputs=inputs, outputs=outputs, name=config.get("name"), trainable=config.get("trainable", True))
    except (TypeError, ValueError) as error:
        raise ModelFormatError(f"The rebuilt graph is not a valid model: {error}") from error


def _map_refs(structure, fn):
    if isinstance(structure, dict):
        return {k: _map_refs(v, fn) for k, v in structure.items()}
    _expect(isinstance(structure, list), f"expected a list of tensor references, received {structure!r}")
    if len(structure) == 3 and isinstance(structure[0], str):
        return fn(structure)
    return [_map_refs(v, fn) for v in structure]


def _expect(condition, message):
    if not condition:
        raise ModelFormatError(f"Invalid model config: {message}.")

