"""A functional model as a config, and back.

The config lists the model's layers, each with the calls (``inbound_nodes``) it
makes in this model; every tensor argument is written as the reference
``[layer_name, node_index, tensor_index]`` (the ``_keras_history`` triple, with
node indices counted among the layer's calls inside this model). Rebuilding
creates the layers from the registry and replays the calls; shared layers stay
shared and nested models stay nested.
"""

import reprlib
from collections import deque

from engine import tree
from engine.errors import ModelFormatError
from engine.network.keras_tensor import KerasTensor
from engine.files.registry import custom_object_scope, lookup, registered_name

# The keys of a functional model's own config (see functional_config).
_MODEL_KEYS = frozenset({"name", "trainable", "layers", "input_layers", "output_layers"})
# How deep the arguments of a call, and the model's inputs and outputs, may nest.
# Real configs nest a few levels; the bound keeps hostile ones from exhausting the stack.
_MAX_NESTING = 64


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
    _expect_type(entry, dict, "a layer entry")
    name = entry.get("name")
    if name is not None:
        _expect_type(name, str, "the 'name' of a layer entry")
    for key, kind in (("class_name", str), ("config", dict)):
        _expect(key in entry, f"layer entry {name!r} lacks {key!r}")
        _expect_type(entry[key], kind, f"the {key!r} of layer {name!r}")
    class_name = entry["class_name"]
    try:
        cls = lookup(class_name, custom_objects)
    except ValueError as error:
        raise ModelFormatError(f"Cannot create layer {name!r}: {error}") from error
    try:
        with custom_object_scope(custom_objects):
            return cls.from_config(entry["config"])
    except ModelFormatError:
        raise
    except (TypeError, ValueError, KeyError) as error:
        raise ModelFormatError(f"Cannot create layer {name!r} ({class_name}) from its config: {error}") from error
    except RecursionError as error:
        raise ModelFormatError(
            f"Cannot create layer {name!r} ({class_name}): the config nests too deeply for Python's stack "
            f"({error}). Real configs nest models and values a few levels deep; this one is damaged or was "
            "made to exhaust the stack."
        ) from error


def functional_config(model):
    """The config of a functional model (see the module docstring)."""
    plan = model.plan  # its inputs are Input tensors (a model given intermediate ones makes its own)
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
        "input_layers": _encode_tuples(tree.map_structure(reference, model._inputs_struct)),
        "output_layers": _encode_tuples(tree.map_structure(reference, model._outputs_struct)),
    }


def _encode_tuples(structure):
    """``structure`` with each tuple written as Keras writes one in JSON,
    ``{"class_name": "__tuple__", "config": {"value": [...]}}``, so that a model
    whose outputs are a tuple gets a tuple back (a reference is a list)."""
    if isinstance(structure, tuple):
        return {"class_name": "__tuple__", "config": {"value": [_encode_tuples(v) for v in structure]}}
    if isinstance(structure, dict):
        return {k: _encode_tuples(v) for k, v in structure.items()}
    if isinstance(structure, list) and structure and not isinstance(structure[0], str):
        return [_encode_tuples(v) for v in structure]
    return structure


def functional_from_config(cls, config, make_layer=deserialize_layer):
    """Rebuilds a functional model: creates its layers (``make_layer(entry)``,
    from the registry by default), then replays their calls in an order where
    every call's inputs exist.

    Each call waits on the tensor references it reads and on the previous call
    of its layer (node indices follow call order); running a call releases the
    calls waiting on what it produced, so the replay is linear in the size of
    the config whatever the order of its layers.
    """
    _expect_type(config, dict, "a model config")
    for key in ("layers", "input_layers", "output_layers"):
        _expect(key in config, f"the model config lacks {key!r}")
    _expect_type(config["layers"], list, "the model's 'layers'")
    model_name = config.get("name")
    if model_name is not None:
        _expect_type(model_name, str, "the model's 'name'")
    trainable = config.get("trainable", True)
    _expect_type(trainable, bool, "the model's 'trainable'")
    layers, produced, calls = {}, {}, []  # name -> layer; (name, node, tensor) -> KerasTensor
    for entry in config["layers"]:
        _expect_type(entry, dict, "a layer entry")
        layer = make_layer(entry)
        name = entry.get("name", layer.name)
        _expect_type(name, str, "the 'name' of a layer entry")
        _expect(name not in layers, f"the layer name {name!r} appears twice")
        layers[name] = layer
        nodes = entry.get("inbound_nodes", [])
        _expect_type(nodes, list, f"the 'inbound_nodes' of layer {name!r}")
        if type(layer).__name__ == "InputLayer":
            produced[(name, 0, 0)] = layer.output
            continue
        calls.extend(_Call(name, number, node) for number, node in enumerate(nodes))

    _replay(calls, layers, produced)

    def resolve(ref):
        _expect(ref in produced, f"the model's input or output {list(ref)!r} refers to no tensor")
        return produced[ref]

    inputs = _map_refs(config["input_layers"], resolve, "input_layers")
    outputs = _map_refs(config["output_layers"], resolve, "output_layers")
    # Keys a subclass's get_config added (``param`` of ``class Custom(Model)``) go to its constructor, as in Keras.
    extra = {key: value for key, value in config.items() if key not in _MODEL_KEYS}
    try:
        return cls(inputs=inputs, outputs=outputs, name=model_name, trainable=trainable, **extra)
    except (TypeError, ValueError) as error:
        raise ModelFormatError(f"The rebuilt graph is not a valid model: {error}") from error


class _Call:
    """One entry of a layer's ``inbound_nodes``, waiting to be replayed.

    ``references`` are the ``(layer, node, tensor)`` triples its arguments
    read; ``waiting`` counts what it still waits for.
    """

    __slots__ = ("args", "kwargs", "layer_name", "number", "references", "waiting")

    def __init__(self, layer_name, number, node):
        where = f"call {number} of layer {layer_name!r}"
        if isinstance(node, list):
            node = _legacy_call(node, where)
        _expect_type(node, dict, where)
        _expect("args" in node, f"{where} lacks 'args'")
        args, kwargs = node["args"], node.get("kwargs", {})
        _expect_type(args, list, f"the 'args' of {where}")
        _expect(args, f"the 'args' of {where} are empty: a call needs its inputs")
        _expect_type(kwargs, dict, f"the 'kwargs' of {where}")
        _expect("__tensor__" not in kwargs, f"the 'kwargs' of {where} must be a dict of arguments, not a tensor reference")
        for key in kwargs:
            _expect_type(key, str, f"each key of the 'kwargs' of {where}")
        self.layer_name, self.number, self.args, self.kwargs = layer_name, number, args, kwargs
        self.references = []
        _collect_references(args, self.references, f"the 'args' of {where}")
        _collect_references(kwargs, self.references, f"the 'kwargs' of {where}")


def _legacy_call(entries, where):
    """A call in the config format of Keras 2 and tf.keras, a list of ``[layer, node, tensor, kwargs]``
    (one per input tensor; kwargs optional), as ``{"args", "kwargs"}``: one input is passed alone, several
    as a list, as Keras reads it."""
    references = []
    kwargs = {}
    for entry in entries:
        _expect(isinstance(entry, list) and len(entry) in (3, 4),
                f"{where} in Keras' legacy format must list [layer name, node index, tensor index, kwargs] "
                f"entries, received {_describe(entry)}")
        references.append({"__tensor__": entry[:3]})
        if len(entry) == 4:
            _expect_type(entry[3], dict, f"the kwargs of an entry of {where}")
            kwargs = entry[3]
    return {"args": references if len(references) == 1 else [references], "kwargs": kwargs}


def _replay(calls, layers, produced):
    """Runs each ``_Call`` once what it waits for exists: every call is
    registered under each missing reference and under the previous call of
    its layer, and running a call releases those waiting on its outputs."""
    waiting_on = {}  # (name, node, tensor) or (name, node) -> the calls waiting for it
    ready = deque()
    for call in calls:
        keys = {ref for ref in call.references if ref not in produced}
        if call.number:
            keys.add((call.layer_name, call.number - 1))
        call.waiting = len(keys)
        for key in keys:
            waiting_on.setdefault(key, []).append(call)
        if not keys:
            ready.append(call)
    while ready:
        call = ready.popleft()
        count = _replay_call(call, layers[call.layer_name], produced)
        done = [(call.layer_name, call.number, index) for index in range(count)] + [(call.layer_name, call.number)]
        for key in done:
            for waiter in waiting_on.pop(key, ()):
                waiter.waiting -= 1
                if not waiter.waiting:
                    ready.append(waiter)
    stuck = [call for call in calls if call.waiting]
    if stuck:
        raise _stuck_error(stuck, layers, produced)


def _stuck_error(stuck, layers, produced):
    """The error for calls that never ran, naming the root cause: a call that
    reads a tensor no call of the config makes (Keras' "Missing node" when no
    layer of that name exists) or, failing that, one of a cycle (Keras' "loops")."""
    stuck_calls = {(call.layer_name, call.number) for call in stuck}
    for call in stuck:
        missing = [list(ref) for ref in call.references if ref not in produced and ref[:2] not in stuck_calls]
        if missing:
            break
    else:
        call = next(call for call in stuck if any(ref not in produced for ref in call.references))
        missing = [list(ref) for ref in call.references if ref not in produced]
    absent = [ref[0] for ref in missing if ref[0] not in layers]
    cause = (f"Missing node: {absent[0]} (the config has no layer {absent[0]!r})" if absent else
             "The graph of the Functional model either has loops or disconnected nodes")
    return ModelFormatError(
        f"Invalid Functional model configuration. {cause}: layer {call.layer_name!r} call {call.number} needs "
        f"tensors {missing} that no layer produces (a missing layer or node, or a cycle). Each reference "
        "[layer, node, tensor] must name a layer of the config, one of its calls and one of its outputs."
    )


def _collect_references(value, references, where):
    """Appends to ``references`` the ``(layer, node, tensor)`` triple of each
    ``{"__tensor__": ...}`` in ``value``, checking each one and the nesting depth."""
    stack = [(value, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > _MAX_NESTING:
            raise ModelFormatError(
                f"Invalid model config: {where} nest deeper than {_MAX_NESTING} levels; real configs nest a few."
            )
        if isinstance(value, dict) and "__tensor__" in value:
            references.append(_reference(value["__tensor__"], where))
        elif isinstance(value, dict):
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)


def _reference(ref, where):
    """``ref`` as a ``(layer, node, tensor)`` tuple, when it is ``[str, int >= 0, int >= 0]``."""
    if not (isinstance(ref, list) and len(ref) == 3 and isinstance(ref[0], str)
            and all(type(index) is int and index >= 0 for index in ref[1:])):
        raise ModelFormatError(
            f"Invalid model config: a tensor reference in {where} must be [layer name, node index, "
            f"tensor index] (a str and two non-negative ints), received {_describe(ref)}."
        )
    return tuple(ref)


def _replay_call(call, layer, produced):
    """Calls ``layer`` on the call's arguments, records its outputs in ``produced``
    and returns how many there are."""
    args, kwargs = _decode(call.args, produced), _decode(call.kwargs, produced)
    try:
        outputs = layer(*args, **kwargs)
    except ModelFormatError:
        raise
    except (TypeError, ValueError) as error:
        raise ModelFormatError(f"Replaying call {call.number} of layer {call.layer_name!r} failed: {error}") from error
    flat = tree.flatten(outputs)
    for index, tensor in enumerate(flat):
        produced[(call.layer_name, call.number, index)] = tensor
    return len(flat)


def _decode(value, produced):
    """``value`` with each tensor reference replaced by its tensor (``_Call`` bounded the nesting)."""
    if isinstance(value, dict) and "__tensor__" in value:
        return produced[tuple(value["__tensor__"])]
    if isinstance(value, list):
        return [_decode(v, produced) for v in value]
    if isinstance(value, dict):
        return {k: _decode(v, produced) for k, v in value.items()}
    return value


def _map_refs(structure, fn, field, depth=1):
    """Applies ``fn`` to each reference in ``structure``: a reference, or a list or dict of them."""
    if depth > _MAX_NESTING:
        raise ModelFormatError(f"Invalid model config: {field!r} nests deeper than {_MAX_NESTING} levels.")
    if isinstance(structure, dict) and structure.get("class_name") == "__tuple__" and set(structure) == {
            "class_name", "config"}:
        value = structure["config"].get("value") if isinstance(structure["config"], dict) else None
        _expect_type(value, list, f"the value of a tuple in {field!r}")
        return tuple(_map_refs(v, fn, field, depth + 1) for v in value)
    if isinstance(structure, dict):
        return {k: _map_refs(v, fn, field, depth + 1) for k, v in structure.items()}
    if isinstance(structure, tuple) and structure and not isinstance(structure[0], str):
        return tuple(_map_refs(v, fn, field, depth + 1) for v in structure)
    if not (isinstance(structure, list) and structure):
        raise ModelFormatError(
            f"Invalid model config: {field!r} must hold tensor references [layer name, node index, tensor index], "
            f"or lists or dicts of them; received {_describe(structure)}."
        )
    if isinstance(structure[0], str):
        return fn(_reference(structure, repr(field)))
    return [_map_refs(v, fn, field, depth + 1) for v in structure]


def _describe(value):
    """The type and a short repr of ``value``, safe for values nested arbitrarily deep."""
    return f"{type(value).__name__} {reprlib.repr(value)}"


def _expect_type(value, kind, what):
    """Raises ModelFormatError unless ``value`` is a ``kind``; ``what`` names the field."""
    if not isinstance(value, kind):
        raise ModelFormatError(f"Invalid model config: {what} must be a {kind.__name__}, received {_describe(value)}.")


def _expect(condition, message):
    if not condition:
        raise ModelFormatError(f"Invalid model config: {message}.")
