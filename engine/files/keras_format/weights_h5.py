"""Keras 3's weight file, ``model.weights.h5``, in Keras' own layout.

Keras does not address weights by layer name: it walks the model and names
each layer in a container after its class (``dense``, ``dense_1``, ...; see
``catalog.unique_names``), in the order of ``model.layers``. A layer's
variables are the datasets ``vars/0..n`` of its group, trainable ones first;
sub-layers held in attributes have groups named after the attribute
(``bidirectional/forward_layer/cell/vars/0``); a nested model's layers sit
under ``layers/``. A layer reached twice (shared between nested models) is
saved the first time only. The reader names a model's layers in the order of
the config it reads, and lays out each layer as the writer does. A compiled
model's optimizer keeps its variables in ``optimizer/vars/0..n``
(``load_optimizer_state``).

The file's HDF5 structure is read by our own code (``h5_reader``), not by
libhdf5, whose allocations follow the sizes in the file's headers (one changed
byte made it allocate 18.9 GB): every size is checked against the file, and
all the structure read together may not exceed the file's size. Each
dataset's shape and dtype are checked against the weight it fills before it
is read, so a hostile file cannot make us allocate more than the model's own
weights; and its storage too: Keras writes plain contiguous datasets, so a
dataset reached through a soft or external link, a virtual dataset, one whose
bytes live in another file (external storage: any file on this machine) or
one stored in filtered chunks (a gzip chunk inflating to gigabytes, a filter
plugin HDF5 would load) is refused before anything is read.
"""

import contextlib
import math

import numpy as np

from engine.errors import ModelFormatError
from engine.files.keras_format import catalog
from engine.files.keras_format.h5_reader import Dataset, H5File
from engine.files.keras_format.write_compile import keras_ordered_variables
from engine.network.module import Module
from engine.network.variable import Variable
from engine.files.zip_member import ZipMember, readinto_at

# HDF5 bytes allowed beside the data: per object (a group or a dataset: its
# header, name and B-tree entries) and for the file (superblock, root group).
_BYTES_PER_OBJECT = 4096
_BYTES_PER_FILE = 2**20
# A compiled model's file also holds its optimizer's variables: at most this many per weight
# (Adam with amsgrad keeps 3, and an exponential moving average of the weights adds 1).
_OPTIMIZER_SLOTS = 4


def keras_variable_paths(model: Module, keras_entry: dict) -> dict[str, Variable]:
    """``{path in model.weights.h5: Variable}`` for ``model``, rebuilt from the
    Keras 3 config entry ``keras_entry`` (whose layer order the file follows).

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> model = Model(x, Dense(2, name="d")(x))
        >>> entry = {"class_name": "Functional", "config": {"layers": [
        ...     {"class_name": "InputLayer", "config": {"name": "x"}},
        ...     {"class_name": "Dense", "config": {"name": "d"}}]}}
        >>> sorted(keras_variable_paths(model, entry))
        ['layers/dense/vars/0', 'layers/dense/vars/1']
    """
    paths, seen = {}, set()
    _model_paths(model, keras_entry, "", paths, seen)
    return paths


def _model_paths(model, entry, prefix, paths, seen):
    """The paths of a model's weights, its layers named in the order of the
    Keras config the file was saved with; each layer's own layout is the one
    the writer uses (``write_weights.keras_weight_entries``)."""
    from engine.files.keras_format.write_weights import keras_weight_entries

    entries = [item for item in entry["config"]["layers"] if not catalog.is_op(item.get("module"))]
    if entry["class_name"] == "Sequential":  # Keras' Sequential.layers leaves out its InputLayer
        entries = [item for item in entries if item["class_name"] != "InputLayer"]
    by_name = {}
    for layer in model.layers:  # get_layer per entry copies and scans model.layers: quadratic in the layers
        by_name.setdefault(layer.name, layer)
    for name, item in zip(catalog.unique_names([item["class_name"] for item in entries]), entries):
        layer_name = item.get("name", item["config"].get("name"))
        layer = by_name.get(layer_name)
        if layer is None:
            layer = model.get_layer(layer_name)  # raises, naming the layers there are
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        if isinstance(item["config"].get("layers"), list) and hasattr(type(layer), "plan"):
            _model_paths(layer, item, f"{prefix}layers/{name}/", paths, seen)
            continue
        for path, variable in keras_weight_entries(layer, f"{prefix}layers/{name}/"):
            if id(variable) not in seen:  # a layer two models share is saved where first met
                seen.add(id(variable))
                paths[path] = variable


def layer_count(model: Module) -> int:
    """How many layers ``model`` holds, nested models' included (each has its groups in a weight file).

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> layer_count(Model(x, Dense(2)(x)))
        3
    """
    return 1 + sum(layer_count(layer) if hasattr(type(layer), "plan") else 1 for layer in model.layers)


def size_bound(paths: dict[str, Variable], layer_count: int, compiled: bool) -> int:
    """The most bytes a ``model.weights.h5`` can take that holds the weights
    ``paths`` of a model of ``layer_count`` layers (each has its groups, even
    without weights) and, when ``compiled``, its optimizer's variables."""
    copies = 1 + (_OPTIMIZER_SLOTS if compiled else 0)
    data = sum(math.prod(variable.shape) * np.dtype(variable.dtype).itemsize for variable in paths.values())
    return copies * (data + _BYTES_PER_OBJECT * len(paths)) + _BYTES_PER_OBJECT * 2 * layer_count + _BYTES_PER_FILE


@contextlib.contextmanager
def opened(stream, source: str):
    """The HDF5 file in the seekable binary ``stream`` (an open file, a
    ``ZipMember``'s stream, ``io.BytesIO``), open for reading as an
    ``h5_reader.H5File``; a file that is not HDF5 as Keras writes it, or that
    has a user block (bytes before the HDF5 data, which Keras never writes),
    is refused with a ModelFormatError naming ``source``.

    Example:
        >>> import io
        >>> with opened(io.BytesIO(b"not HDF5"), "m.weights.h5") as file:  # doctest: +IGNORE_EXCEPTION_DETAIL
        ...     pass
        Traceback (most recent call last):
        engine.errors.ModelFormatError: The weights file of 'm.weights.h5' cannot be read: ...
    """
    try:
        yield H5File(stream, source)
    except OSError as error:  # a stream that fails to read
        raise ModelFormatError(f"The weights file of {source!r} cannot be read: {error}") from error


def read_datasets(file, paths: dict[str, Variable], source: str, member: ZipMember | None = None) -> tuple[dict, dict]:
    """Reads the dataset of each Variable of ``paths`` from the open HDF5 ``file``:
    with ``member``, the ``ZipMember`` the file is read from, straight from it
    into each array (``verify`` then checks the member's CRC); without, from ``file``'s own stream.

    Each ``vars`` group is one Keras object (a layer, an RNN's cell), which
    fits as a whole or not at all, as Keras loads it: a group with a weight
    missing or of another shape, or holding more weights than the object has,
    is described in the problems and none of its arrays is returned.

    Args:
        file: the open ``H5File`` (``opened``).
        paths: ``{dataset path: Variable}``.
        source: names the file in messages.
        member: the ``ZipMember`` that ``file`` was opened on, if any.

    Returns:
        ``(arrays, problems)``: ``{path: array}`` for the groups that fit (each
        array in memory of its own, for ``Variable.assign_loaded``), and
        ``{group path: sentence}`` for those that do not.

    Raises:
        ModelFormatError: a dataset not stored as Keras stores weights (a
            link, external or chunked storage), not of numbers, or of
            another kind of number than its Variable (float for an integer).

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> import io
        >>> from engine.files.keras_format.write_weights import keras_weight_paths, write_weights_h5
        >>> x = Input(shape=(3,))
        >>> wider = Model(x, Dense(4)(x))
        >>> written = io.BytesIO()
        >>> write_weights_h5(Model(x, Dense(2)(x)), written)
        >>> with opened(written, "m.weights.h5") as file:
        ...     arrays, problems = read_datasets(file, keras_weight_paths(wider), "m.weights.h5")
        >>> arrays, list(problems)
        ({}, ['layers/dense/vars'])
    """
    groups = {}
    for path, variable in paths.items():
        groups.setdefault(path.rsplit("/", 1)[0], []).append((path, variable))
    arrays, problems = {}, {}
    for group, members in groups.items():
        found, problem = {}, None
        for path, variable in members:
            item = _read_dataset(file, path, variable, source, member)
            if isinstance(item, str):
                problem = item
                break
            found[path] = item
        held = len(file.members(group)) if problem is None else len(members)
        if held != len(members):
            problem = (f"{source!r} holds {held} weights in {group!r} but the layer there has {len(members)}: "
                       "the file is not the weights of this architecture.")
        if problem is None:
            arrays.update(found)
        else:
            problems[group] = problem
    return arrays, problems


def load_optimizer_state(file, optimizer, trainable_in_keras_order: list, source: str,
                         member: ZipMember | None = None) -> str | None:
    """Fills the built ``optimizer`` with the state ``optimizer/vars/0..n`` of
    the open HDF5 ``file`` holds, if any. Keras keeps the slots in its order
    of the model's trainable weights; ``write_compile.keras_ordered_variables``
    maps that order to the optimizer's, as it does for writing. Every dataset
    is read and checked before the optimizer's ``load_own_variables`` takes
    them (and checks their count: an optimizer saved before its first update
    holds only its iteration count and learning rate).

    Args:
        file: the open ``H5File`` (``opened``).
        optimizer: a built optimizer.
        trainable_in_keras_order: the Variables it updates, in the order of
            Keras' ``model.trainable_variables``.
        source: names the file in messages.
        member: the ``ZipMember`` that ``file`` was opened on, if any (``read_datasets``).

    Returns:
        None when the state was loaded or the file holds none; a sentence
        saying why when it does not fit ``optimizer`` (left unchanged).

    Raises:
        ModelFormatError: a dataset not stored as Keras stores weights, not
            of numbers, or of another kind of number than its Variable.

    Example:
        >>> import io
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from engine.training.optimizers import Adam
        >>> from layers import Dense
        >>> from engine.files.keras_format.write_weights import write_weights_h5
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(2)(x))
        >>> model.compile(optimizer="adam", loss="mse")
        >>> model.fit(np.ones((2, 3)), np.ones((2, 2)), verbose=0)  # doctest: +ELLIPSIS
        <...History...>
        >>> resumed = Adam()
        >>> resumed.build(model.trainable_weights)
        >>> written = io.BytesIO()
        >>> write_weights_h5(model, written)
        >>> with opened(written, "m.weights.h5") as file:
        ...     load_optimizer_state(file, resumed, model.trainable_weights, "m.weights.h5")
        >>> resumed.iterations
        1
    """
    if file.link("optimizer") is None:
        return None
    group = file.get("optimizer/vars")
    if not isinstance(group, dict):
        raise ModelFormatError(f"'optimizer/vars' in {source!r} is not a group of the optimizer's variables.")
    ordered = keras_ordered_variables(optimizer, trainable_in_keras_order)
    if ordered is None:
        return "its slots cannot be matched to Keras' order of the model's trainable weights"
    if len(group) > len(ordered):
        return f"the file holds {len(group)} optimizer variables, but the optimizer has {len(ordered)}"
    position = {id(variable): index for index, variable in enumerate(optimizer.variables)}
    store = {}
    for index, variable in enumerate(ordered[:len(group)]):
        array = _read_dataset(file, f"optimizer/vars/{index}", variable, source, member)
        if isinstance(array, str):
            return array
        store[str(position[id(variable)])] = array
    try:
        optimizer.load_own_variables(store)
    except ValueError as error:  # a count that is neither the built nor the unbuilt optimizer's
        return str(error)
    return None


def _read_dataset(file, path, variable, source, member):
    """The array at ``path``, or a sentence saying why it does not fit ``variable``."""
    dataset = file.get(path)
    if dataset is None:
        return f"{source!r} has no weight {path!r}, which holds {_describe(variable)}."
    if not isinstance(dataset, Dataset):
        raise ModelFormatError(f"{path!r} in {source!r} is not a dataset; it should hold {_describe(variable)}.")
    dtype = dataset.dtype
    if dtype.kind != np.dtype(variable.dtype).kind:  # the rule of the .nw reader (engine.files.npz_arrays)
        raise ModelFormatError(
            f"Weight {path!r} in {source!r} has dtype {dtype}, but it fills {_describe(variable)} and dtype "
            f"{np.dtype(variable.dtype)}: a value of one kind of number (bool, signed or unsigned integer, float) "
            "does not fit another (a float of 1e300 read into an int64 would become -2**63), so the file is "
            "damaged or not the weights of this model.")
    if dataset.shape != tuple(variable.shape):
        return f"Weight {path!r} in {source!r} has shape {dataset.shape}, but it fills {_describe(variable)}."
    if dataset.address is None and dataset.compact is None:
        raise ModelFormatError(f"Weight {path!r} in {source!r} was never written: the file is damaged.")
    if dataset.stored_size != dataset.nbytes:
        raise ModelFormatError(f"Weight {path!r} in {source!r} stores {dataset.stored_size:,} bytes "
                               f"for {dataset.nbytes:,} bytes of data: the file is damaged or forged.")
    array = np.empty(dataset.shape, dtype)
    if dataset.compact is not None:
        memoryview(array).cast("B")[:] = dataset.compact
    elif member is not None:
        member.read_into(dataset.address, array, f"Weight {path!r}")
    elif dataset.address + array.nbytes > file.size or \
            readinto_at(file.stream, dataset.address, memoryview(array).cast("B")) < array.nbytes:
        raise ModelFormatError(f"Weight {path!r} in {source!r} lies past the end of the file: the file is "
                               "truncated or damaged.")
    return array


def _describe(variable):
    return f"weight {getattr(variable, 'path', variable.name)!r} of shape {tuple(variable.shape)}"
