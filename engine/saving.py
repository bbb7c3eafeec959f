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
import os
import tempfile
import time
import zipfile

import numpy as np

from engine.errors import ModelFormatError
from engine.functional_config import deserialize_layer, serialize_layer
from engine.registry import custom_object_scope, loading_options

FORMAT_VERSION = 1
VERSION = "0.1.0"


# ----------------------------------------------------------------- weights
def weight_paths(model):
    """``{path: Variable}`` for every weight of ``model``, each once. Paths are
    the variables' own (``dense/kernel``), prefixed by the names of the nested
    models they sit in (``encoder/dense/kernel``)."""
    paths, seen = {}, set()
    stack = [("", model)]
    while stack:
        prefix, current = stack.pop()
        sub_models = []
        for layer in _layers_of(current):
            if hasattr(layer, "plan") and layer is not current:
                sub_models.append((f"{prefix}{layer.name}/", layer))
                continue
            for variable in layer.weights:
                if id(variable) not in seen:
                    seen.add(id(variable))
                    paths[prefix + variable.path] = variable
        stack.extend(reversed(sub_models))
    return paths


def _layers_of(model):
    return list(model.plan.layers) if hasattr(model, "plan") else [model]


def save_weights(model, path):
    """Writes every weight to an ``.npz`` file, keyed by weight path."""
    _check_extension(path, ".npz", "save_weights")
    arrays = {name: variable.value for name, variable in weight_paths(model).items()}
    _atomic_write(path, lambda handle: np.savez(handle, **arrays))


def load_weights(model, path, skip_mismatch=False):
    """Reads weights saved by ``save_weights``, matched by path.

    A weight missing from the file, one the model does not have, or one with
    another shape is an error naming it; with ``skip_mismatch=True`` those are
    skipped and returned as a list of messages.
    """
    _check_extension(path, ".npz", "load_weights")
    with open(path, "rb") as handle:
        arrays = _read_npz(handle.read(), path)
    return _assign_weights(model, arrays, skip_mismatch, path)


def _assign_weights(model, arrays, skip_mismatch, source):
    variables = weight_paths(model)
    problems = []
    problems += [f"weight {p!r} of the model is missing from {source}" for p in variables if p not in arrays]
    problems += [f"{source} has weight {p!r}, which the model does not have" for p in arrays if p not in variables]
    matched = []
    for name, variable in variables.items():
        if name not in arrays:
            continue
        array = arrays[name]
        if array.shape != variable.shape:
            problems.append(f"weight {name!r} has shape {variable.shape} in the model but {array.shape} in {source}")
        elif array.dtype.kind != variable.dtype.kind:
            problems.append(f"weight {name!r} has dtype {variable.dtype} in the model but {array.dtype} in {source}")
        else:
            matched.append((variable, array))
    if problems and not skip_mismatch:
        raise ModelFormatError("Cannot load weights: " + "; ".join(problems) + ". Pass skip_mismatch=True to skip them.")
    for variable, array in matched:
        variable.assign(array)
    return problems


# -------------------------------------------------------------- model files
def save_model(model, path):
    """Writes ``model`` (architecture, weights, compile state) to a ``.nw`` file."""
    _check_extension(path, ".nw", "save")
    files = {
        "config.json": json.dumps({**serialize_layer(model), "compile_config": getattr(model, "_compile_config", None)}),
        "metadata.json": json.dumps({"nodeweave_version": VERSION, "format_version": FORMAT_VERSION,
                                     "date_saved": time.strftime("%Y-%m-%d@%H:%M:%S")}),
        "weights.npz": _npz_bytes({name: v.value for name, v in weight_paths(model).items()}),
    }
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and getattr(model, "_compile_config", None) is not None:
        store = {}
        optimizer.save_own_variables(store)
        files["optimizer.npz"] = _npz_bytes(store)

    def write(handle):
        with zipfile.ZipFile(handle, "w") as archive:
            for name, content in files.items():
                # JSON shrinks well; float arrays hardly do, and deflating them is slow.
                compression = zipfile.ZIP_DEFLATED if name.endswith(".json") else zipfile.ZIP_STORED
                archive.writestr(name, content, compress_type=compression)

    _atomic_write(path, write)


def load_model(path, custom_objects=None, compile=True, safe_mode=True):
    """Rebuilds a model saved with ``model.save``: architecture, weights and, when
    ``compile``, the optimizer with its state. Any problem with the file raises
    ``ModelFormatError`` naming it."""
    try:
        with open(path, "rb") as handle:
            content = handle.read()
    except OSError as error:
        raise ModelFormatError(f"Cannot read model file {path!r}: {error}") from error
    try:
        return _load_archive(content, path, custom_objects, compile, safe_mode)
    except ModelFormatError:
        raise
    except Exception as error:  # every other failure of a hostile file becomes the documented type
        raise ModelFormatError(f"Cannot load model file {path!r}: {type(error).__name__}: {error}") from error


def _load_archive(content, path, custom_objects, compile, safe_mode):
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
        names = set(archive.namelist())
    except zipfile.BadZipFile as error:
        raise ModelFormatError(f"{path!r} is not a nodeweave model file (not a zip archive: {error}).") from error
    for required in ("config.json", "metadata.json", "weights.npz"):
        if required not in names:
            raise ModelFormatError(f"{path!r} is not a complete nodeweave model file: it has no {required}.")
    metadata = _read_json(archive, "metadata.json", path)
    if not isinstance(metadata, dict) or metadata.get("format_version") != FORMAT_VERSION:
        raise ModelFormatError(
            f"{path!r} has format version {metadata.get('format_version') if isinstance(metadata, dict) else None!r}; "
            f"this nodeweave reads format {FORMAT_VERSION}."
        )
    config = _read_json(archive, "config.json", path)
    if not isinstance(config, dict):
        raise ModelFormatError(f"config.json of {path!r} must hold a JSON object.")
    with custom_object_scope(custom_objects), loading_options(safe_mode=safe_mode):
        model = deserialize_layer(config)
        if not hasattr(model, "plan"):
            raise ModelFormatError(f"{path!r} holds a {type(model).__name__}, not a model.")
        _assign_weights(model, _read_npz(archive.read("weights.npz"), path), False, path)
        compile_config = config.get("compile_config")
        if compile and compile_config is not None:
            _compile_from_config(model, compile_config, path)
            if "optimizer.npz" in names:
                model.optimizer.build(model.trainable_weights)
                model.optimizer.load_own_variables(_read_npz(archive.read("optimizer.npz"), path))
    return model


def _compile_from_config(model, config, path):
    from engine import losses, metrics, optimizers

    if not isinstance(config, dict):
        raise ModelFormatError(f"compile_config of {path!r} must be a JSON object.")

    def structure(value, module):
        if isinstance(value, list):
            return [structure(v, module) for v in value]
        if isinstance(value, dict) and "class_name" not in value:
            return {k: structure(v, module) for k, v in value.items()}
        return value if value is None or isinstance(value, str) else module.get(value)

    model.compile(
        optimizer=optimizers.get(config.get("optimizer", "rmsprop")),
        loss=structure(config.get("loss"), losses),
        metrics=structure(config.get("metrics"), metrics) if config.get("metrics") is not None else None,
        loss_weights=config.get("loss_weights"),
    )


def to_json(model, **kwargs):
    """The model's architecture as a JSON string."""
    return json.dumps(serialize_layer(model), **kwargs)


def model_from_json(text, custom_objects=None):
    """Rebuilds a model (fresh weights) from ``to_json``'s output."""
    try:
        config = json.loads(text)
    except (TypeError, json.JSONDecodeError) as error:
        raise ModelFormatError(f"The model JSON is malformed: {error}") from error
    try:
        with custom_object_scope(custom_objects):
            return deserialize_layer(config)
    except ModelFormatError:
        raise
    except Exception as error:
        raise ModelFormatError(f"Cannot rebuild the model from JSON: {type(error).__name__}: {error}") from error


# ------------------------------------------------------------------ helpers
def _check_extension(path, extension, what):
    if not str(path).endswith(extension):
        raise ValueError(f"{what}() writes and reads {extension} files; received path {str(path)!r}.")


def _npz_bytes(arrays):
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _read_npz(content, source):
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except Exception as error:
        raise ModelFormatError(f"The arrays in {source!r} cannot be read: {type(error).__name__}: {error}") from error


def _read_json(archive, name, path):
    try:
        return json.loads(archive.read(name).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, zipfile.BadZipFile, OSError) as error:
        raise ModelFormatError(f"{name} in {path!r} is not valid JSON: {error}") from error


def _atomic_write(path, write):
    """Runs ``write(handle)`` into a temporary file beside ``path``, then renames
    it over ``path``; on any failure the previous file is left as it was."""
    folder = os.path.dirname(os.path.abspath(path))
    handle = tempfile.NamedTemporaryFile(dir=folder, prefix=".nodeweave-", suffix=".tmp", delete=False)
    try:
        with handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, path)
    except BaseException:
        if os.path.exists(handle.name):
            os.unlink(handle.name)
        raise

