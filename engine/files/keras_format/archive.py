"""Reading a Keras 3 ``.keras`` archive: ``config.json`` (the model, as Keras
serializes it), ``metadata.json`` (Keras version, date) and
``model.weights.h5`` (the weights, in Keras' layout), each read within the
limits of ``engine.files.load_limits``."""

import zipfile

from engine.files.compile_config import compile_from_config
from engine.errors import ModelFormatError
from engine.network.functional_config import deserialize_layer
from engine.files.keras_format.config_reader import is_keras_entry, to_nodeweave_compile_config, to_nodeweave_entry
from engine.files.keras_format.weights_h5 import (keras_variable_paths, layer_count, load_optimizer_state, opened,
                                                  read_datasets, size_bound)
from engine.files.load_limits import LoadLimits, check_members, read_json_member, weight_budget
from engine.network.module import Module
from engine.files.registry import loading_scope
from engine.files.zip_member import ZipMember

MEMBERS = ("config.json", "metadata.json", "model.weights.h5")


def is_keras_archive(archive: zipfile.ZipFile) -> bool:
    """Whether the open ``zipfile.ZipFile`` is a Keras 3 model archive (it holds ``model.weights.h5``)."""
    return "model.weights.h5" in archive.namelist()


def load_keras_archive(archive: zipfile.ZipFile, source: str, custom_objects: dict | None, compile: bool,
                       safe_mode: bool, limits: LoadLimits) -> Module:
    """Rebuilds the model of a Keras 3 archive with our layers, with its weights
    and, when ``compile``, compiled as Keras saved it, its optimizer holding
    the state Keras saved (moments, iteration count), so training goes on
    where Keras left off.

    Args:
        archive: the open ``zipfile.ZipFile``.
        source: names the file in errors.
        custom_objects: ``{"Name": class_or_function}`` for the file's own layers.
        compile: whether to compile the model with the arguments it was compiled with.
        safe_mode: refuse functions the file names by module (True), or import
            their modules (False, for files you trust); bytecode is never loaded.
        limits: the ``LoadLimits`` of this load.

    Raises:
        ModelFormatError: a damaged or hostile archive, a class nodeweave does
            not know (naming it and how to pass it), weights that do not fit,
            or (when ``compile``) compile arguments or optimizer state that do
            not fit ours.
    """
    check_members(archive, set(MEMBERS), ("config.json", "model.weights.h5"), source, limits)
    if "metadata.json" in archive.namelist():
        metadata = read_json_member(archive, "metadata.json", source, limits.max_metadata_bytes, limits,
                                    "max_metadata_bytes")
        if not isinstance(metadata, dict):
            raise ModelFormatError(f"metadata.json of {source!r} must hold a JSON object.")
    config = read_json_member(archive, "config.json", source, limits.max_config_bytes, limits, "max_config_bytes")
    if not is_keras_entry(config):
        raise ModelFormatError(
            f"config.json of {source!r} is not a Keras 3 model config ({{'module', 'class_name', 'config', ...}}).")
    weights = archive.getinfo("model.weights.h5")
    with loading_scope(custom_objects, safe_mode), \
            weight_budget(weights.file_size, f"the size of model.weights.h5 in {source!r}",
                          "The config declares more weights than the file holds: a damaged or hostile file.",
                          filled_from_file=True):  # read_datasets assigns every weight or the load fails
        model = deserialize_layer(to_nodeweave_entry(config))
    if not hasattr(type(model), "plan"):
        raise ModelFormatError(f"{source!r} holds a {type(model).__name__}, not a functional or Sequential model.")
    paths = keras_variable_paths(model, config)
    compiled = bool(config.get("compile_config"))
    member = ZipMember(archive, "model.weights.h5", size_bound(paths, layer_count(model), compiled),
                       limits, source, f"the size of the model's {len(paths)} weights"
                       + (" and its optimizer's state" if compiled else ""))
    with opened(member.stream, source) as file:
        arrays, problems = read_datasets(file, paths, source, member)
        if problems:
            raise ModelFormatError(next(iter(problems.values())))
        if compile and compiled:
            _compile(model, config["compile_config"], source, custom_objects, safe_mode)
            trainable = {id(variable) for variable in model.trainable_weights}
            _load_optimizer_state(model, file, member, [v for v in paths.values() if id(v) in trainable], source)
        member.verify()
    for path, array in arrays.items():
        paths[path].assign_loaded(array)
    return model


def _compile(model, compile_config, source, custom_objects, safe_mode):
    """Compiles ``model`` with the arguments Keras saved (``compile_config``);
    ModelFormatError naming the field of one we cannot apply."""
    with loading_scope(custom_objects, safe_mode):
        compile_from_config(model, to_nodeweave_compile_config(compile_config), repr(source))


def _load_optimizer_state(model, file, member, trainable_in_keras_order, source):
    """Builds the compiled model's optimizer on its trainable weights and fills
    it with the state Keras saved in ``optimizer/vars`` (of the open weights
    ``file``, read from ``member``), so training goes on where Keras left off."""
    optimizer = model.optimizer
    optimizer.build(model.trainable_weights)
    problem = load_optimizer_state(file, optimizer, trainable_in_keras_order, source, member)
    if problem is not None:
        raise ModelFormatError(
            f"The model of {source!r} loads, but the optimizer state Keras saved with it does not fit optimizer "
            f"{optimizer.name!r}: {problem}. Load it with compile=False and compile it yourself (training then "
            "starts with a fresh optimizer).")
