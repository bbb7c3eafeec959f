"""Keras 3 configs turned into ours, so a Keras model rebuilds with our layers.

Keras 3 wraps every object it serializes as ``{"module", "class_name",
"config", "registered_name", ...}``; a layer's config holds its arguments,
which our layers share, with the dtype as a ``DTypePolicy`` and initializers,
regularizers and constraints as such wrappers. A functional model's calls
(``inbound_nodes``) pass ``{"args": [...], "kwargs": {...}}`` where a tensor is
``{"class_name": "__keras_tensor__", "config": {..., "keras_history": [layer,
node, tensor]}}``; tensor operators are op nodes of ``keras.src.ops`` called
on the tensor and the constant, which become our operator layers (see
``catalog``). The result is the config ``Model.get_config`` of ours would
write, for the usual ``from_config`` to rebuild.
"""

import reprlib

from engine.errors import ModelFormatError
from engine.files.keras_format import catalog
from engine.files.registry import lookup

# How deep a Keras config may nest dicts and lists: a model nests layers, their
# configs and initializers a few levels each; the bound keeps a hostile
# config from exhausting the stack.
_MAX_DEPTH = 200


def is_keras_entry(value: object) -> bool:
    """Whether ``value`` is a Keras 3 serialized object, ``{"module", "class_name", "config", ...}``.

    Example:
        >>> is_keras_entry({"module": "keras.layers", "class_name": "Dense", "config": {"units": 2}})
        True
    """
    return isinstance(value, dict) and "module" in value and "class_name" in value and "config" in value


def is_keras_model_config(config: object) -> bool:
    """Whether ``config`` is the ``get_config()`` of a Keras 3 Functional or
    Sequential model: its layers are Keras 3 entries (ours have no ``module``)."""
    layers = config.get("layers") if isinstance(config, dict) else None
    return isinstance(layers, list) and any(is_keras_entry(entry) for entry in layers)


def as_nodeweave_entry(entry: dict) -> dict:
    """``entry`` when it is ours, its translation (``to_nodeweave_entry``) when it is a Keras 3 entry."""
    return to_nodeweave_entry(entry) if is_keras_entry(entry) else entry


def as_nodeweave_model_config(config: dict) -> dict:
    """``config`` when it is ours, its translation when it is a Keras 3 model's ``get_config()``."""
    return to_nodeweave_model_config(config) if is_keras_model_config(config) else config


def to_nodeweave_entry(entry: dict) -> dict:
    """Our layer entry (``{"class_name", "name", "config", ...}``) for the Keras
    3 entry ``entry``, nested models and layers included.

    Raises:
        ModelFormatError: a Keras op or built-in layer nodeweave does not have,
            a Lambda holding Python bytecode, an initializer argument we
            cannot honour, or a malformed entry.

    Example:
        >>> keras_entry = {"module": "keras.layers", "class_name": "Dense", "registered_name": None,
        ...                "config": {"name": "d", "units": 2, "dtype": {"module": "keras",
        ...                "class_name": "DTypePolicy", "config": {"name": "float32"}}}}
        >>> to_nodeweave_entry(keras_entry)
        {'class_name': 'Dense', 'name': 'd', 'config': {'name': 'd', 'units': 2, 'dtype': 'float32'}}
    """
    return _entry(entry, 0)


def to_nodeweave_compile_config(config: dict) -> dict:
    """Our compile config (``compile_from_config``'s) for the one Keras 3
    saves: optimizers, losses and metrics as ``{"class_name", "config"}``.

    Example:
        >>> to_nodeweave_compile_config({"optimizer": {"module": "keras.optimizers", "class_name": "SGD",
        ...     "config": {"learning_rate": 0.1, "use_ema": True}, "registered_name": None}, "loss": "mse"})
        {'optimizer': {'class_name': 'SGD', 'config': {'learning_rate': 0.1, 'use_ema': True}}, 'loss': 'mse'}
    """
    return _value(config, 0)


def to_nodeweave_model_config(config: dict) -> dict:
    """Our config for the ``get_config()`` of a Keras 3 Functional or Sequential
    model (``Model.from_config`` takes what Keras' ``model.get_config()`` gives)."""
    return _model_config(config, 0)


def _entry(entry, depth):
    _check_depth(depth)
    if not is_keras_entry(entry):
        raise ModelFormatError(
            f"Invalid Keras config: expected a layer as {{'module', 'class_name', 'config', ...}}, "
            f"received {_short(entry)}.")
    module, class_name, config = entry["module"], entry["class_name"], entry["config"]
    if not (isinstance(class_name, str) and isinstance(config, dict)):
        raise ModelFormatError(f"Invalid Keras config: layer entry {_short(entry)} needs a str class_name "
                               "and a dict config.")
    name = entry.get("name", config.get("name"))
    if catalog.is_op(module):
        return _op_entry(entry, class_name, name, depth)
    ours = _our_class(module, class_name, entry.get("registered_name"), name)
    if ours in ("Functional", "Sequential") or class_name in ("Functional", "Sequential"):
        config = _model_config(config, depth + 1)
    else:
        _refuse_bytecode(config, name, class_name)
        config = {key: _value(value, depth + 1) for key, value in config.items()}
    result = {"class_name": ours, "name": name, "config": config}
    if entry.get("build_config") is not None:
        result["build_config"] = entry["build_config"]
    if "inbound_nodes" in entry:
        nodes = entry["inbound_nodes"]
        if not isinstance(nodes, list):
            raise ModelFormatError(f"Invalid Keras config: the inbound_nodes of layer {name!r} must be a list.")
        result["inbound_nodes"] = [_node(node, name, depth + 1) for node in nodes]
    return result


def _model_config(config, depth):
    _check_depth(depth)
    if not (isinstance(config, dict) and isinstance(config.get("layers"), list)):
        raise ModelFormatError(f"Invalid Keras config: a model's config needs a list of layers, received {_short(config)}.")
    # Keras counts a nested Functional's own first node (its inputs to its outputs) in
    # the model's input and output references, but not in the calls' arguments.
    functional = {entry.get("name") for entry in config["layers"]
                  if is_keras_entry(entry) and isinstance(entry["config"], dict) and "input_layers" in entry["config"]}
    result = {}
    for key, value in config.items():
        if key == "layers":
            result[key] = [_entry(entry, depth + 1) for entry in value]
        elif key in ("input_layers", "output_layers"):
            result[key] = _model_references(value, functional, depth + 1)
        else:
            result[key] = _value(value, depth + 1)
    return result


def _model_references(value, functional, depth):
    """A model's ``input_layers`` or ``output_layers``, with the node indices
    of nested Functional models counted among their calls in this model."""
    _check_depth(depth)
    if isinstance(value, (list, tuple)) and len(value) == 3 and isinstance(value[0], str):
        if value[0] in functional and type(value[1]) is int and value[1] > 0:
            return [value[0], value[1] - 1, value[2]]
        return list(value)
    if isinstance(value, (list, tuple)):
        return [_model_references(item, functional, depth + 1) for item in value]
    if isinstance(value, dict) and value.get("class_name") == "__tuple__":
        return {"class_name": "__tuple__", "config": {"value": _model_references(
            _tuple_value(value.get("config"), depth), functional, depth + 1)}}
    if isinstance(value, dict):
        return {key: _model_references(item, functional, depth + 1) for key, item in value.items()}
    return value


def _our_class(module, class_name, registered_name, name):
    """The name our registry knows the Keras class by: the registered name of
    a user's class when it resolves, else the class name. A Keras built-in
    layer nodeweave lacks is named as such, with how to supply one."""
    if isinstance(registered_name, str) and registered_name != class_name:
        try:
            lookup(registered_name)
            return registered_name
        except ValueError:
            pass
    if module == catalog.LAYERS_MODULE:
        try:
            lookup(class_name)
        except ValueError:
            raise ModelFormatError(
                f"Cannot create layer {name!r}: the Keras layer {class_name!r} (keras.layers) has no nodeweave "
                f"equivalent yet. Pass an implementation of yours as custom_objects={{{class_name!r}: "
                f"{class_name}}} or register it with @engine.register_serializable()."
            ) from None
    return class_name


def _value(value, depth):
    """A value of a Keras layer config, as our configs hold it."""
    _check_depth(depth)
    if isinstance(value, (list, tuple)):  # configs in memory (get_config()) hold tuples
        return [_value(item, depth + 1) for item in value]
    if not isinstance(value, dict):
        return value
    class_name = value.get("class_name")
    if "config" in value and class_name in _SPECIAL_VALUES:
        return _SPECIAL_VALUES[class_name](value["config"], depth)
    if is_keras_entry(value):
        if value["module"] in _SMALL_OBJECT_MODULES or class_name in catalog.KERAS_ONLY_ARGUMENTS:
            return {"class_name": class_name, "config": _small_object_config(class_name, value["config"], depth)}
        if class_name in ("DTypePolicy", "FloatDTypePolicy"):
            return value["config"].get("name") if isinstance(value["config"], dict) else value["config"]
        if class_name == "function":
            return _function_name(value)
        return _entry(value, depth + 1)
    return {key: _value(item, depth + 1) for key, item in value.items()}


def _small_object_config(class_name, config, depth):
    """The config of an initializer, regularizer or constraint, without the
    arguments Keras writes at defaults we share (refused at any other value)."""
    if not isinstance(config, dict):
        raise ModelFormatError(f"Invalid Keras config: the config of {class_name} must be a dict, "
                               f"received {_short(config)}.")
    keras_only = catalog.KERAS_ONLY_ARGUMENTS.get(class_name, {})
    for key, default in keras_only.items():
        if key in config and config[key] != default:
            raise ModelFormatError(
                f"The Keras {class_name} in this config has {key}={config[key]!r}; nodeweave's {class_name} "
                f"supports only the default {key}={default!r}. Rebuild the model in Keras without {key}."
            )
    return {key: _value(item, depth + 1) for key, item in config.items() if key not in keras_only}


def _function_name(value):
    """The name our configs use for a function Keras serialized by name."""
    registered = value.get("registered_name")
    if isinstance(registered, str) and ">" in registered:
        return registered
    module, name = value.get("module"), value["config"]
    if not isinstance(module, str) or module.startswith("keras") or module == "builtins":
        return name  # Keras writes "builtins" for a user's function, whatever its module
    try:
        lookup(name, kind="function")  # passed in custom_objects under its own name
        return name
    except ValueError:
        return f"{module}:{name}"


def _refuse_bytecode(config, name, class_name):
    """Raises, naming the layer, when one of its arguments is a lambda Keras wrote as bytecode."""
    for key, value in config.items():
        if isinstance(value, dict) and value.get("class_name") == "__lambda__":
            _refuse_lambda(None, 0, f"argument {key!r} of layer {name!r} ({class_name})")


def _refuse_lambda(config, depth, where="an argument of a layer"):
    raise ModelFormatError(
        f"The Keras config holds a Python lambda as bytecode in {where}, which nodeweave never runs. Rebuild "
        "the model in Keras with a named function instead of the lambda, and pass that function to the load "
        "as custom_objects={'name': fn}."
    )


def _tuple_value(config, depth):
    if not (isinstance(config, dict) and isinstance(config.get("value"), list)):
        raise ModelFormatError(f"Invalid Keras config: a __tuple__ needs a list value, received {_short(config)}.")
    return [_value(item, depth + 1) for item in config["value"]]


def _array_value(config, depth):
    if not (isinstance(config, dict) and "value" in config):
        raise ModelFormatError(f"Invalid Keras config: an array needs a value, received {_short(config)}.")
    return _value(config["value"], depth + 1)


_SPECIAL_VALUES = {
    "__tuple__": _tuple_value,
    "__numpy__": _array_value,
    "__tensor__": _array_value,
    "__lambda__": _refuse_lambda,
}
_SMALL_OBJECT_MODULES = (catalog.INITIALIZERS_MODULE, catalog.REGULARIZERS_MODULE, catalog.CONSTRAINTS_MODULE,
                         catalog.OPTIMIZERS_MODULE, catalog.LOSSES_MODULE, catalog.METRICS_MODULE)


# ----------------------------------------------------------------- calls
def _node(node, layer_name, depth):
    """One call ``{"args", "kwargs"}`` with tensors as our ``{"__tensor__": [layer, node, tensor]}``.

    ``mask=None`` is left out: Keras passes it on every call of a nested model
    and accepts it for any layer, where it means the input's own mask, which
    is what a call without it uses.
    """
    if not (isinstance(node, dict) and isinstance(node.get("args"), (list, tuple))
            and isinstance(node.get("kwargs", {}), dict)):
        raise ModelFormatError(
            f"Invalid Keras config: each call of layer {layer_name!r} must be {{'args': [...], 'kwargs': {{...}}}}, "
            f"received {_short(node)}.")
    kwargs = {key: _argument(value, depth + 1) for key, value in node.get("kwargs", {}).items()
              if not (key == "mask" and value is None)}
    return {"args": [_argument(value, depth + 1) for value in node["args"]], "kwargs": kwargs}


def _argument(value, depth):
    _check_depth(depth)
    if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
        history = value.get("config", {}).get("keras_history") if isinstance(value.get("config"), dict) else None
        if history is None:
            raise ModelFormatError(f"Invalid Keras config: a tensor argument has no keras_history: {_short(value)}.")
        return {"__tensor__": list(history) if isinstance(history, tuple) else history}
    if isinstance(value, dict) and value.get("class_name") == "__tuple__":
        return [_argument(item, depth + 1) for item in _tuple_value(value.get("config"), depth)]
    if isinstance(value, (list, tuple)):
        return [_argument(item, depth + 1) for item in value]
    if isinstance(value, dict) and not is_keras_entry(value) and value.get("class_name") not in _SPECIAL_VALUES:
        return {key: _argument(item, depth + 1) for key, item in value.items()}
    return _value(value, depth + 1)


def _is_tensor(value):
    return isinstance(value, dict) and "__tensor__" in value


# ------------------------------------------------------------------- ops
def _op_entry(entry, class_name, name, depth):
    """Our operator layer for a Keras op node: ``Add`` on ``(x, 3.0)`` is
    ``BinaryOp(op="add", constant=3.0)`` called on ``x``."""
    nodes = entry.get("inbound_nodes")
    if not (isinstance(nodes, list) and len(nodes) == 1):
        raise ModelFormatError(
            f"Invalid Keras config: op {name!r} ({class_name}) must have exactly one call, received {_short(nodes)}.")
    node = _node(nodes[0], name, depth + 1)
    args, config = node["args"], {"name": name}
    if class_name in catalog.KERAS_OPS:
        ours, op = catalog.KERAS_OPS[class_name]
        config["op"] = op
        tensors = [arg for arg in args if _is_tensor(arg)]
        if ours == "UnaryOp" and len(args) == 1 and tensors:
            return _op_result("UnaryOp", name, config, args, node["kwargs"])
        if ours == "BinaryOp" and len(args) == 2 and len(tensors) == 2:
            return _op_result("BinaryOp", name, config, [args], node["kwargs"])
        if ours == "BinaryOp" and len(args) == 2 and len(tensors) == 1:
            position = "left" if _is_tensor(args[1]) else "right"
            constant = args[0] if position == "left" else args[1]
            config.update(constant=constant, constant_position=position)
            return _op_result("BinaryOp", name, config, tensors, node["kwargs"])
        raise ModelFormatError(f"Invalid Keras config: op {name!r} ({class_name}) is called on {_short(args)}; "
                               "expected its tensor operands.")
    if class_name in catalog.KERAS_OP_LAYERS:
        ours = catalog.KERAS_OP_LAYERS[class_name]
        config.update({key: _value(value, depth + 1) for key, value in entry["config"].items() if key != "name"})
        if ours == "GetItem":
            if len(args) != 2 or not _is_tensor(args[0]):
                raise ModelFormatError(f"Invalid Keras config: op {name!r} (GetItem) must be called on a tensor "
                                       f"and a key, received {_short(args)}.")
            config["key"] = _getitem_key(entry["inbound_nodes"][0]["args"][1], name)
            args = args[:1]
        return _op_result(ours, name, config, args, node["kwargs"])
    raise ModelFormatError(
        f"Cannot create layer {name!r}: the Keras op {class_name!r} ({entry['module']}) has no nodeweave "
        "equivalent. nodeweave records the tensor operators (+, -, *, /, //, %, **, @, comparisons, &, |, ^, ~, "
        "abs, round, indexing) and reshape and squeeze; rebuild the model with a layer for this op."
    )


def _op_result(ours, name, config, args, kwargs):
    return {"class_name": ours, "name": name, "config": config, "inbound_nodes": [{"args": args, "kwargs": kwargs}]}


def _getitem_key(key, name):
    """Our GetItem key (a list of ints, None, ``"..."`` and slice dicts) for the Keras one."""
    if isinstance(key, dict) and key.get("class_name") == "__tuple__":
        key = _tuple_value(key.get("config"), 0)
    items = key if isinstance(key, list) else [key]
    result = []
    for item in items:
        if isinstance(item, dict) and item.get("class_name") == "__slice__" and isinstance(item.get("config"), dict):
            result.append({part: item["config"].get(part) for part in ("start", "stop", "step")})
        elif isinstance(item, dict) and item.get("class_name") == "__ellipsis__":
            result.append("...")
        elif item is None or type(item) is int:
            result.append(item)
        else:
            raise ModelFormatError(f"Invalid Keras config: op {name!r} (GetItem) indexes with {_short(item)}; "
                                   "nodeweave indexes with ints, slices, None and ....")
    return result


def _check_depth(depth):
    if depth > _MAX_DEPTH:
        raise ModelFormatError(f"Invalid Keras config: it nests deeper than {_MAX_DEPTH} levels; real configs nest "
                               "a few levels per model.")


def _short(value):
    return f"{type(value).__name__} {reprlib.repr(value)}"
