"""``model.weights.h5`` as Keras 3 writes it, for a nodeweave model.

Keras keeps each object's own variables in ``<path>/vars/0``, ``vars/1``... in
the order it created them, under the path of attributes leading to the object:
``layers/<name>`` for a model's layers, where ``<name>`` is the snake-case
class name made unique in the order of ``model.layers`` (``dense``,
``dense_1``), never the layer's own name; then ``cell`` for an RNN layer,
``forward_layer`` and ``backward_layer`` for Bidirectional, ``layer`` for
TimeDistributed, ``layers/...`` again for a nested model. Every group also
records the object's name in its ``name`` attribute.
"""

from typing import BinaryIO

import numpy as np

from engine.files.keras_format.catalog import WEIGHT_GROUPS, is_op, keras_class, unique_names
from engine.files.keras_format.write_compile import optimizer_state
from engine.files.keras_format.write_config import keras_identity
from engine.files.keras_format.write_order import keras_operations
from engine.network.module import Module
from engine.files.registry import registered_name
from engine.files.weight_paths import weight_paths

# Wrapper layers: the attribute Keras keeps each wrapped layer under.
_WRAPPED = {"Bidirectional": ("forward_layer", "backward_layer"), "TimeDistributed": ("layer",)}


def write_weights_h5(model, handle: BinaryIO, with_optimizer: bool = True) -> None:
    """Writes Keras' ``model.weights.h5`` into ``handle``: every weight of
    ``model`` and, when it is compiled and ``with_optimizer``, its optimizer's
    state (``write_compile``). The weights go straight from the model's arrays
    to the file, so saving holds no second copy of them in memory.

    Args:
        model: a functional or Sequential model.
        handle: a binary file open for writing and seeking (a file on disk, a
            temporary file, ``io.BytesIO``).
        with_optimizer: False when the file is written uncompiled (Keras would
            have no optimizer to read the state into).

    Raises:
        ImportError: h5py is not installed.
        ValueError: a layer keeps weights where Keras has no place for them
            (the message names the layer).

    Example:
        >>> import io
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> buffer = io.BytesIO()
        >>> write_weights_h5(Model(x, Dense(2)(x)), buffer)
        >>> buffer.getvalue()[:4]
        b'\\x89HDF'
    """
    try:
        import h5py
    except ImportError as error:
        raise ImportError("Writing a .keras file needs h5py, for its model.weights.h5: pip install h5py") from error
    entries = list(keras_weight_paths(model).items())
    trainable = {id(variable) for variable in model.trainable_weights}
    state = optimizer_state(model, [variable for _, variable in entries if id(variable) in trainable]) \
        if with_optimizer else None
    with h5py.File(handle, "w") as file:
        groups = {}  # path -> h5py Group: asking HDF5 whether a group exists is slow

        def group(path):
            if path not in groups:
                groups[path] = file.create_group(path)  # with any missing parent groups
            return groups[path]

        for path, name in _named_groups(model, ""):
            group(f"{path}vars").attrs["name"] = name
        for path, variable in entries:
            parent, index = path.rsplit("/", 1)
            group(parent).create_dataset(index, data=np.asarray(variable.value))
        if state is not None:
            name, arrays = state
            group("optimizer/vars").attrs["name"] = name
            for index, array in enumerate(arrays):
                group("optimizer/vars").create_dataset(str(index), data=array)


def keras_weight_paths(model) -> dict:
    """``{h5 dataset path: Variable}`` for every weight of ``model``, each once,
    in the order Keras writes them (a layer two models share is saved where
    first met).

    Args:
        model: a functional or Sequential model.

    Raises:
        ValueError: a layer keeps weights where Keras has no place for them
            (the message names the layer).

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> list(keras_weight_paths(Model(x, Dense(2)(x))))
        ['layers/dense/vars/0', 'layers/dense/vars/1']
    """
    paths, seen = {}, set()
    for path, variable in keras_weight_entries(model):
        if id(variable) not in seen:
            seen.add(id(variable))
            paths[path] = variable
    _check_every_weight_written(model, paths.values())
    return paths


def keras_weight_entries(layer, prefix: str = "") -> list:
    """``[(h5 dataset path, Variable)]`` for ``layer`` and everything in it,
    where Keras 3 keeps each weight (``layers/dense/vars/0``), in Keras' order.

    Args:
        layer: a model or a layer.
        prefix: the path of the group that holds ``layer``'s.

    Example:
        >>> from engine import Input, Model
        >>> from layers import LSTM
        >>> x = Input(shape=(4, 2))
        >>> [path for path, _ in keras_weight_entries(Model(x, LSTM(3)(x)))]
        ['layers/lstm/cell/vars/0', 'layers/lstm/cell/vars/1', 'layers/lstm/cell/vars/2']
    """
    class_name = registered_name(type(layer)) or type(layer).__name__
    children = _graph_children(layer)
    if children is not None:
        return [entry for path, child in children for entry in keras_weight_entries(child, f"{prefix}{path}/")]
    if class_name in _WRAPPED:
        return [entry for attribute in _WRAPPED[class_name]
                for entry in keras_weight_entries(getattr(layer, attribute), f"{prefix}{attribute}/")]
    if class_name in WEIGHT_GROUPS:
        paths = weight_paths(layer)
        return [(f"{prefix}{group}/vars/{index}", paths[name])
                for group, names in WEIGHT_GROUPS[class_name]
                for index, name in enumerate(n for n in names if n in paths)]
    entries = [(f"{prefix}vars/{index}", variable) for index, variable in enumerate(layer._own_variables())]
    if keras_class(class_name, layer.get_config()) is None:  # a user's layer: its sub-layers sit under their attribute names
        entries += [entry for path, child in _attribute_children(layer)
                    for entry in keras_weight_entries(child, f"{prefix}{path}/")]
    return entries


def _attribute_children(layer):
    """``[(path, sub-layer)]`` of a user's layer, as Keras names them: the
    attribute's name, and in a list, the attribute's name then the sub-layers'
    snake-case class names made unique (``blocks/dense``, ``blocks/dense_1``)."""
    children = []
    for attribute, value in sorted(vars(layer).items(), key=lambda item: (item[0].startswith("_"), item[0])):
        if isinstance(value, Module):
            children.append((attribute, value))
        elif isinstance(value, (list, tuple)) and any(isinstance(item, Module) for item in value):
            members = [item for item in value if isinstance(item, Module)]
            names = unique_names([keras_identity(member)[1] for member in members])
            children += [(f"{attribute}/{name}", member) for name, member in zip(names, members)]
    return children


def _graph_children(layer):
    """``[(path, layer)]`` for the layers of a functional or Sequential model,
    named as Keras names them; None for any other layer."""
    if not hasattr(type(layer), "plan"):
        return None
    if hasattr(layer, "_stack"):
        members = layer.layers
    else:
        operations, _ = keras_operations(layer)
        members = [op for op in operations if not is_op(keras_identity(op)[0])]
    names = unique_names([keras_identity(member)[1] for member in members])
    return [(f"layers/{name}", member) for name, member in zip(names, members)]


def _named_groups(layer, prefix):
    """``[(path prefix, name)]`` of the ``vars`` group of ``layer`` and of each
    layer of a model in it, as Keras records names."""
    groups = [(prefix, layer.name)]
    for path, child in _graph_children(layer) or ():
        groups += _named_groups(child, f"{prefix}{path}/")
    return groups


def _check_every_weight_written(model, variables):
    written = {id(variable) for variable in variables}
    for path, variable in weight_paths(model).items():
        if id(variable) not in written:
            layer = path.split("/")[0]
            raise ValueError(
                f"Weight {path!r} of layer {layer!r} has no place in Keras' weight layout (.keras, .weights.h5): "
                "the layer keeps it in a sub-layer where Keras keeps none. Save the model as .nw (its weights as "
                ".npz) instead."
            )


