"""Pickling and copying layers and models through their ``.nw`` bytes.

``pickle.dumps(model)`` writes no Python object of ours: a layer reduces to
``rebuild(archive)``, where ``archive`` is the bytes of the ``.nw`` archive
(config JSON, weights, compile state; see ``engine.files.saving``), plus, when the
model uses classes or functions of the user's that are not registered, those
objects by reference, as pickle writes any class or function (by value under
cloudpickle). ``rebuild`` loads the archive in safe mode, so the bytes name no
code it would import. ``copy.copy`` and ``copy.deepcopy`` take the same road and
return an independent model, as in Keras.
"""

import io
import json
import types
import zipfile

from engine import extensions, tree
from engine.files.registry import function_name, registered_name


def reduce_layer(layer):
    """What ``Module.__reduce__`` returns: ``(rebuild, (archive_bytes,))``, plus
    ``{name: object}`` of the user's unregistered classes and functions as a
    second argument when there are some."""
    from engine.files.saving import write_archive

    buffer = io.BytesIO()
    write_archive(layer, buffer)
    with zipfile.ZipFile(buffer) as archive:
        config = archive.read("config.json").decode("utf-8")
    custom = custom_objects_of(layer, config)
    return (rebuild, (buffer.getvalue(), custom) if custom else (buffer.getvalue(),))


def rebuild(archive, custom_objects=None):
    """Rebuilds a layer or model from its ``.nw`` archive bytes (safe mode on).

    Example:
        >>> import pickle
        >>> from layers import Dense
        >>> pickle.loads(pickle.dumps(Dense(2, name="d"))).name
        'd'
    """
    from engine.files.saving import load_archive_bytes

    return load_archive_bytes(archive, custom_objects=custom_objects, safe_mode=True)


def custom_objects_of(layer, config):
    """``{name: object}`` for the classes of ``layer`` and of the layers in it,
    and the functions they hold or were compiled with, that the registry does
    not know and the ``config`` JSON names: what loading it needs in
    ``custom_objects``."""
    found = {}
    for module in [layer, *layer._submodules()]:
        cls = type(module)
        if registered_name(cls) is None and json.dumps({"class_name": cls.__name__})[1:-1] in config:
            found[cls.__name__] = getattr(cls, "_user_class", cls)  # a subclass's functional variant: the subclass
        for value in module.__dict__.values():
            _add_function(found, value, config)
    for value in tree.flatten(getattr(layer, "_compile_args", None)):
        _add_function(found, value, config)
    return found


def _add_function(found, value, config):
    """Adds ``value`` when it is a function no registered name covers that the
    config names (as ``module:qualname``)."""
    if isinstance(value, types.FunctionType) and registered_name(value) is None:
        name = function_name(value)
        if json.dumps(name) in config:
            found[name] = value


extensions.provide("reduce_layer", reduce_layer)  # Module.__reduce__: a layer pickles as its .nw bytes
