"""Sliding windows over a timeseries as a dataset of batches, as Keras' ``timeseries_dataset_from_array``."""

import math

import numpy as np

from engine.data.py_dataset import PyDataset


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1, batch_size=128,
                                  shuffle=False, seed=None, start_index=None, end_index=None):
    """Batches of windows over ``data`` (axis 0 is time), with the target of each window.

    Window ``i`` holds ``data[start + s, start + s + r, ..., start + s + (sequence_length - 1) * r]``
    for ``s = i * sequence_stride`` and ``r = sampling_rate``, and its target is
    ``targets[start + s]``. Windows that would run past the end are left out. Keras
    returns a ``tf.data.Dataset``; this returns a ``PyDataset`` that ``fit``, ``evaluate``
    and ``predict`` read and a ``for`` loop iterates, with the same windows in the same
    order (a shuffle permutes the window starts with ``np.random.RandomState(seed)``, as
    Keras does). Batches are made on demand, views gathered into one array each.

    Args:
        data: an array of time steps along axis 0.
        targets: the target of the window starting at each step, or None for inputs only
            (each batch is then an array, not a tuple).
        sequence_length: time steps per window.
        sequence_stride: steps between the starts of two windows.
        sampling_rate: steps between two time steps of one window.
        batch_size: windows per batch (the last may be smaller); None for one window at a time.
        shuffle: whether the windows come in a random order rather than in time order.
        seed: the shuffle's seed.
        start_index: the first step windows may use (default 0).
        end_index: the step windows stop before (default the end of ``data``).

    Example:
        >>> series = np.arange(10)
        >>> dataset = timeseries_dataset_from_array(series[:-3], series[3:], sequence_length=3, batch_size=2)
        >>> x, y = dataset[0]
        >>> x.tolist(), y.tolist()
        ([[0, 1, 2], [1, 2, 3]], [3, 4])
        >>> len(dataset)
        3
    """
    data = np.asarray(data)
    if data.ndim == 0:
        raise ValueError(f"`data` must be an array with time along axis 0. Received: a scalar {data!r}.")
    length = len(data)
    _check_indices(start_index, end_index, length)
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if not isinstance(value, (int, np.integer)) or value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value!r}")
        if value >= length:
            raise ValueError(f"`{name}` must be lower than the length of the data. Received: {name}={value}, "
                             f"for data of length {length}")
    if not isinstance(sequence_length, (int, np.integer)) or sequence_length <= 0:
        raise ValueError(f"`sequence_length` must be a positive int. Received: sequence_length={sequence_length!r}")
    if batch_size is not None and (not isinstance(batch_size, (int, np.integer)) or batch_size <= 0):
        raise ValueError(f"`batch_size` must be a positive int or None. Received: batch_size={batch_size!r}")
    start = start_index or 0
    end = length if end_index is None else end_index
    windows = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        targets = np.asarray(targets)
        windows = min(windows, len(targets) - start)
    starts = np.arange(0, max(windows, 0), sequence_stride)
    if shuffle:
        np.random.RandomState(np.random.randint(1e6) if seed is None else seed).shuffle(starts)
    return TimeseriesDataset(data[start:end], None if targets is None else targets[start:], starts,
                             np.arange(sequence_length) * sampling_rate, batch_size)


def _check_indices(start_index, end_index, length):
    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= length:
            raise ValueError(f"`start_index` must be lower than the length of the data. Received: "
                             f"start_index={start_index}, for data of length {length}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError(f"`end_index` must be higher than `start_index`. Received: start_index={start_index}, "
                             f"and end_index={end_index}")
        if end_index >= length:
            raise ValueError(f"`end_index` must be lower than the length of the data. Received: "
                             f"end_index={end_index}, for data of length {length}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")


class TimeseriesDataset(PyDataset):
    """The dataset ``timeseries_dataset_from_array`` returns: window ``i`` is
    ``data[starts[i] + offsets]``, its target ``targets[starts[i]]``."""

    def __init__(self, data, targets, starts, offsets, batch_size):
        super().__init__()
        self.data, self.targets, self.starts, self.offsets, self.batch_size = data, targets, starts, offsets, batch_size

    def __len__(self):
        return len(self.starts) if self.batch_size is None else math.ceil(len(self.starts) / self.batch_size)

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f"TimeseriesDataset has {len(self)} batches; index {index} is out of range.")
        if self.batch_size is None:
            starts = self.starts[index]
        else:
            starts = self.starts[index * self.batch_size:(index + 1) * self.batch_size]
        windows = self.data[np.add.outer(starts, self.offsets)]
        return windows if self.targets is None else (windows, self.targets[starts])
