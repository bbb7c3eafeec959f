"""fit from data read batch by batch: arrays on disk (numpy.memmap, zarr, Dask),
a PyDataset and Python generators, against fit from the same arrays in memory."""

import math
import multiprocessing
import os
import subprocess
import sys
import threading
import traceback
import warnings

import numpy as np
import pytest

from engine import Input, Model, PyDataset
from engine.training.callbacks import Callback
from engine.data.data_adapter import TrainingData
from engine.data.data_sources import StreamedArrays
from engine.data.epoch_iterator import RAN_OUT
from engine.utils import set_random_seed
from layers import Dense

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# JAX, imported by other tests of the session, warns at every fork; the process pools here fork
# workers that only slice NumPy arrays.
pytestmark = pytest.mark.filterwarnings(r"ignore:os\.fork\(\) was called:RuntimeWarning")
_RNG = np.random.default_rng(0)
X = _RNG.normal(size=(100, 3))  # float64: cast to the input's float32 batch by batch
Y = _RNG.normal(size=(100, 1))


def _model():
    set_random_seed(0)
    inputs = Input(shape=(3,), name="x")
    model = Model(inputs, Dense(1, name="out")(Dense(4, activation="tanh")(inputs)), name="m")
    model.compile(optimizer="adam", loss="mse")
    return model


def _memmap(path, array):
    written = np.memmap(path, array.dtype, "w+", shape=array.shape)
    written[:] = array
    written.flush()
    return np.memmap(path, array.dtype, "r", shape=array.shape)


def _zarr(path, array, rows_per_chunk=7):
    import zarr

    stored = zarr.create_array(store=str(path), shape=array.shape, chunks=(rows_per_chunk, *array.shape[1:]),
                               dtype=array.dtype)
    stored[:] = array
    return stored


def _dask(array, rows_per_chunk=9):
    import dask.array as da

    return da.from_array(array, chunks=(rows_per_chunk, *array.shape[1:]))


def _on_disk(kind, array, path):
    return {"memmap": _memmap, "zarr": _zarr}[kind](path, array) if kind != "dask" else _dask(array)


class ReadError(Exception):
    """A batch that cannot be read (raised by the test datasets)."""


class Batches(PyDataset):
    """``x`` and ``y`` cut into batches of 16 rows; remembers the indices it was
    asked for and the epochs it ended (in this process: not a pool's workers)."""

    def __init__(self, x=X, y=Y, fail_at=None, **kwargs):
        super().__init__(**kwargs)
        self.x, self.y, self.fail_at = x, y, fail_at
        self.read, self.ends = [], 0

    def __len__(self):
        return math.ceil(len(self.x) / 16)

    def __getitem__(self, index):
        self.read.append(index)
        if index == self.fail_at:
            raise ReadError(f"batch {index} is unreadable")
        return self.x[index * 16:(index + 1) * 16], self.y[index * 16:(index + 1) * 16]

    def on_epoch_end(self):
        self.ends += 1


def _generator(epochs, x=X, y=Y):
    for _ in range(epochs):
        for begin in range(0, len(x), 16):
            yield x[begin:begin + 16], y[begin:begin + 16]


class StepsRecorder:
    """The steps of each epoch, as the callbacks see them (a mixin for ours and Keras' Callback)."""

    def on_train_begin(self, logs=None):
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(batch)


class Steps(StepsRecorder, Callback):
    """Our callback recording the steps of each epoch."""


def _assert_same_training(model, history, expected, expected_history):
    for got, want in zip(model.get_weights(), expected.get_weights()):
        np.testing.assert_array_equal(got, want)
    assert history.history == expected_history.history


@pytest.mark.parametrize("kind", ["memmap", "zarr", "dask", "generator", "pydataset", "pydataset in 3 threads",
                                  "pydataset in 2 processes"])
def test_streamed_data_trains_to_the_same_weights_as_in_memory_arrays(kind, tmp_path):
    expected = _model()
    expected_history = expected.fit(X, Y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    model = _model()
    if kind in ("memmap", "zarr", "dask"):
        history = model.fit(_on_disk(kind, X, tmp_path / "x"), _on_disk(kind, Y, tmp_path / "y"), batch_size=16,
                            epochs=2, shuffle=False, verbose=0)
    elif kind == "generator":
        history = model.fit(_generator(2), steps_per_epoch=7, epochs=2, shuffle=False, verbose=0)
    else:
        workers, processes = {"pydataset": (1, False), "pydataset in 3 threads": (3, False),
                              "pydataset in 2 processes": (2, True)}[kind]
        history = model.fit(Batches(workers=workers, use_multiprocessing=processes), epochs=2, shuffle=False,
                            verbose=0)
    _assert_same_training(model, history, expected, expected_history)


@pytest.mark.parametrize("kind", ["memmap", "zarr", "dask"])
def test_validation_split_of_arrays_on_disk_cuts_the_same_rows_as_in_memory(kind, tmp_path):
    expected = _model()
    expected_history = expected.fit(X, Y, batch_size=16, epochs=2, shuffle=False, validation_split=0.3, verbose=0)
    model = _model()
    history = model.fit(_on_disk(kind, X, tmp_path / "x"), _on_disk(kind, Y, tmp_path / "y"), batch_size=16,
                        epochs=2, shuffle=False, validation_split=0.3, verbose=0)
    _assert_same_training(model, history, expected, expected_history)
    assert len(history.history["val_loss"]) == 2


def test_inputs_targets_weights_and_validation_data_stream_in_the_models_structure(tmp_path):
    def two_inputs():
        set_random_seed(0)
        a, b = Input(shape=(2,), name="a"), Input(shape=(1,), name="b")
        model = Model({"a": a, "b": b}, Dense(1, name="out")(Dense(3, name="h")(a) + Dense(3, name="hb")(b)))
        model.compile(optimizer="sgd", loss="mse")
        return model

    weights = np.linspace(0.5, 2.0, 100)
    arrays = ({"a": X[:, :2], "b": X[:, 2:]}, Y, weights)
    validation = ({"a": X[:20, :2], "b": X[:20, 2:]}, Y[:20])
    expected = two_inputs()
    expected_history = expected.fit(*arrays[:2], sample_weight=arrays[2], batch_size=16, epochs=2, shuffle=False,
                                    validation_data=validation, verbose=0)
    streamed = ({"a": _memmap(tmp_path / "a", X[:, :2]), "b": _zarr(tmp_path / "b", X[:, 2:])},
                _memmap(tmp_path / "y", Y), _dask(weights))
    streamed_validation = ({"a": _memmap(tmp_path / "va", X[:20, :2]), "b": X[:20, 2:]}, _dask(Y[:20]))
    model = two_inputs()
    history = model.fit(*streamed[:2], sample_weight=streamed[2], batch_size=16, epochs=2, shuffle=False,
                        validation_data=streamed_validation, verbose=0)
    _assert_same_training(model, history, expected, expected_history)


def test_class_weight_applies_to_streamed_batches_as_to_arrays_in_memory(tmp_path):
    def classifier():
        set_random_seed(0)
        inputs = Input(shape=(3,))
        model = Model(inputs, Dense(3, activation="softmax")(inputs))
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        return model

    labels = np.arange(100) % 3
    class_weight = {0: 1.0, 1: 3.0, 2: 0.5}
    expected = classifier()
    expected_history = expected.fit(X, labels, batch_size=16, shuffle=False, class_weight=class_weight, verbose=0)
    model = classifier()
    history = model.fit(_memmap(tmp_path / "x", X), _memmap(tmp_path / "y", labels), batch_size=16, shuffle=False,
                        class_weight=class_weight, verbose=0)
    _assert_same_training(model, history, expected, expected_history)
    model = classifier()
    history = model.fit(Batches(X, labels), shuffle=False, class_weight=class_weight, verbose=0)
    _assert_same_training(model, history, expected, expected_history)


def test_a_shuffled_memmap_makes_the_batches_of_shuffled_arrays_in_memory(tmp_path):
    ids = np.arange(100.0)[:, None]
    in_memory = TrainingData([ids], None, [None]).batches(16, True, np.random.default_rng(5))
    on_disk = StreamedArrays((_memmap(tmp_path / "ids", ids), None, None), lambda x, y, weights: x)
    for want, got in zip(in_memory, on_disk.batches(16, True, np.random.default_rng(5)), strict=True):
        np.testing.assert_array_equal(got[:, 0], np.sort(want.x[0][:, 0]))  # the same rows, read in file order


@pytest.mark.parametrize("kind", ["memmap", "zarr", "dask"])
def test_shuffle_takes_every_sample_once_per_epoch_in_a_new_order_each_epoch(kind, tmp_path):
    ids = np.arange(1000.0)[:, None]
    source = StreamedArrays((_on_disk(kind, ids, tmp_path / "ids"), None, None), lambda x, y, weights: x[:, 0])
    rng = np.random.default_rng(0)
    epochs = [list(source.batches(32, True, rng)) for _ in range(2)]
    orders = [np.concatenate(batches) for batches in epochs]
    for batches, order in zip(epochs, orders):
        assert [len(batch) for batch in batches] == [32] * 31 + [8]
        np.testing.assert_array_equal(np.sort(order), np.arange(1000))
        assert not np.array_equal(order, np.arange(1000))
    assert not np.array_equal(*orders)
    if kind != "memmap":  # windows of whole chunks, 4 batches at least: a batch spans one or two of them
        rows_per_chunk = {"zarr": 7, "dask": 9}[kind]
        window = rows_per_chunk * math.ceil(4 * 32 / rows_per_chunk)
        assert all(len(np.unique(batch // window)) <= 2 for batch in epochs[0])


def test_fit_shuffles_a_pydataset_by_batch_and_ends_each_epoch():
    dataset = Batches()
    _model().fit(dataset, epochs=3, verbose=0)
    epochs = [dataset.read[start:start + 7] for start in range(0, 21, 7)]
    assert all(sorted(order) == list(range(7)) for order in epochs)
    assert len({tuple(order) for order in epochs} | {tuple(range(7))}) > 2
    assert dataset.ends == 3


def test_a_generator_that_runs_dry_ends_training_with_keras_warning():
    steps = Steps()
    with pytest.warns(UserWarning, match=r"^Your input ran out of data; interrupting training\.") as caught:
        history = _model().fit(_generator(1), steps_per_epoch=4, epochs=5, shuffle=False, verbose=0,
                               callbacks=[steps])
    assert steps.epochs == [[0, 1, 2, 3], [0, 1, 2]]  # 7 batches: the second epoch stops short, and training stops
    assert len(history.history["loss"]) == 2
    assert [str(w.message) for w in caught] == [RAN_OUT]
    steps = Steps()
    with pytest.warns(UserWarning, match="ran out of data"):
        history = _model().fit(_generator(1), epochs=3, shuffle=False, verbose=0, callbacks=[steps])
    assert steps.epochs == [list(range(7))] and len(history.history["loss"]) == 1  # without steps_per_epoch: one pass


def test_steps_per_epoch_carries_on_through_the_data_from_epoch_to_epoch():
    steps = Steps()
    with pytest.warns(UserWarning, match="ran out of data"):  # the third epoch finds 1 of the 3 batches it wants
        history = _model().fit(X, Y, batch_size=16, steps_per_epoch=3, epochs=4, validation_data=Batches(),
                               validation_steps=3, verbose=0, callbacks=[steps])
    assert steps.epochs == [[0, 1, 2], [0, 1, 2], [0], [0, 1, 2]]
    assert len(history.history["val_loss"]) == 4  # validation carries on alike (see test_epoch_iterator)


def test_steps_per_epoch_without_batch_size_makes_one_pass_per_epoch_as_keras():
    steps = Steps()
    _model().fit(X, Y, steps_per_epoch=4, epochs=2, verbose=0, callbacks=[steps])
    assert steps.params["batch_size"] == 25 and steps.epochs == [[0, 1, 2, 3]] * 2


def test_a_pydataset_or_generator_refuses_what_keras_refuses_with_its_errors():
    model = _model()
    cases = [
        (lambda: model.fit(Batches(), Y), r"^When providing `x` as a PyDataset, `y` should not be passed"),
        (lambda: model.fit(_generator(1), sample_weight=np.ones(100)),
         r"^When providing `x` as a generator, `sample_weight` should not be passed"),
        (lambda: model.fit(_generator(1), class_weight={0: 1.0}),
         r"^Argument `class_weight` is not supported for Python generator inputs"),
        (lambda: model.fit(Batches(), validation_split=0.2),
         r"^Argument `validation_split` is only supported for tensors or NumPy arrays"),
        (lambda: model.fit(iter([])), r"the generator must yield at least one batch\. Received an empty generator"),
        (lambda: model.fit(iter([(X, Y, None, None)])),
         (r"^Data is expected to be in format `x`, `\(x,\)`, `\(x, y\)`, or `\(x, y, sample_weight\)`, found: a "
          r"tuple of 4 items from the generator")),
    ]
    for fit, message in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # shuffle=True with a generator: Keras' warning
            with pytest.raises(ValueError, match=message):
                fit()


def test_a_batch_size_given_with_a_pydataset_is_ignored_with_a_warning():
    """Keras ignores it silently (its own guides pass one), so a ported script keeps running."""
    expected = _model().fit(Batches(), epochs=1, shuffle=False, verbose=0).history["loss"]
    with pytest.warns(UserWarning, match=r"^`batch_size=16` is ignored: the PyDataset given as `x` yields whole "
                                         r"batches"):
        history = _model().fit(Batches(), batch_size=16, epochs=1, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], expected)


def test_shuffle_is_ignored_for_a_generator_with_keras_warning():
    with pytest.warns(UserWarning, match=r"^`shuffle=True` was passed, but will be ignored since the data `x` was "
                                         r"provided as a generator"):
        _model().fit(_generator(1), steps_per_epoch=7, verbose=0)


def test_arrays_on_disk_of_different_lengths_are_refused_before_reading(tmp_path):
    with pytest.raises(ValueError, match=r"Data cardinality is ambiguous: 'x' sizes: \[100\]; 'y' sizes: \[90\]"):
        _model().fit(_memmap(tmp_path / "x", X), _zarr(tmp_path / "y", Y[:90]), verbose=0)


def _prefetching_threads():
    return [thread for thread in threading.enumerate() if thread.name == "nodeweave-prefetch"]


@pytest.mark.parametrize("workers, processes", [(1, False), (3, False), (2, True)])
def test_an_error_reading_a_batch_surfaces_in_fit_with_its_type_and_traceback(workers, processes):
    with pytest.raises(ReadError, match=r"^batch 3 is unreadable$") as caught:
        _model().fit(Batches(fail_at=3, workers=workers, use_multiprocessing=processes), shuffle=False, verbose=0)
    if processes:  # a process pool sends the worker's traceback as the cause
        assert "in __getitem__" in str(caught.value.__cause__)
    else:
        assert "__getitem__" in [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert _prefetching_threads() == [] and multiprocessing.active_children() == []


def test_an_error_raised_by_a_generator_surfaces_in_fit():
    def failing():
        yield X[:16], Y[:16]
        raise ReadError("the second file is truncated")

    with pytest.raises(ReadError, match="the second file is truncated") as caught:
        _model().fit(failing(), shuffle=False, verbose=0)
    assert "failing" in [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert _prefetching_threads() == []


class _Stop(Callback):
    """Stops training at the second batch; records the threads and processes
    fit still runs when it ends training (before fit returns)."""

    def __init__(self, how):
        super().__init__()
        self.how = how

    def on_train_batch_end(self, batch, logs=None):
        if batch == 1 and self.how == "stop_training":
            self.model.stop_training = True
        elif batch == 1:
            raise KeyboardInterrupt

    def on_train_end(self, logs=None):
        self.running = set(threading.enumerate()), multiprocessing.active_children()


@pytest.mark.parametrize("how", ["stop_training", "Ctrl-C"])
@pytest.mark.parametrize("kind", ["memmap", "generator", "pydataset", "pydataset in 3 threads",
                                  "pydataset in 2 processes", "steps_per_epoch"])
def test_early_stopping_and_ctrl_c_leave_no_thread_or_process_running(kind, how, tmp_path):
    threads = set(threading.enumerate())
    data = {"memmap": lambda: (_memmap(tmp_path / "x", X), Y), "generator": lambda: (_generator(5),),
            "pydataset": lambda: (Batches(),), "pydataset in 3 threads": lambda: (Batches(workers=3),),
            "pydataset in 2 processes": lambda: (Batches(workers=2, use_multiprocessing=True),),
            "steps_per_epoch": lambda: (Batches(),)}[kind]()
    steps_per_epoch = 5 if kind == "steps_per_epoch" else None  # a pass kept open across epochs
    stop = _Stop(how)

    def fit():
        return _model().fit(*data, epochs=3, shuffle=False, steps_per_epoch=steps_per_epoch, verbose=0,
                            callbacks=[stop])

    if how == "stop_training":
        assert len(fit().history["loss"]) == 1
        running_threads, running_processes = stop.running
    else:
        with pytest.raises(KeyboardInterrupt) as caught:  # its traceback keeps fit's frames (and data) alive
            fit()
        running_threads, running_processes = set(threading.enumerate()), multiprocessing.active_children()
        assert caught.value is not None
        # Ctrl-C does not wait for a reader inside a call to the source: a daemon thread, ending when the call returns
        in_source = {thread for thread in running_threads - threads if thread.name == "nodeweave-prefetch"}
        for thread in in_source:
            assert thread.daemon
            thread.join()
        running_threads -= in_source
    assert running_threads <= threads and running_processes == []


def test_a_generator_is_left_open_for_its_remaining_batches():
    batches = _generator(1)
    _model().fit(batches, steps_per_epoch=2, shuffle=False, verbose=0)
    assert len(list(batches)) >= 2  # 7 batches: 2 trained on, at most 3 more read ahead and dropped


FIT_FROM_A_BIG_MEMMAP = """
import sys
import numpy as np
from engine import Input, Model
from engine.training.callbacks import Callback
from layers import Dense

path, rows, columns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
x = np.memmap(path, "float64", "r", shape=(rows, columns))  # cast to float32 batch by batch
inputs = Input(shape=(columns,))
model = Model(inputs, Dense(1)(inputs))
model.compile(optimizer="sgd", loss="mse")
history = model.fit(x, x[:, :1], batch_size=65536, validation_split=0.1, verbose=0)  # shuffled, as by default
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(peak, history.history["loss"][0], history.history["val_loss"][0])
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads the peak resident memory from /proc")
def test_fit_from_a_2_gib_memmap_peaks_under_500_mb_of_resident_memory(tmp_path):
    rows, columns = 2**31 // 8 // 32, 32
    path = tmp_path / "big.f64"
    block = np.random.default_rng(0).normal(size=(2**16, columns)).tobytes()
    try:
        with open(path, "wb") as file:  # written, not mapped: the file cache holds it, not this process
            file.writelines(block for _ in range(rows // 2**16))
        env = {**os.environ, "PYTHONPATH": ROOT, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        child = subprocess.run([sys.executable, "-c", FIT_FROM_A_BIG_MEMMAP, str(path), str(rows), str(columns)],
                               cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    finally:
        path.unlink(missing_ok=True)
    assert child.returncode == 0, child.stderr
    peak_kb, loss, val_loss = child.stdout.split()
    assert int(peak_kb) < 500 * 1024, f"peak resident memory {int(peak_kb) / 1024:.0f} MiB"
    assert np.isfinite(float(loss)) and np.isfinite(float(val_loss))


def test_epochs_warnings_and_errors_match_keras_for_a_pydataset_and_a_generator():
    from tests.layers.oracle import keras

    class KerasBatches(keras.utils.PyDataset):
        def __init__(self, count):
            super().__init__()
            self.count = count

        def __len__(self):
            return self.count

        def __getitem__(self, index):
            return X[index * 16:(index + 1) * 16], Y[index * 16:(index + 1) * 16]

    class KerasSteps(StepsRecorder, keras.callbacks.Callback):
        pass

    theirs = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    theirs.compile(optimizer="sgd", loss="mse")
    for count, steps_per_epoch, epochs in ((3, 2, 3), (3, 5, 2), (4, 2, 3)):
        ours, their_steps = Steps(), KerasSteps()
        with warnings.catch_warnings(record=True) as our_warnings:
            warnings.simplefilter("always")
            _model().fit(Batches(X[:16 * count], Y[:16 * count]), steps_per_epoch=steps_per_epoch, epochs=epochs,
                         verbose=0, callbacks=[ours])
        with warnings.catch_warnings(record=True) as their_warnings:
            warnings.simplefilter("always")
            theirs.fit(KerasBatches(count), steps_per_epoch=steps_per_epoch, epochs=epochs, verbose=0,
                       callbacks=[their_steps])
        assert ours.epochs == their_steps.epochs
        ran_out = [str(w.message) for w in their_warnings if "ran out of data" in str(w.message)]
        assert [str(w.message) for w in our_warnings] == ran_out and set(ran_out) <= {RAN_OUT}
    for fit in (theirs.fit, _model().fit):
        with pytest.raises(ValueError, match=r"^When providing `x` as a generator, `y` should not be passed\. "
                                             r"Instead, the targets should be included as part of the generator"):
            fit(_generator(1), Y, verbose=0)
