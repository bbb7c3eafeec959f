"""A nodeweave model as the ``config.json`` of a Keras 3 archive.

Each object becomes Keras' wrapper ``{"module", "class_name", "config",
"registered_name"}`` (plus ``build_config`` for a built layer): layers by the
shared table in ``catalog.py``, dtypes as ``DTypePolicy`` dicts, initializers,
regularizers and constraints with their Keras modules. In a functional model,
every call becomes an entry of its layer's ``inbound_nodes`` whose tensor
arguments are ``__keras_tensor__`` dicts (shape, dtype and the
``[layer, node, tensor]`` history, node indices counted among the layer's
calls in this model), and our operator layers become Keras op nodes called on
``(x, 3.0)`` as Keras records ``x + 3.0``.
"""

import numpy as np

from engine import tree
from engine.files.keras_format.catalog import (
    CONSTRAINTS_MODULE,
    FUNCTIONAL,
    INITIALIZERS_MODULE,
    KERAS_ONLY_ARGUMENTS,
    REGULARIZERS_MODULE,
    is_op,
    keras_class,
)
from engine.files.keras_format.write_compile import keras_compile_config
from engine.files.keras_format.write_order import keras_operations
from engine.network.keras_tensor import KerasTensor
from engine.files.registry import lookup, registered_name

# Keys of our configs that the Keras class's constructor refuses (its layer has no weights to freeze).
_NOT_IN_KERAS = {"SpatialDropout1D": ("trainable",), "SpatialDropout2D": ("trainable",)}
_OBJECT_MODULES = (("_initializer", INITIALIZERS_MODULE), ("_regularizer", REGULARIZERS_MODULE),
                   ("_constraint", CONSTRAINTS_MODULE))


def keras_model_config(model) -> dict:
    """The ``config.json`` content (a dict) Keras 3 writes for ``model``.

    Args:
        model: a functional or Sequential model.

    Raises:
        ValueError: a layer Keras cannot load (a Lambda, whose function only
            Python code can hold), named in the message.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> keras_model_config(Model(x, Dense(2)(x)))["class_name"]
        'Functional'
    """
    entry = _layer_entry(model)
    if _is_functional(model):
        entry["build_config"] = {"input_shape": None}
    entry["compile_config"] = keras_compile_config(model)
    return entry


def keras_identity(layer) -> tuple[str, str, str | None]:
    """``(module, class_name, registered_name)`` Keras 3 writes for ``layer``.

    Args:
        layer: any layer or model.

    Example:
        >>> from engine.network.ops import BinaryOp
        >>> keras_identity(BinaryOp("add", constant=3.0))
        ('keras.src.ops.numpy', 'Add', 'Add')
    """
    return _identity(registered_name(type(layer)) or type(layer).__name__, layer.get_config(), type(layer))


def _layer_entry(layer):
    """The Keras wrapper of one layer or model (without its ``inbound_nodes``)."""
    if hasattr(type(layer), "plan"):
        module, class_name, registered = keras_identity(layer)
        config = _functional_config(layer) if _is_functional(layer) else _sequential_config(layer)
        entry = {"module": module, "class_name": class_name, "config": config, "registered_name": registered}
        if not _is_functional(layer) and layer._known_input_shape() is not None:
            entry["build_config"] = {"input_shape": _shape(layer._known_input_shape())}
        return entry
    if is_op(keras_identity(layer)[0]):
        return _op_entry(layer)
    entry = {"class_name": registered_name(type(layer)) or type(layer).__name__, "name": layer.name,
             "config": layer.get_config()}
    if getattr(layer, "_build_shapes", None) is not None and not _called_on_several_tensors(layer):
        entry["build_config"] = {"input_shape": layer._build_shapes}
    return _entry_from_serialized(entry, type(layer))


def _called_on_several_tensors(layer):
    """Whether the layer's first call took tensors in more than one argument
    (``MultiHeadAttention(query, value)``, an RNN's ``initial_state=``). Keras
    would write their shapes keyed by the names of its own ``call``'s
    arguments, which ours need not share, so such a layer gets no build
    config: Keras builds it when it replays the call."""
    if not layer._inbound_nodes:
        return False
    node = layer._inbound_nodes[0]
    arguments = [*node.call_args, *node.call_kwargs.values()]
    return sum(any(isinstance(t, KerasTensor) for t in tree.flatten(a)) for a in arguments) > 1


def _identity(class_name, config, cls=None):
    """Keras' ``(module, class_name, registered_name)`` for our class
    registered as ``class_name`` (``cls`` itself when known: a user's class
    may be known only to the load that created it)."""
    if class_name == "Lambda":
        raise ValueError(
            f"Layer {config.get('name')!r} is a Lambda layer: a .keras file can hold its function only as Python "
            "bytecode, which Keras refuses to load in safe mode and which breaks across Python versions. Replace it "
            "with a layer class registered with @register_serializable, or save the model as .nw."
        )
    found = keras_class(class_name, config)
    if found is not None:
        module, keras_name = found
        registered = keras_name if is_op(module) or (module, keras_name) == FUNCTIONAL else None
        return module, keras_name, registered
    cls = cls or lookup(class_name)
    return cls.__module__, cls.__name__, class_name


def _entry_from_serialized(entry, cls=None):
    """The Keras wrapper of a layer from our ``serialize_layer`` dict."""
    module, class_name, registered = _identity(entry["class_name"], entry["config"], cls)
    config = {key: _keras_value(key, value) for key, value in entry["config"].items()
              if key not in _NOT_IN_KERAS.get(class_name, ())}
    if class_name == "InputLayer":
        config["dtype"] = entry["config"]["dtype"]
    wrapper = {"module": module, "class_name": class_name, "config": config, "registered_name": registered}
    if "build_config" in entry:
        wrapper["build_config"] = entry["build_config"]
    return wrapper


def _keras_value(key, value):
    """A config value as Keras writes it: dtypes as DTypePolicy, initializers,
    regularizers and constraints with their modules, nested layers wrapped."""
    if key == "dtype" and isinstance(value, str):
        return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": value}, "registered_name": None}
    if isinstance(value, dict) and set(value) >= {"class_name", "config"}:
        for suffix, module in _OBJECT_MODULES:
            if key.endswith(suffix):
                config = {**KERAS_ONLY_ARGUMENTS.get(value["class_name"], {}), **value["config"]}
                return {"module": module, "class_name": value["class_name"], "config": config, "registered_name": None}
        if "name" in value:  # a wrapped layer (Bidirectional, TimeDistributed)
            return _entry_from_serialized(value)
    return value


def _op_entry(layer):
    module, class_name, registered = keras_identity(layer)
    ours = layer.get_config()
    config = {"name": layer.name, **{key: ours[key] for key in ("decimals", "newshape", "axis") if key in ours}}
    return {"module": module, "class_name": class_name, "config": config, "registered_name": registered}


def _op_arguments(layer, node):
    """The positional arguments Keras' op node records for our op layer's call."""
    name = registered_name(type(layer)) or type(layer).__name__
    args = list(node.call_args)
    if name == "BinaryOp":
        if layer.constant is None:
            return list(args[0])
        return [layer.constant, args[0]] if layer.constant_position == "left" else [args[0], layer.constant]
    if name == "GetItem":
        return [args[0], list(layer.key)]
    return args[:1]


def _functional_config(model):
    operations, node_ids = keras_operations(model)
    plan = model.plan
    kept = {}  # id(node) -> its index among the layer's calls in this model
    for operation in operations:
        calls = [node for node in operation._inbound_nodes if id(node) in node_ids]
        kept.update((id(node), index) for index, node in enumerate(calls))

    def history(tensor):
        layer, node_index, tensor_index = plan._resolve(tensor)._keras_history
        return [layer.name, kept[id(layer._inbound_nodes[node_index])], tensor_index]

    def encode(value):
        if isinstance(value, KerasTensor):
            return {"class_name": "__keras_tensor__",
                    "config": {"shape": _shape(value.shape), "dtype": value.dtype, "keras_history": history(value)}}
        if isinstance(value, (list, tuple)):
            return [encode(v) for v in value]
        if isinstance(value, dict):
            return {k: encode(v) for k, v in value.items()}
        return _plain(value)

    def reference(tensor):
        layer, node, index = history(tensor)
        # Keras counts a nested functional model's own construction as its call 0 here (only here).
        return [layer, node + _is_functional(plan._resolve(tensor)._keras_history.layer), index]

    layers = []
    for operation in operations:
        entry = _layer_entry(operation)
        op = is_op(entry["module"])
        entry["name"] = operation.name
        entry["inbound_nodes"] = [
            {"args": encode(_op_arguments(operation, node) if op else list(node.call_args)),
             "kwargs": encode(node.call_kwargs)}
            for node in operation._inbound_nodes if id(node) in node_ids and not node.is_input
        ]
        layers.append(entry)
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": _map(reference, model._inputs_struct),
            "output_layers": _map(reference, model._outputs_struct)}


def _sequential_config(model):
    return {"name": model.name, "trainable": model.trainable, "dtype": _keras_value("dtype", model.dtype),
            "layers": [_layer_entry(layer) for layer in model._stack],
            **({"build_input_shape": _shape(model._known_input_shape())}
               if model._known_input_shape() is not None else {})}


def _is_functional(layer):
    return hasattr(type(layer), "plan") and not hasattr(layer, "_stack")


def _map(fn, structure):
    if isinstance(structure, KerasTensor):
        return fn(structure)
    if isinstance(structure, dict):
        return {k: _map(fn, v) for k, v in structure.items()}
    return [_map(fn, v) for v in structure]


def _shape(shape):
    return None if shape is None else list(shape)


def _plain(value):
    """A call argument that is not a tensor, as Keras serializes it."""
    if isinstance(value, np.ndarray):
        return {"class_name": "__numpy__", "config": {"value": value.tolist(), "dtype": str(value.dtype)}}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, slice):
        return {"class_name": "__slice__",
                "config": {"start": value.start, "stop": value.stop, "step": value.step}}
    if value is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    return value
