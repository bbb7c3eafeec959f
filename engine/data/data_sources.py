"""Data ``fit`` reads batch by batch instead of holding it in memory: arrays
on disk (``numpy.memmap``, zarr and Dask arrays), a ``PyDataset``, and Python
generators.

Every source has the batching interface of the in-memory ``TrainingData``, so
``fit`` runs one loop over any of them:

- ``size``: the number of samples (None when unknown: PyDataset, generator);
- ``steps(batch_size)``: the batches in one pass over the data (None when unknown);
- ``batches(batch_size, shuffle, rng)``: one pass, as ``TrainingData`` batches,
  each mapped onto the model's inputs and outputs and checked by the same code
  as in-memory data (the ``prepare_batch`` function a source is given);
- ``split(fraction)``: ``validation_split``;
- ``require_samples(model, what)``.

Batches are read a few ahead in a background thread (``engine.data.prefetch``)
while the model trains on the current one; mapping and checking them runs on
the training thread. What ``shuffle=True`` means depends on the data:

- NumPy arrays, ``numpy.memmap`` included: a new random order of all the
  samples each epoch, drawn as for in-memory data (each batch holds the same
  samples for the same seed), but each batch holds its rows in increasing
  order, the order it reads them in.
- zarr and Dask arrays (slow at reading scattered rows): the rows are read in
  windows of whole chunks, at least ``WINDOW_BATCHES`` batches long; each epoch
  reads the windows in a random order and shuffles the rows within each
  window. A batch thus holds rows of one window (or of two consecutive ones).
- PyDataset: a random order of its batches each epoch (as Keras).
- Generator: none; Keras' warning says so.

zarr and Dask are recognized by their types' modules, never imported here.
"""

import itertools
import math
import mmap
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import closing

import numpy as np

from engine import tree
from engine.data.data_adapter import Samples, check_cardinality, unpack_batch
from engine.data.prefetch import map_in_threads, ordered_map, prefetch
from engine.data.py_dataset import PyDataset

# A zarr or Dask window holds at least this many batches (rounded up to whole chunks).
WINDOW_BATCHES = 4
# Blocks of rows (batches, or windows) read ahead of training; batches a generator is read ahead.
PREFETCH_DEPTH = 2
# At most this much of a memmap's file is mapped at once while a shuffled batch is read (see _read_rows).
_MAPPED_BYTES = 32 << 20


def open_source(x, y, sample_weight, class_weight, batch_size: int | None, shuffle: bool, prepare_batch):
    """The source ``fit`` reads ``x`` (and ``y``, ``sample_weight``) from, or
    None when they are in-memory arrays (fit then prepares them at once).

    ``prepare_batch(x, y, sample_weight)`` maps and checks one batch (with
    ``class_weight`` applied) and returns it as ``TrainingData``. A PyDataset
    or generator with ``y`` or ``sample_weight`` (or a generator with
    ``class_weight``) raises a ValueError, and one that cannot shuffle warns,
    as Keras; with ``batch_size`` it warns that it is ignored (Keras ignores
    it silently).

    Example:
        >>> open_source(np.ones((4, 2)), np.ones(4), None, None, 32, True, None) is None
        True
    """
    if is_batch_source(x):
        kind = "PyDataset" if isinstance(x, PyDataset) else "generator"
        for name, value, holds in (("y", y, "the targets"), ("sample_weight", sample_weight, "the sample weights")):
            if value is not None:
                raise ValueError(
                    f"When providing `x` as a {kind}, `{name}` should not be passed. Instead, {holds} should be "
                    f"included as part of the {kind} (it yields whole batches). Received: {name}={_short(value)}."
                )
        if batch_size is not None:  # Keras ignores it silently; its own guides pass one
            warnings.warn(f"`batch_size={batch_size}` is ignored: the {kind} given as `x` yields whole batches, "
                          "whose size it decides.", stacklevel=4)
        if kind == "generator":
            if class_weight is not None:
                raise ValueError("Argument `class_weight` is not supported for Python generator inputs. Received: "
                                 f"class_weight={class_weight}. Return sample weights from the generator instead.")
            if shuffle:
                warnings.warn("`shuffle=True` was passed, but will be ignored since the data `x` was provided as a "
                              "generator. The generator is expected to yield already-shuffled data.", stacklevel=4)
            return GeneratorSource(x, prepare_batch)
        if shuffle and x.num_batches is None:
            warnings.warn("`shuffle=True` was passed, but will be ignored since the data `x` was provided as an "
                          "infinite PyDataset. The PyDataset is expected to already be shuffled.", stacklevel=4)
        return PyDatasetSource(x, prepare_batch)
    if any(is_streamed(leaf) for leaf in tree.flatten((x, y, sample_weight))):
        return StreamedArrays((x, y, sample_weight), prepare_batch)
    return None


def is_batch_source(value) -> bool:
    """Whether ``value`` yields whole batches itself: a PyDataset or a generator.

    Example:
        >>> is_batch_source(iter([])), is_batch_source(np.ones(3))
        (True, False)
    """
    return isinstance(value, (PyDataset, Iterator))


def is_streamed(value) -> bool:
    """Whether ``fit`` reads ``value`` batch by batch: a ``numpy.memmap``, a
    zarr array or a Dask array.

    Example:
        >>> is_streamed(np.ones(3))
        False
    """
    return isinstance(value, np.memmap) or type(value).__module__.startswith(("zarr.", "dask.array."))


class StreamedArrays(Samples):
    """``(x, y, sample_weight)`` with arrays on disk among them (see
    ``is_streamed``), read a block of rows at a time: a batch for NumPy arrays,
    a window of chunks as soon as one array is a zarr or Dask array. Each batch
    is cast to the model's input dtypes as it is prepared, so memory holds a
    few blocks, never a whole array. ``rows`` (a range) is the part of the
    arrays used, as ``validation_split`` cuts them.

    Example:
        >>> import tempfile
        >>> x = np.memmap(tempfile.TemporaryFile(), "float64", "w+", shape=(10, 2))
        >>> data = StreamedArrays((x, None, None), lambda x, y, weights: x)
        >>> [batch.dtype.name for batch in data.batches(4)], data.steps(4)
        (['float64', 'float64', 'float64'], 3)
    """

    def __init__(self, data, prepare_batch, rows=None):
        self._data = data
        self._leaves = tree.flatten(data)
        self._prepare_batch = prepare_batch
        if rows is None:
            x, y, sample_weight = data
            sizes = {"x": [a.shape[0] for a in tree.flatten(x) if a is not None]}
            for name, part in (("y", y), ("sample_weight", sample_weight)):
                if part is not None:
                    sizes[name] = [a.shape[0] for a in tree.flatten(part) if a is not None]
            check_cardinality(sizes)
            rows = range(sizes["x"][0])
        self._rows = rows
        self.size = len(rows)
        chunked = [a for a in self._leaves if a is not None and not isinstance(a, np.ndarray)]
        self._chunk_rows = max((_chunk_rows(a) for a in chunked), default=None)

    def split(self, fraction):
        """(first part, last ``fraction``) of the rows, as ``validation_split``; nothing is read."""
        cut = self._cut(fraction)
        return (StreamedArrays(self._data, self._prepare_batch, self._rows[:cut]),
                StreamedArrays(self._data, self._prepare_batch, self._rows[cut:]))

    def batches(self, batch_size, shuffle=False, rng=None):
        reads = self._reads(batch_size, shuffle, rng)  # drawn here, on the training thread: reproducible
        with closing(prefetch(map(self._read, reads), PREFETCH_DEPTH)) as blocks:
            for parts in _rebatch(blocks, batch_size):
                yield self._prepare_batch(*tree.pack_as(self._data, parts))

    def _reads(self, batch_size, shuffle, rng):
        """The blocks of one pass, as ``(rows, seed)``: ``rows`` a slice, or the
        increasing row indices of a shuffled batch; ``seed`` (or None) shuffles a
        window. The random draws are made at once; the rest as blocks are read."""
        start, stop = self._rows.start, self._rows.stop
        if self._chunk_rows is None:
            if not shuffle:
                return ((slice(b, min(b + batch_size, stop)), None) for b in range(start, stop, batch_size))
            order = rng.permutation(self.size)  # the draw in-memory data makes
            order += start
            return ((np.sort(order[b:b + batch_size]), None) for b in range(0, self.size, batch_size))
        window = self._chunk_rows * math.ceil(WINDOW_BATCHES * batch_size / self._chunk_rows)
        edges = [start, *range((start // window + 1) * window, stop, window), stop]  # on the chunks' grid
        windows = [slice(a, b) for a, b in itertools.pairwise(edges)]
        if not shuffle:
            return [(w, None) for w in windows]
        seeds = rng.integers(2**63, size=len(windows))
        return [(windows[i], seed) for i, seed in zip(rng.permutation(len(windows)), seeds)]

    def _read(self, read):
        """The rows of one block from every array, in memory (runs in the prefetch thread)."""
        rows, seed = read
        parts = [None if a is None else _read_rows(a, rows) for a in self._leaves]
        if seed is None:
            return parts
        order = np.random.default_rng(seed).permutation(rows.stop - rows.start)
        return [None if p is None else p[order] for p in parts]


def _read_rows(array, rows):
    """``array[rows]`` in memory (``rows``: a slice or increasing indices)."""
    if not isinstance(array, np.memmap):
        return np.asarray(array[rows])
    _require_whole_file(array)
    if isinstance(rows, slice):
        return _released(array, np.array(array[rows]))
    # Reading a row maps the pages around it too (the OS maps whole folios of its file cache, up to
    # megabytes), so scattered rows would map most of the file at once: read them stretch of
    # _MAPPED_BYTES by stretch of the file, each stretch released before the next is read.
    stretch = rows // max(1, _MAPPED_BYTES // abs(array.strides[0]))
    groups = np.split(rows, np.flatnonzero(np.diff(stretch)) + 1)
    return np.concatenate([_released(array, array[group]) for group in groups])


def _require_whole_file(array: np.memmap) -> None:
    """Raises a ValueError if the file of the memmap ``array`` no longer holds
    every byte the array maps (another process truncated it): reading a page
    past the file's end would kill this process with SIGBUS. A file truncated
    while a block is being read can still do so; every later block raises.

    Example:
        >>> import tempfile
        >>> file = tempfile.TemporaryFile()
        >>> x = np.memmap(file, "float64", "w+", shape=(4, 2))
        >>> _ = file.truncate(8)
        >>> _require_whole_file(x)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: The file of a numpy.memmap that fit reads holds 8 bytes, but the array maps 64 of it ...
    """
    mapping = _mapping(array)
    if not isinstance(mapping, mmap.mmap):
        return
    start = array.offset - array.offset % mmap.ALLOCATIONGRANULARITY  # where numpy began the map
    size, end = mapping.size(), start + len(mapping)
    if size < end:
        name = "" if array.filename is None else f" {str(array.filename)!r}"
        raise ValueError(
            f"The file{name} of a numpy.memmap that fit reads holds {size} bytes, but the array maps {end - start} "
            f"of it (from offset {start}): the file was truncated while fit read it. Reading on would kill the "
            "process (SIGBUS). Keep the file whole while fit reads it, or fit from a copy."
        )


def _released(array, block):
    """``block`` (a copy read from the memmap ``array``), once the pages the read
    mapped are unmapped. Mapped pages count in this process's resident memory:
    over an epoch it would grow to the whole file. Unmapped, they stay in the OS's
    file cache. Copy-on-write maps (mode "c") keep theirs: unmapping would drop
    the changes made to them."""
    mapping = _mapping(array)
    if isinstance(mapping, mmap.mmap) and array.mode != "c" and hasattr(mmap, "MADV_DONTNEED"):
        mapping.madvise(mmap.MADV_DONTNEED)
    return block


def _mapping(array):
    """The object at the root of ``array``'s bases: an ``mmap.mmap`` for a memmap's view of its file."""
    while isinstance(array, np.ndarray):
        array = array.base
    return array


def _chunk_rows(array):
    """Rows per chunk along axis 0 (a Dask array's largest: its chunks may differ)."""
    first = array.chunks[0]
    return max(first) if isinstance(first, tuple) else first


def _rebatch(blocks, batch_size):
    """Cuts blocks of rows (lists of arrays, None for absent ones) into batches
    of ``batch_size`` rows; a batch may take the end of one block and the start
    of the next."""
    carry = None
    for block in blocks:
        if carry is not None:
            need = batch_size - _length(carry)
            carry = [None if c is None else np.concatenate([c, b[:need]]) for c, b in zip(carry, block)]
            block = _slice(block, need, None)
            if _length(carry) < batch_size:
                continue
            yield carry
            carry = None
        full = _length(block) - _length(block) % batch_size
        for begin in range(0, full, batch_size):
            yield _slice(block, begin, begin + batch_size)
        if full < _length(block):
            carry = _slice(block, full, None)
    if carry is not None:
        yield carry


def _length(parts):
    return next(len(p) for p in parts if p is not None)


def _slice(parts, begin, end):
    return [None if p is None else p[begin:end] for p in parts]


class PyDatasetSource:
    """The batches of a ``PyDataset``: its indices in order, or shuffled per
    pass, each read by ``__getitem__`` in ``workers`` background threads (in
    turn) or a process pool (``use_multiprocessing=True``), up to
    ``max_queue_size`` batches ahead. ``on_epoch_begin`` and ``on_epoch_end``
    are called around each whole pass.

    Example:
        >>> class Two(PyDataset):
        ...     def __len__(self):
        ...         return 2
        ...     def __getitem__(self, index):
        ...         return np.full((3, 1), index), np.zeros(3)
        >>> source = PyDatasetSource(Two(), lambda x, y, weights: int(x[0, 0]))
        >>> list(source.batches(None)), source.steps(None)
        ([0, 1], 2)
    """

    size = None

    def __init__(self, dataset, prepare_batch):
        if not {"workers", "use_multiprocessing", "max_queue_size"} <= vars(dataset).keys():
            warnings.warn("Your `PyDataset` class should call `super().__init__(**kwargs)` in its constructor. "
                          "`**kwargs` can include `workers`, `use_multiprocessing`, `max_queue_size`. Do not pass "
                          "these arguments to `fit()`, as they will be ignored.", stacklevel=5)
        self.dataset, self._prepare_batch = dataset, prepare_batch

    def steps(self, batch_size):
        return self.dataset.num_batches

    def batches(self, batch_size, shuffle=False, rng=None):
        count = self.dataset.num_batches
        indices = None if count is None else (rng.permutation(count) if shuffle else np.arange(count)).tolist()
        self.dataset.on_epoch_begin()
        with closing(self._load(indices)) as loaded:
            for batch in loaded:
                yield self._prepare_batch(*unpack_batch(batch, "PyDataset.__getitem__()"))
        self.dataset.on_epoch_end()

    def _load(self, indices):
        """The batches at ``indices`` (a list, or None for 0, 1, 2, ... without end)."""
        dataset = self.dataset
        if dataset.use_multiprocessing:
            executor = ProcessPoolExecutor(dataset.workers, initializer=_install, initargs=(dataset,))
            every = itertools.count() if indices is None else indices
            return ordered_map(_worker_item, every, executor, dataset.max_queue_size)
        return map_in_threads(dataset.__getitem__, indices, max(1, dataset.workers), dataset.max_queue_size)

    def split(self, fraction):
        raise _split_error(type(self.dataset))

    def require_samples(self, model, what):
        if self.dataset.num_batches == 0:
            raise ValueError(f"{what} of model {model.name!r} received a PyDataset of 0 batches (its len() is 0). "
                             "Pass a dataset with at least one batch.")


# The dataset of a process-pool worker (each worker process holds its copy).
_worker_dataset = None


def _install(dataset):
    global _worker_dataset
    _worker_dataset = dataset


def _worker_item(index):
    return _worker_dataset[index]


class GeneratorSource:
    """The batches of a Python generator (or any iterator): one stream that
    every pass continues, read ahead in a background thread. Its first batch is
    read at once, as Keras does, to refuse an empty generator.

    Example:
        >>> source = GeneratorSource(((np.ones((2, 1)),) for _ in range(3)), lambda x, y, weights: x.shape)
        >>> list(source.batches(None)), source.steps(None)
        ([(2, 1), (2, 1), (2, 1)], None)
    """

    size = None

    def __init__(self, iterator, prepare_batch):
        first = next(iterator, _NOTHING)
        if first is _NOTHING:
            raise ValueError("When passing a Python generator to a Keras model, the generator must yield at least "
                             "one batch. Received an empty generator.")
        self._stream = itertools.chain([first], iterator)
        self._type = type(iterator)
        self._prepare_batch = prepare_batch

    def steps(self, batch_size):
        return None

    def batches(self, batch_size, shuffle=False, rng=None):
        with closing(prefetch(self._stream, PREFETCH_DEPTH)) as loaded:
            for batch in loaded:
                yield self._prepare_batch(*unpack_batch(batch, "the generator"))

    def split(self, fraction):
        raise _split_error(self._type)

    def require_samples(self, model, what):
        """Nothing to check: the first batch was read when the source was made."""


_NOTHING = object()


def _split_error(kind):
    return ValueError(
        "Argument `validation_split` is only supported for tensors or NumPy arrays. Found incompatible type in the "
        f"input: [{kind}]. Pass validation_data=... instead (a PyDataset or a generator of its own)."
    )


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
