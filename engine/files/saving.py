"""Model files (``.nw``), weight files (``.npz``) and JSON configs.

A ``.nw`` file is a zip archive holding ``config.json`` (the architecture and the
compile arguments), ``metadata.json`` (nodeweave version, date, format version),
``weights.npz`` (every weight by its path, ``dense/kernel``) and, for a compiled
model, ``optimizer.npz`` (the optimizer's state). Nothing is ever loaded with
pickle or eval: JSON, and NumPy arrays with ``allow_pickle=False``. Writes are
atomic: a temporary file in the same folder, then a rename.
"""

import io
import json
import math
import os
import time
import zipfile

import numpy as np

from engine import extensions
from engine.files.atomic_file import atomic_write
from engine.files.compile_config import compile_from_config
from engine.errors import ModelFormatError, as_model_format_error
from engine.network.functional_config import deserialize_layer, serialize_layer
from engine.files.keras_format.archive import is_keras_archive, load_keras_archive
from engine.files.keras_format.config_reader import as_nodeweave_entry
from engine.network.keras_tensor import KerasTensor
from engine.gc_pause import collector_paused
from engine.files.load_limits import (LoadLimits, check_members, npz_size_bound, parse_json, read_json_member,
                                      weight_budget)
from engine.network.module import Module
from engine.files.npz_arrays import open_npz, open_npz_member, read_arrays
from engine.files.registry import loading_scope
from engine.files.weight_paths import graph_layers, weight_paths
from engine.files.zip_member import open_archive

FORMAT_VERSION = 1
VERSION = "0.1.0"
_MEMBERS = {"config.json", "metadata.json", "weights.npz", "optimizer.npz"}


# ----------------------------------------------------------------- weights
def save_weights(model, path):
    """Writes every weight to an ``.npz`` file, keyed by weight path."""
    _check_extension(path, ".npz", "save_weights")
    arrays = {name: variable.value for name, variable in weight_paths(model).items()}
    atomic_write(path, lambda handle: np.savez(handle, **arrays))


def load_weights(model: Module, path: str | os.PathLike, skip_mismatch: bool = False,
                 limits: LoadLimits | None = None) -> list[str]:
    """Reads weights saved by ``save_weights`` into ``model``.

    Weights match by path when the file holds exactly the model's paths.
    Otherwise they match by structure, as Keras 3 matches them, when the file
    holds as many weights as the model, in the order of ``weight_paths``, each
    with the same final name (``kernel``), and then each must have the model's
    shape: so a second instance of an
    architecture loads the weights of the first, whose automatic layer names
    (``dense`` for ``dense_2``) differ. Each array's header is checked against
    the weight before the array is read.

    Args:
        model: a built model (or layer).
        path: the ``.npz`` file.
        skip_mismatch: when the weights match neither by path nor by structure,
            skip (never read) the weights whose paths do not match, instead of
            raising.
        limits: a ``LoadLimits`` with larger fixed limits, for a huge model.

    Returns:
        A message for each weight skipped.

    Raises:
        ModelFormatError: the weights match neither by path nor by structure
            (the message names each weight missing, unknown or of another
            shape, and the first position where the structures differ), or
            the file is malformed.
    """
    _check_extension(path, ".npz", "load_weights")
    if not model.built:
        raise ValueError(
            f"Model {model.name!r} has not been built yet, so it has no weights to load into. Build it first by "
            "calling it on a batch of data (or model.build(input_shape)), then call load_weights()."
        )
    limits = limits or LoadLimits()
    variables = weight_paths(model)
    expected = _specs(variables)
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise ModelFormatError(f"Cannot read weights file {str(path)!r}: {error}") from error
    with handle, as_model_format_error(f"Cannot load weights file {str(path)!r}"):
        size = handle.seek(0, os.SEEK_END)
        if size > npz_size_bound(expected):
            raise ModelFormatError(
                f"{str(path)!r} holds {size:,} bytes, more than the {npz_size_bound(expected):,} that the "
                f"{len(expected)} weights of model {model.name!r} can take."
            )
        npz = open_npz(handle, str(path))
        variables, difference = _match_by_structure(variables, npz.namelist(), str(path))
        arrays, problems = read_arrays(npz, _specs(variables), limits, str(path))
        if difference and not skip_mismatch:
            problems.insert(0, difference)
        return _assign_weights(variables, arrays, problems, skip_mismatch)


def _match_by_structure(variables, members, source):
    """``(variables, difference)`` for an ``.npz`` of the members ``members``: when its
    paths are not those of ``variables`` (``{path: Variable}``) but its weights
    line up with them in order, each with the same final name, ``variables``
    keyed by the file's paths and None (``read_arrays`` then checks each shape);
    otherwise ``variables`` unchanged and, unless the paths are the same, a
    sentence naming the first position where the two differ."""
    names = [name.removesuffix(".npy") for name in members]
    # np.savez writes the arrays in the order of its keyword arguments (weight_paths'
    # order, from save_weights) and namelist() lists the members in the order written.
    ours = list(variables)
    if set(names) == set(ours):
        return variables, None
    index = next((i for i, (mine, theirs) in enumerate(zip(ours, names))
                  if mine.rsplit("/", 1)[-1] != theirs.rsplit("/", 1)[-1]), min(len(ours), len(names)))
    if index == len(ours) == len(names):
        return dict(zip(names, variables.values())), None
    mine, theirs = (repr(entries[index]) if index < len(entries) else "nothing" for entries in (ours, names))
    return variables, (f"the weights match neither by name nor by structure (in order, they first differ at "
                       f"weight {index}: {mine} in the model, {theirs} in {source})")


def _specs(variables):
    return {name: (variable.shape, variable.dtype) for name, variable in variables.items()}


def _assign_weights(variables, arrays, problems, skip_mismatch):
    if problems and not skip_mismatch:
        raise ModelFormatError("Cannot load weights: " + "; ".join(problems) + ". Pass skip_mismatch=True to skip them.")
    for name, array in arrays.items():  # read_arrays reads each into memory of its own
        variables[name].assign_loaded(array)
    return problems


# -------------------------------------------------------------- model files
def save_model(model, path):
    """Writes ``model`` (architecture, weights, compile state) to a ``.nw`` file,
    or (architecture and weights) to a Keras 3 ``.keras`` archive."""
    if str(path).endswith(".keras"):
        from engine.files.keras_format.writer import save_keras_model

        return save_keras_model(model, path)
    if not str(path).endswith(".nw"):
        raise ValueError(
            f"save() writes .nw files (nodeweave's own format) and .keras archives (Keras 3's); received path "
            f"{str(path)!r}. Name the file model.nw or model.keras (Keras' legacy .h5 files are not written)."
        )
    if not hasattr(model, "plan"):
        raise NotImplementedError(
            f"Model {model.name!r} ({type(model).__name__}) is a subclassed model: its architecture is the Python "
            "code of its class, which a .nw file does not hold, so the file could not be loaded back. Save its "
            f"weights with model.save_weights('{model.name}.weights.npz') and load them into a new instance "
            "(call it on a batch first), or build the model with the functional API to save it whole."
        )
    atomic_write(path, lambda handle: write_archive(model, handle))


def write_archive(layer, handle):
    """Writes the ``.nw`` archive of ``layer`` (a model or a single layer: its
    config, weights and, when compiled, compile arguments and optimizer state)
    to the binary file object ``handle``."""
    files = {
        "config.json": json.dumps({**serialize_layer(layer), "compile_config": getattr(layer, "_compile_config", None)}),
        "metadata.json": json.dumps({"nodeweave_version": VERSION, "format_version": FORMAT_VERSION,
                                     "date_saved": time.strftime("%Y-%m-%d@%H:%M:%S")}),
        "weights.npz": _npz_bytes({name: v.value for name, v in weight_paths(layer).items()}),
    }
    optimizer = getattr(layer, "optimizer", None)
    if optimizer is not None and getattr(layer, "_compile_config", None) is not None:
        store = {}
        optimizer.save_own_variables(store)
        files["optimizer.npz"] = _npz_bytes(store)
    with zipfile.ZipFile(handle, "w") as archive:
        for name, content in files.items():
            # JSON shrinks well; float arrays hardly do, and deflating them is slow.
            compression = zipfile.ZIP_DEFLATED if name.endswith(".json") else zipfile.ZIP_STORED
            archive.writestr(name, content, compress_type=compression)


def load_model(path, custom_objects=None, compile=True, safe_mode=True, limits=None):
    """Rebuilds a model saved with ``model.save``: architecture, weights and, when
    ``compile``, the optimizer with its state. Also opens Keras 3 ``.keras``
    archives, with our layers and Keras' optimizer state (see
    ``engine.files.keras_format``).

    Args:
        path: the ``.nw`` file, or a ``.keras`` file saved by Keras 3.
        custom_objects: ``{"Name": class_or_function}`` for the user's own layers
            and functions the file names, for this load only.
        compile: whether to compile the model as it was saved.
        safe_mode: True (the default) never imports code named by the file:
            functions of ``Lambda`` layers load only when registered or passed in
            ``custom_objects``. False imports them from their modules; use it only
            for files you trust.
        limits: a ``LoadLimits`` with larger fixed limits, for a huge model.

    Any problem with the file raises ``ModelFormatError`` naming it, within
    bounded time and memory (see ``engine.files.load_limits``).

    Example:
        >>> from engine import Input, Model, load_model
        >>> from layers import Dense
        >>> import os, tempfile
        >>> x = Input(shape=(3,))
        >>> path = os.path.join(tempfile.mkdtemp(), "m.nw")
        >>> Model(x, Dense(2)(x)).save(path)
        >>> load_model(path).output_shape
        (None, 2)
    """
    limits = limits or LoadLimits()
    source = str(path)
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise ModelFormatError(f"Cannot read model file {source!r}: {error}") from error
    with handle, open_archive(handle, source, "a nodeweave or Keras model file") as archive, \
            as_model_format_error(f"Cannot load model file {source!r}"):
        if is_keras_archive(archive):
            return load_keras_archive(archive, source, custom_objects, compile, safe_mode, limits)
        return _load_archive(archive, source, custom_objects, compile, safe_mode, limits)


def load_archive_bytes(data, custom_objects=None, safe_mode=True, limits=None):
    """Rebuilds the layer or model whose ``.nw`` archive ``write_archive`` wrote,
    from its bytes: config, weights and compile state. Unlike ``load_model`` it
    also takes a single layer or a subclassed model (whose class must be
    registered or in ``custom_objects``); a built one is built again from the
    input shapes it was built for before its weights are assigned.

    Example:
        >>> import io
        >>> from layers import Dense
        >>> import numpy as np
        >>> layer = Dense(2)
        >>> _ = layer(np.ones((1, 3), "float32"))
        >>> buffer = io.BytesIO()
        >>> write_archive(layer, buffer)
        >>> load_archive_bytes(buffer.getvalue()).kernel.shape
        (3, 2)
    """
    limits = limits or LoadLimits()
    try:
        stream = io.BytesIO(data)
    except TypeError as error:
        raise ModelFormatError(f"The archive must be bytes, received {type(data).__name__}.") from error
    with open_archive(stream, "<bytes>", "a nodeweave archive") as archive, \
            as_model_format_error("Cannot load the archive bytes"):
        return _load_archive(archive, "<bytes>", custom_objects, True, safe_mode, limits, models_only=False)


@collector_paused()
def _load_archive(archive, path, custom_objects, compile, safe_mode, limits, models_only=True):
    check_members(archive, _MEMBERS, ("config.json", "metadata.json", "weights.npz"), path, limits)
    metadata = read_json_member(archive, "metadata.json", path, limits.max_metadata_bytes, limits,
                                "max_metadata_bytes")
    if not isinstance(metadata, dict) or metadata.get("format_version") != FORMAT_VERSION:
        raise ModelFormatError(
            f"{path!r} has format version {metadata.get('format_version') if isinstance(metadata, dict) else None!r}; "
            f"this nodeweave reads format {FORMAT_VERSION}."
        )
    config = read_json_member(archive, "config.json", path, limits.max_config_bytes, limits, "max_config_bytes")
    if not isinstance(config, dict):
        raise ModelFormatError(f"config.json of {path!r} must hold a JSON object.")
    weights_info = archive.getinfo("weights.npz")
    with loading_scope(custom_objects, safe_mode), \
            weight_budget(weights_info.file_size, f"the size of weights.npz in {path!r}",
                          "The config declares more weights than the file holds: a damaged or hostile file.",
                          filled_from_file=True):
        model = deserialize_layer(config)
        if models_only and graph_layers(model) is None:
            raise ModelFormatError(f"{path!r} holds a {type(model).__name__}, not a model.")
        if graph_layers(model) is None:
            _build_from_config(model, config.get("build_config"), _saved_weight_names(archive, path), path, limits)
    variables = weight_paths(model)
    expected = _specs(variables)
    npz = open_npz_member(archive, "weights.npz", npz_size_bound(expected), limits, path,
                          f"the size of the model's {len(expected)} weights")
    arrays, problems = read_arrays(npz, expected, limits, f"weights.npz in {path}")
    _assign_weights(variables, arrays, problems, False)
    compile_config = config.get("compile_config")
    if compile and compile_config is not None:
        with loading_scope(custom_objects, safe_mode):
            compile_from_config(model, compile_config, repr(path))
        if "optimizer.npz" in archive.namelist():
            _load_optimizer(model.optimizer, model.trainable_weights, archive, path, limits)
    return model


def _saved_weight_names(archive, path):
    """The weight paths ``weights.npz`` holds, from its directory (no array is read)."""
    with archive.open("weights.npz") as member, \
            open_archive(member, f"weights.npz in {path}", "an .npz archive") as npz:
        names = npz.namelist()
    return {name[:-4] for name in names if name.endswith(".npy")}


def _build_from_config(layer, build_config, saved_names, path, limits):
    """Builds a rebuilt layer (or subclassed model) for the input shapes it was
    built for: ``build(input_shape)`` as Keras does, then, when weights the
    archive holds are still missing (sub-layers made in ``call``, any
    subclassed model), one call on a batch of zeros of those shapes (one
    sample, at most ``limits.max_weight_bytes`` of it)."""
    if build_config is None:
        return
    if not (isinstance(build_config, dict) and "input_shape" in build_config):
        raise ModelFormatError(
            f"The build_config of {path!r} must be {{'input_shape': ...}}, received {build_config!r}.")
    shapes = _shapes_from_json(build_config["input_shape"], path)
    layer._maybe_build(_map_shapes(lambda shape: KerasTensor(shape, layer.dtype), shapes))
    Model = extensions.provided("model")  # engine.network.model imports this module
    if saved_names <= set(weight_paths(layer)) and not isinstance(layer, Model):
        return
    sample = [tuple(1 if d is None else d for d in shape) for shape in _flat_shapes(shapes)]
    size = sum(math.prod(shape) for shape in sample) * np.dtype(layer.dtype).itemsize
    if size > limits.max_weight_bytes:
        raise ModelFormatError(
            f"The build_config of {path!r} asks for inputs of shapes {sample}: one sample of {size:,} bytes, more "
            f"than the {limits.max_weight_bytes:,} of max_weight_bytes. If the model is genuine, pass "
            "limits=LoadLimits(max_weight_bytes=...)."
        )
    layer(_map_shapes(lambda shape: np.zeros([1 if d is None else d for d in shape], layer.dtype), shapes))


def _flat_shapes(shapes):
    """The shapes (tuples) of a list or dict of shapes, in order."""
    if isinstance(shapes, tuple):
        return [shapes]
    return [shape for item in (shapes.values() if isinstance(shapes, dict) else shapes) for shape in _flat_shapes(item)]


def _map_shapes(fn, shapes):
    """``fn`` applied to each shape (a tuple) of a list or dict of shapes."""
    if isinstance(shapes, tuple):
        return fn(shapes)
    if isinstance(shapes, dict):
        return {k: _map_shapes(fn, v) for k, v in shapes.items()}
    return [_map_shapes(fn, v) for v in shapes]


def _shapes_from_json(value, path, depth=0):
    """A build shape read back from JSON: a list of ints and None is a shape
    (a tuple); a list or dict of those is a structure of shapes."""
    if depth > 16:
        raise ModelFormatError(f"The build_config input_shape of {path!r} nests too deeply.")
    if isinstance(value, list) and all(d is None or (type(d) is int and d >= 0) for d in value):
        return tuple(value)
    if isinstance(value, list):
        return [_shapes_from_json(v, path, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: _shapes_from_json(v, path, depth + 1) for k, v in value.items()}
    raise ModelFormatError(f"The build_config input_shape of {path!r} must be a shape or a list or dict of "
                           f"shapes, received {value!r}.")


def _load_optimizer(optimizer, trainable, archive, path, limits):
    optimizer.build(trainable)
    current = {}
    optimizer.save_own_variables(current)
    expected = {name: (value.shape, value.dtype) for name, value in current.items()}
    npz = open_npz_member(archive, "optimizer.npz", npz_size_bound(expected), limits, path,
                          f"the size of the optimizer's {len(expected)} variables")
    # An optimizer saved before its first update has no slots yet: load_own_variables
    # accepts that shorter state and checks the count.
    arrays, problems = read_arrays(npz, expected, limits, f"optimizer.npz in {path}", report_missing=False)
    if problems:
        raise ModelFormatError(f"Cannot load the optimizer state of {path!r}: " + "; ".join(problems) + ".")
    optimizer.load_own_variables(arrays)


def to_json(model, **kwargs):
    """The model's architecture as a JSON string."""
    return json.dumps(serialize_layer(model), **kwargs)


def model_from_json(text, custom_objects=None, safe_mode=True, limits=None):
    """Rebuilds a model (fresh weights) from ``to_json``'s output, ours or Keras 3's.

    Args:
        text: the JSON string.
        custom_objects: ``{"Name": class_or_function}`` for this call only.
        safe_mode: True (the default) never imports code named by the JSON;
            False allows it, for JSON you trust.
        limits: a ``LoadLimits``; the JSON may be at most ``max_config_bytes``
            long and create at most ``max_weight_bytes`` of weights, each drawn
            within ``max_initializer_operations``.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> model_from_json(Model(x, Dense(2)(x)).to_json()).output_shape
        (None, 2)
    """
    limits = limits or LoadLimits()
    if isinstance(text, (str, bytes, bytearray)) and len(text) > limits.max_config_bytes:
        raise ModelFormatError(
            f"The model JSON is {len(text):,} characters long, more than max_config_bytes="
            f"{limits.max_config_bytes:,}; pass limits=LoadLimits(max_config_bytes=...) if it is genuine."
        )
    config = parse_json(text, "The model JSON")
    with as_model_format_error("Cannot rebuild the model from JSON"), loading_scope(custom_objects, safe_mode), \
            weight_budget(limits.max_weight_bytes, "max_weight_bytes of the LoadLimits",
                          "If the model is genuine, pass limits=LoadLimits(max_weight_bytes=...).",
                          max_operations=limits.max_initializer_operations):
        return deserialize_layer(as_nodeweave_entry(config))


# ------------------------------------------------------------------ helpers
def _check_extension(path, extension, what):
    if not str(path).endswith(extension):
        raise ValueError(f"{what}() writes and reads {extension} files; received path {str(path)!r}.")


def _npz_bytes(arrays):
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()
