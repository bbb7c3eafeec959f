"""Epochs cut from passes over the data, with and without steps_per_epoch."""

import threading

import numpy as np
import pytest

from engine import PyDataset
from engine.data.data_adapter import TrainingData
from engine.data.data_sources import GeneratorSource, PyDatasetSource
from engine.data.epoch_iterator import RAN_OUT, EpochIterator


def _rows(count):
    return TrainingData([np.arange(float(count))[:, None]], None, [None])


def _epoch(epochs, batch_size=2):
    return [batch.x[0][:, 0].tolist() for batch in epochs.batches(batch_size)]


def test_without_steps_per_epoch_an_epoch_is_the_datas_own_pass():
    epochs = EpochIterator(_rows(5))
    batches = epochs.batches(2)
    assert batches.gi_code is TrainingData.batches.__code__  # nothing wraps the batches of in-memory data
    assert [b.x[0][:, 0].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert epochs.steps(2) == 3 and not epochs.exhausted


def test_steps_per_epoch_carries_a_pass_over_and_stops_short_at_its_end_with_keras_warning():
    epochs = EpochIterator(_rows(10), steps_per_epoch=2)  # passes of 5 batches
    assert _epoch(epochs) == [[0, 1], [2, 3]]
    assert _epoch(epochs) == [[4, 5], [6, 7]]
    with pytest.warns(UserWarning) as caught:
        assert _epoch(epochs) == [[8, 9]]
    assert [str(w.message) for w in caught] == [RAN_OUT]
    assert _epoch(epochs) == [[0, 1], [2, 3]]  # a new pass
    assert epochs.steps(2) == 2


def test_an_epoch_that_ends_with_its_pass_starts_the_next_one_afresh():
    epochs = EpochIterator(_rows(8), steps_per_epoch=2)  # passes of 4 batches: no epoch stops short
    assert [_epoch(epochs) for _ in range(3)] == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[0, 1], [2, 3]]]


def _batches(count):
    return ((np.full((2, 1), float(index)),) for index in range(count))


def test_a_generator_is_one_pass_spent_when_it_runs_out():
    epochs = EpochIterator(GeneratorSource(_batches(5), lambda x, y, weights: x[0, 0]), steps_per_epoch=3)
    assert list(epochs.batches(None)) == [0, 1, 2] and not epochs.exhausted
    with pytest.warns(UserWarning, match="ran out of data"):
        assert list(epochs.batches(None)) == [3, 4]
    assert epochs.exhausted and epochs.steps(None) == 3
    epochs = EpochIterator(GeneratorSource(_batches(5), lambda x, y, weights: x[0, 0]))
    with pytest.warns(UserWarning, match="ran out of data"):  # Keras warns at the end of a generator too
        assert list(epochs.batches(None)) == [0, 1, 2, 3, 4]
    assert epochs.exhausted and epochs.steps(None) is None


class _Counted(PyDataset):
    def __init__(self):
        super().__init__()
        self.begins = self.ends = 0

    def __len__(self):
        return 3

    def __getitem__(self, index):
        return (np.full((2, 1), float(index)),)

    def on_epoch_begin(self):
        self.begins += 1

    def on_epoch_end(self):
        self.ends += 1


def test_a_pydataset_begins_and_ends_each_whole_pass_once_whatever_the_epochs():
    dataset = _Counted()
    epochs = EpochIterator(PyDatasetSource(dataset, lambda x, y, weights: x[0, 0]), steps_per_epoch=2)
    assert list(epochs.batches(None)) == [0, 1]
    assert (dataset.begins, dataset.ends) == (1, 0)
    with pytest.warns(UserWarning, match="ran out of data"):
        assert list(epochs.batches(None)) == [2]
    assert (dataset.begins, dataset.ends) == (1, 1)
    assert list(epochs.batches(None)) == [0, 1]
    epochs.close()
    assert (dataset.begins, dataset.ends) == (2, 1)  # a pass stopped early does not end


def test_close_stops_the_pass_kept_open_between_epochs():
    dataset = _Counted()
    dataset.max_queue_size = 1
    epochs = EpochIterator(PyDatasetSource(dataset, lambda x, y, weights: x[0, 0]), steps_per_epoch=1)
    assert list(epochs.batches(None)) == [0]
    assert any(thread.name == "nodeweave-prefetch" for thread in threading.enumerate())
    epochs.close()
    assert not any(thread.name == "nodeweave-prefetch" for thread in threading.enumerate())
