"""timeseries_dataset_from_array: Keras' windows (its documented examples), in a PyDataset that fit reads."""

import numpy as np
import pytest

from engine import Input, Model
from engine.utils import timeseries_dataset_from_array
from layers import LSTM, Dense


def _all_windows(dataset):
    batches = [dataset[i] for i in range(len(dataset))]
    if isinstance(batches[0], tuple):
        return np.concatenate([x for x, _ in batches]), np.concatenate([y for _, y in batches])
    return np.concatenate(batches)


def test_strided_sampled_windows_are_keras_documented_ones():
    dataset = timeseries_dataset_from_array(np.arange(99), None, sequence_length=10, sampling_rate=2,
                                            sequence_stride=3, batch_size=8)
    windows = _all_windows(dataset)
    assert windows[0].tolist() == list(range(0, 20, 2))
    assert windows[1].tolist() == list(range(3, 22, 2))
    assert windows[-1].tolist() == list(range(78, 97, 2))  # the last 2 steps fit no whole window
    assert len(windows) == 27 and len(dataset) == 4 and len(dataset[3]) == 3


def test_each_window_gets_the_target_of_its_first_step_offset_by_the_caller():
    data = np.arange(100, dtype="float32")
    x, y = _all_windows(timeseries_dataset_from_array(data[:-10], data[10:], sequence_length=10, batch_size=16))
    assert np.array_equal(x[0], data[:10]) and y[0] == data[10]
    assert np.array_equal(x[-1], data[80:90]) and y[-1] == data[90]


def test_start_and_end_index_reserve_data_and_targets_follow():
    data, targets = np.arange(50) * 10, np.arange(50)
    x, y = _all_windows(timeseries_dataset_from_array(data, targets, sequence_length=4, start_index=10,
                                                      end_index=30, batch_size=5))
    assert x[0].tolist() == [100, 110, 120, 130] and y[0] == 10
    assert x[-1].tolist() == [260, 270, 280, 290] and len(x) == 17 and y.tolist() == list(range(10, 27))


def test_shuffle_permutes_windows_reproducibly():
    def windows(seed):
        return _all_windows(timeseries_dataset_from_array(np.arange(40), None, sequence_length=5, shuffle=True,
                                                          seed=seed, batch_size=7))

    first, again, other = windows(3), windows(3), windows(4)
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    assert sorted(first[:, 0].tolist()) == list(range(36)) and np.all(np.diff(first, axis=1) == 1)


def test_unbatched_windows_come_one_at_a_time():
    dataset = timeseries_dataset_from_array(np.arange(6), None, sequence_length=2, batch_size=None)
    assert len(dataset) == 5 and dataset[4].tolist() == [4, 5]


@pytest.mark.parametrize("arguments, message", [
    (dict(sampling_rate=0), "`sampling_rate` must be higher than 0"),
    (dict(sequence_stride=20), "`sequence_stride` must be lower than the length"),
    (dict(start_index=-1), "`start_index` must be 0 or greater"),
    (dict(start_index=5, end_index=3), "`end_index` must be higher than `start_index`"),
    (dict(batch_size=0), "`batch_size` must be a positive int"),
])
def test_bad_arguments_name_the_argument(arguments, message):
    with pytest.raises(ValueError, match=message):
        timeseries_dataset_from_array(np.arange(20), None, sequence_length=3, **arguments)


def test_fit_trains_on_the_windows():
    rng = np.random.default_rng(0)
    series = np.sin(np.arange(400) / 8).astype("float32")[:, None] + rng.normal(0, 0.01, (400, 1)).astype("float32")
    dataset = timeseries_dataset_from_array(series[:-12], series[12:, 0], sequence_length=12, batch_size=32)
    steps = Input((12, 1))
    model = Model(steps, Dense(1)(LSTM(8)(steps)))
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(dataset, epochs=4, verbose=0).history["loss"]
    assert history[-1] < history[0]
    assert model.predict(dataset, verbose=0).shape == (len(series) - 23, 1)
