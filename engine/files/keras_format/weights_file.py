"""Keras 3's weight files for ``save_weights`` and ``load_weights``: a
``.weights.h5`` file, and the weights of a ``.keras`` archive.

Both hold ``model.weights.h5`` in Keras' layout (``write_weights``), where
a layer's group is named after its class and its rank among the model's
layers (``layers/dense_1/vars/0``), never after the layer's own name: weights
match by structure, so a second instance of an architecture loads the
weights of the first, in Keras and here. Keras also keeps a compiled model's
optimizer state in the file (``optimizer/vars``); it is written when the
model is compiled, and read into the optimizer of a compiled model.

Reads are bounded as for ``.keras`` archives: the file's size by the
model's weights and optimizer slots (``weights_h5.size_bound``), and each
dataset's shape and storage before it is read (``weights_h5``). A
``.keras`` archive's weights are read in place and its CRC checked
(``engine.files.zip_member``) before anything is assigned.
"""

import contextlib
import os
import warnings

from engine.files.atomic_file import atomic_write
from engine.errors import ModelFormatError
from engine.files.keras_format.archive import MEMBERS
from engine.files.keras_format.weights_h5 import layer_count, load_optimizer_state, opened, read_datasets, size_bound
from engine.files.keras_format.write_weights import keras_weight_paths, write_weights_h5
from engine.files.load_limits import LoadLimits, check_members
from engine.network.module import Module
from engine.files.zip_member import ZipMember, open_archive

SAVE_SUFFIXES = (".weights.h5", ".npz")
LOAD_SUFFIXES = (".weights.h5", ".keras", ".npz")


def check_suffix(path: str | os.PathLike, suffixes: tuple, what: str) -> None:
    """Raises ValueError unless ``path`` ends in one of ``suffixes``;
    ``what`` names the method (``save_weights``) in the message.

    Example:
        >>> check_suffix("ckpt.h5", SAVE_SUFFIXES, "save_weights")
        Traceback (most recent call last):
        ValueError: save_weights() needs a filename ending in `.weights.h5` (Keras 3's weight file) or `.npz`. \
Received: filepath=ckpt.h5
    """
    if not str(path).endswith(suffixes):
        names = [f"`{suffix}`" + (" (Keras 3's weight file)" if suffix == ".weights.h5" else "")
                 for suffix in suffixes]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        raise ValueError(f"{what}() needs a filename ending in {listed}. Received: filepath={path}")


def save_weights_h5(model: Module, path: str | os.PathLike) -> None:
    """Writes the weights of ``model`` to ``path`` (a ``.weights.h5`` file) as
    Keras 3's ``save_weights`` does, its optimizer's state included when it is
    compiled; atomically, through a temporary file.

    Args:
        model: a built functional or Sequential model.
        path: the file to write.

    Raises:
        ValueError: the model is not built, or a layer keeps weights where
            Keras has no place for them (named in the message).
        NotImplementedError: a subclassed model.

    Example:
        >>> import os, tempfile, h5py
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> path = os.path.join(tempfile.mkdtemp(), "m.weights.h5")
        >>> save_weights_h5(Model(x, Dense(2)(x)), path)
        >>> sorted(h5py.File(path)["layers/dense/vars"])
        ['0', '1']
    """
    _check_model(model, "saving", "saved to")
    atomic_write(path, lambda handle: write_weights_h5(model, handle))


def load_keras_weights(model: Module, path: str | os.PathLike, skip_mismatch: bool = False) -> list[str]:
    """Reads Keras' weights of ``path`` (a ``.weights.h5`` file, or the
    ``model.weights.h5`` of a ``.keras`` archive) into ``model``.

    Every weight is read and checked before any is assigned, so a failed load
    leaves the model as it was. A compiled model's optimizer also gets the
    state the file holds, built on the model's trainable weights first; when
    that state does not fit the optimizer, a warning says so and the
    optimizer keeps its own, as Keras does.

    Args:
        model: a built functional or Sequential model.
        path: the ``.weights.h5`` or ``.keras`` file.
        skip_mismatch: skip the layers whose weights do not fit (missing,
            of another shape or count) instead of raising, as Keras does.

    Returns:
        A message for each layer skipped (empty when all loaded).

    Raises:
        ModelFormatError: weights that do not fit (without ``skip_mismatch``;
            the message names the weight), or a damaged or hostile file.
        ValueError: the model is not built.
        NotImplementedError: a subclassed model.

    Example:
        >>> import os, tempfile
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> saved, copy = Model(x, Dense(2)(x)), Model(x, Dense(2)(x))
        >>> path = os.path.join(tempfile.mkdtemp(), "m.weights.h5")
        >>> save_weights_h5(saved, path)
        >>> load_keras_weights(copy, path)
        []
        >>> bool(np.all(copy.layers[1].kernel.numpy() == saved.layers[1].kernel.numpy()))
        True
    """
    _check_model(model, "loading weights into", "loaded into")
    source = str(path)
    paths = keras_weight_paths(model)
    # A file Keras or we saved from a compiled model also holds the optimizer's slots.
    bound = size_bound(paths, layer_count(model), compiled=True)
    optimizer = getattr(model, "optimizer", None) if getattr(model, "_compile_config", None) is not None else None
    with _weights_stream(path, bound, model) as (stream, member), opened(stream, source) as file:
        arrays, problems = read_datasets(file, paths, source, member)
        if problems and not skip_mismatch:
            raise ModelFormatError(
                f"Cannot load the weights of {source!r} into model {model.name!r}: " + " ".join(problems.values())
                + " Pass skip_mismatch=True to skip the layers that do not fit.")
        if member is not None:
            member.verify()  # before the optimizer takes any of it
        if optimizer is not None:
            optimizer.build(model.trainable_weights)
            trainable = {id(variable) for variable in model.trainable_weights}
            problem = load_optimizer_state(file, optimizer, [v for v in paths.values() if id(v) in trainable], source)
            if problem is not None:
                warnings.warn(f"The optimizer state in {source!r} is not loaded into optimizer {optimizer.name!r}, "
                              f"which keeps its own: {problem}.", stacklevel=3)
    for path_in_file, array in arrays.items():
        paths[path_in_file].assign_loaded(array)
    return [f"Skipped {group!r}: {problem}" for group, problem in problems.items()]


def _check_model(model, doing, done):
    if not hasattr(type(model), "plan"):
        raise NotImplementedError(
            f"Model {model.name!r} ({type(model).__name__}) is a subclassed model: Keras names its weights in a "
            f"Keras weight file after the attributes it walks, which nodeweave does not reproduce, so they cannot "
            f"be {done} a Keras weight file. Use an .npz file, or build the model with the functional API.")
    if not model.built:
        raise ValueError(
            f"You are {doing} model {model.name!r}, which has not yet been built. Build it first by calling it on "
            "some data (or model.build(input_shape)).")


@contextlib.contextmanager
def _weights_stream(path, bound, model):
    """``(stream, member)``: the open ``.weights.h5`` file and None, or for a
    ``.keras`` archive its ``model.weights.h5`` as a ``ZipMember`` (read in
    place; its CRC is checked by ``verify``) and that member; each within
    ``bound`` bytes."""
    source = str(path)
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise ModelFormatError(f"Cannot read weights file {source!r}: {error}") from error
    with handle:
        if not source.endswith(".keras"):
            size = handle.seek(0, os.SEEK_END)
            if size > bound:
                raise ModelFormatError(
                    f"{source!r} holds {size:,} bytes, more than the {bound:,} that the weights of model "
                    f"{model.name!r} and its optimizer's state can take: it is not the weights of this model.")
            yield handle, None
            return
        archive = open_archive(handle, source, "a Keras archive")
        limits = LoadLimits()
        check_members(archive, set(MEMBERS), ("model.weights.h5",), source, limits)
        member = ZipMember(archive, "model.weights.h5", bound, limits, source,
                           f"the size of the weights of model {model.name!r} and its optimizer's state")
        yield member.stream, member
