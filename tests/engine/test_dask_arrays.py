"""predict and evaluate on Dask arrays (engine/data/dask_arrays.py): the same numbers
as in memory on the threaded scheduler, dask's multiprocessing scheduler and a
dask.distributed cluster, the model rebuilt once per worker process, and the
errors."""

import collections
import subprocess
import sys
from pathlib import Path

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster

from engine import Input, Layer, Model
from engine.training.callbacks import Callback
from engine.data.dask_arrays import _batch_aligned
from engine.network.functional import Functional
from engine.training.losses import MeanSquaredError
from engine.training.metrics import AUC, OneHotMeanIoU, PrecisionAtRecall, TruePositives
from layers import Dense, concatenate
from tests.engine.metrics.test_metric import Maximum

SAMPLES, FEATURES, CHUNK = 20_000, 64, 2_000
RTOL = 1e-5  # float32 totals summed per block, then over blocks: another order of additions


@pytest.fixture(scope="module")
def client():
    """One two-process cluster for the module (starting one takes about a second)."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


@pytest.fixture(scope="module")
def data():
    """``(x, x as NumPy, one-hot y, sample weights)``: 20,000 x 64 in 10 chunks."""
    rng = da.random.default_rng(0)
    x = rng.standard_normal((SAMPLES, FEATURES), chunks=(CHUNK, FEATURES), dtype="float32")
    numbers = np.random.default_rng(1)
    labels = numbers.integers(0, 3, SAMPLES)
    y = np.eye(3, dtype="float32")[labels]
    weights = numbers.uniform(0.0, 2.0, SAMPLES).astype("float32")
    with dask.config.set(scheduler="threads"):
        return x, x.compute(), y, weights


def _mlp():
    inputs = Input(shape=(FEATURES,))
    model = Model(inputs, Dense(3, activation="softmax")(Dense(16, activation="relu")(inputs)))
    model.compile(loss="categorical_crossentropy", metrics=["mae", "accuracy", AUC()],
                  weighted_metrics=["accuracy"])
    return model


# ------------------------------------------------------------------ predict
def test_predict_is_lazy_and_equals_in_memory_predict_on_threads(data):
    x, x_np, _, _ = data
    model = _mlp()
    with dask.config.set(scheduler="threads"):
        lazy = model.predict(x, batch_size=256)
        assert isinstance(lazy, da.Array)
        assert lazy.chunks == ((CHUNK,) * 10, (3,)) and lazy.dtype == np.float32
        np.testing.assert_allclose(lazy.compute(), model.predict(x_np, batch_size=256, verbose=0), rtol=1e-6)


def test_predict_on_the_multiprocessing_scheduler_equals_in_memory_predict():
    """dask's multiprocessing scheduler sends every task its dependencies, so
    each block receives the model's bytes; each process still rebuilds it once
    (the ProcessBuildCount output: 1 in every row)."""
    x = da.random.default_rng(2).standard_normal((8_000, FEATURES), chunks=(1_000, FEATURES), dtype="float32")
    model = _counted_mlp("counter_processes")
    with dask.config.set(scheduler="processes"):
        scores, counts = model.predict(x)
        scores, counts = dask.compute(scores, counts)
    np.testing.assert_allclose(scores, model.predict(x.compute(scheduler="threads"), verbose=0)[0], rtol=1e-6)
    assert set(np.unique(counts)) == {1.0}


def test_predict_on_a_distributed_cluster_equals_in_memory_predict(client, data):
    x, x_np, _, _ = data
    model = _mlp()
    with dask.config.set(scheduler=client):
        np.testing.assert_allclose(model.predict(x).compute(), model.predict(x_np, verbose=0), rtol=1e-6)


# Layers constructed in this process, by name (see ProcessBuildCount).
_BUILT_IN_THIS_PROCESS = collections.Counter()


class ProcessBuildCount(Layer):
    """Outputs, for every sample, how many layers of its name the process
    running it has constructed: the test process made the original, and a
    worker process constructs one each time it rebuilds the model."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        _BUILT_IN_THIS_PROCESS[self.name] += 1

    def call(self, inputs):
        return np.full((len(inputs), 1), _BUILT_IN_THIS_PROCESS[self.name], "float32")

    def compute_output_shape(self, input_shape):
        return (input_shape[0], 1)


def _counted_mlp(counter_name):
    inputs = Input(shape=(FEATURES,))
    model = Model(inputs, [Dense(3, activation="softmax")(inputs), ProcessBuildCount(name=counter_name)(inputs)])
    model.compile(loss=["categorical_crossentropy", "mae"], metrics=[["accuracy"], []])
    return model


def test_the_model_is_rebuilt_once_per_worker_for_predict_and_evaluate(client, data):
    """Shipped once per worker, not once per block: the model reports it from
    inside the workers. Its ProcessBuildCount output is the number of times
    the worker process running a block has rebuilt the model, so every row of
    the 10 blocks reads 1 when each worker rebuilt it once; a model shipped
    with every block would count up to the blocks each worker ran. For
    evaluate, the counter output has loss "mae" against targets of 1, so its
    loss is 0 exactly when every block saw 1. (Each model names its counter
    afresh: the cluster's workers live for the whole module.)"""
    x, x_np, y, _ = data
    predicting, evaluating = _counted_mlp("counter_predict"), _counted_mlp("counter_evaluate")
    targets = [y, np.ones((SAMPLES, 1), "float32")]
    with dask.config.set(scheduler=client):
        counts = predicting.predict(x)[1].compute()
        logs = evaluating.evaluate(x, targets, verbose=0, return_dict=True)
    assert counts.shape == (SAMPLES, 1) and set(np.unique(counts)) == {1.0}
    assert logs["counter_evaluate_loss"] == 0.0
    assert logs == pytest.approx(evaluating.evaluate(x_np, targets, verbose=0, return_dict=True), rel=RTOL)


def test_predict_runs_a_multi_output_model_once_per_batch(monkeypatch):
    """One task per block computes every output: as many model runs as the
    in-memory predict makes, not one per output."""
    inputs = Input(shape=(4,))
    model = Model(inputs, {"a": Dense(2)(inputs), "b": Dense(3)(inputs)})
    x = da.random.default_rng(3).standard_normal((1_000, 4), chunks=(300, 4), dtype="float32")
    runs = []
    run_flat = Functional._run_flat

    def counted_run_flat(self, arrays, training=False):
        runs.append(len(arrays[0]))
        return run_flat(self, arrays, training)

    monkeypatch.setattr(Functional, "_run_flat", counted_run_flat)
    with dask.config.set(scheduler="threads"):
        outputs = model.predict(x, batch_size=64)
        assert sorted(outputs) == ["a", "b"] and outputs["b"].shape == (1_000, 3)
        a, b = dask.compute(outputs["a"], outputs["b"])
    assert len(runs) == 5 + 5 + 5 + 2 and sum(runs) == 1_000  # blocks of 300, 300, 300, 100 in batches of 64
    expected = model.predict(x.compute(scheduler="threads"), batch_size=64, verbose=0)
    np.testing.assert_allclose(a, expected["a"], rtol=1e-6)
    np.testing.assert_allclose(b, expected["b"], rtol=1e-6)


def test_predict_and_evaluate_a_multi_input_model_given_a_dict_of_differently_chunked_arrays():
    left, right = Input(shape=(8,), name="left"), Input(shape=(4,), name="right")
    model = Model({"left": left, "right": right}, Dense(1)(concatenate([Dense(5)(left), right])))
    model.compile(loss="mse", metrics=["mae"])
    rng = da.random.default_rng(4)
    x = {"left": rng.standard_normal((2_000, 8), chunks=(250, 8), dtype="float32"),
         "right": rng.standard_normal((2_000, 4), chunks=(400, 2), dtype="float32")}
    y = rng.standard_normal((2_000, 1), chunks=(700, 1), dtype="float32")
    with dask.config.set(scheduler="threads"):
        x_np, y_np = dask.compute(x, y)
        predicted = model.predict(x)
        assert predicted.chunks[0] == (250,) * 8
        np.testing.assert_allclose(predicted.compute(), model.predict(x_np, verbose=0), rtol=1e-6)
        logs = model.evaluate(x, y, return_dict=True, verbose=0)
    assert logs == pytest.approx(model.evaluate(x_np, y_np, return_dict=True, verbose=0), rel=RTOL)


def test_predict_gives_a_list_output_structure_and_unknown_sizes_as_nan():
    inputs = Input(shape=(None, 4))
    model = Model(inputs, [Dense(2)(inputs), Dense(1)(inputs)])
    x = da.ones((10, 7, 4), chunks=(4, 7, 4), dtype="float32")
    first, second = model.predict(x)
    assert first.shape[0] == 10 and np.isnan(first.shape[1])  # the model's output spec: (None, None, 2)
    np.testing.assert_allclose(second.compute(scheduler="threads"), model.predict(np.ones((10, 7, 4)), verbose=0)[1])


def test_predict_on_empty_data_gives_empty_outputs():
    inputs = Input(shape=(4,))
    model = Model(inputs, Dense(2)(inputs))
    assert model.predict(da.zeros((0, 4), chunks=5)).compute(scheduler="threads").shape == (0, 2)


# ----------------------------------------------------------------- evaluate
def test_evaluate_equals_in_memory_evaluate_on_threads(data):
    x, x_np, y, _ = data
    model = _mlp()
    expected = model.evaluate(x_np, y, verbose=0, return_dict=True)
    with dask.config.set(scheduler="threads"):
        logs = model.evaluate(x, y, verbose=0, return_dict=True)
        as_list = model.evaluate(x, da.from_array(y, chunks=1_400), verbose=0)
    assert sorted(logs) == ["accuracy", "auc", "loss", "mae", "weighted_accuracy"]
    assert logs == pytest.approx(expected, rel=RTOL)
    assert as_list == pytest.approx(model.evaluate(x_np, y, verbose=0), rel=RTOL)


def test_evaluate_with_counting_metrics_equals_in_memory_evaluate(data):
    x, x_np, y, weights = data
    inputs = Input(shape=(FEATURES,))
    model = Model(inputs, Dense(3, activation="softmax")(inputs))
    model.compile(loss="categorical_crossentropy", metrics=[
        TruePositives(thresholds=[0.3, 0.6]), PrecisionAtRecall(0.5), OneHotMeanIoU(num_classes=3)])
    expected = model.evaluate(x_np, y, sample_weight=weights, verbose=0, return_dict=True)
    with dask.config.set(scheduler="threads"):
        logs = model.evaluate(x, y, sample_weight=weights, verbose=0, return_dict=True)
    assert sorted(logs) == ["loss", "one_hot_mean_io_u", "precision_at_recall", "true_positives"]
    for name, value in expected.items():
        np.testing.assert_allclose(logs[name], value, rtol=RTOL)


def test_evaluate_with_sample_weights_equals_in_memory_evaluate(data):
    x, x_np, y, weights = data
    model = _mlp()
    expected = model.evaluate(x_np, y, sample_weight=weights, verbose=0, return_dict=True)
    with dask.config.set(scheduler="threads"):
        dask_weights = model.evaluate(x, y, sample_weight=da.from_array(weights, chunks=6_000), verbose=0,
                                      return_dict=True)
        numpy_weights = model.evaluate(x, y, sample_weight=weights, verbose=0, return_dict=True)
    assert dask_weights == pytest.approx(expected, rel=RTOL)
    assert numpy_weights == pytest.approx(expected, rel=RTOL)
    assert expected["weighted_accuracy"] != pytest.approx(expected["accuracy"], rel=1e-3)  # the weights count


def test_evaluate_on_a_distributed_cluster_equals_in_memory_evaluate(client, data):
    x, x_np, y, weights = data
    model = _mlp()
    with dask.config.set(scheduler=client):
        logs = model.evaluate(x, y, sample_weight=weights, verbose=0, return_dict=True)
    assert logs == pytest.approx(model.evaluate(x_np, y, sample_weight=weights, verbose=0, return_dict=True),
                                 rel=RTOL)


def test_evaluate_a_multi_output_model_equals_in_memory_evaluate():
    inputs = Input(shape=(6,))
    hidden = Dense(8, activation="relu")(inputs)
    model = Model(inputs, {"label": Dense(3, activation="softmax")(hidden), "score": Dense(1)(hidden)})
    model.compile(loss={"label": "sparse_categorical_crossentropy", "score": "mse"}, loss_weights={"label": 1.0,
                  "score": 0.5}, metrics={"label": ["accuracy"], "score": ["mae"]})
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3_000, 6)).astype("float32")
    y = {"label": rng.integers(0, 3, 3_000), "score": rng.normal(size=(3_000, 1)).astype("float32")}
    expected = model.evaluate(x, y, verbose=0, return_dict=True)
    with dask.config.set(scheduler="threads"):
        logs = model.evaluate(da.from_array(x, chunks=(700, 6)), {"label": y["label"],
                              "score": da.from_array(y["score"], chunks=1_000)}, verbose=0, return_dict=True)
    assert sorted(logs) == ["label_accuracy", "label_loss", "loss", "score_loss", "score_mae"]
    assert logs == pytest.approx(expected, rel=RTOL)


def test_evaluate_cuts_blocks_at_batch_edges_so_batch_dependent_losses_still_match():
    """A loss reduced by "sum" is a sum per batch: a block edge inside a batch
    would split it. Blocks of 1,000 samples with batches of 64 are cut at
    multiples of 64, so the blocks run the in-memory batches."""
    inputs = Input(shape=(3,))
    model = Model(inputs, Dense(1)(inputs))
    model.compile(loss=MeanSquaredError(reduction="sum"))
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(5_000, 3)).astype("float32"), rng.normal(size=(5_000, 1)).astype("float32")
    with dask.config.set(scheduler="threads"):
        loss = model.evaluate(da.from_array(x, chunks=(1_000, 3)), y, batch_size=64, verbose=0)
    assert loss == pytest.approx(model.evaluate(x, y, batch_size=64, verbose=0), rel=RTOL)


class SquarePenalty(Layer):
    """Adds the mean square of its inputs to the losses (``add_loss``) and passes them on."""

    def call(self, inputs):
        self.add_loss(float(np.mean(inputs ** 2)))
        return inputs


def test_evaluate_on_threads_keeps_the_losses_a_layer_adds_apart():
    """A layer's ``add_loss`` stores the loss on the layer, which every thread
    shares; unguarded, a thread would read another block's losses."""
    inputs = Input(shape=(16,))
    model = Model(inputs, Dense(1)(SquarePenalty()(Dense(32)(inputs))))
    model.compile(loss="mse")
    rng = np.random.default_rng(7)
    x = (rng.normal(size=(20_000, 16)) * np.linspace(0.1, 10.0, 20_000)[:, None]).astype("float32")
    y = rng.normal(size=(20_000, 1)).astype("float32")
    with dask.config.set(scheduler="threads", num_workers=4):
        loss = model.evaluate(da.from_array(x, chunks=(1_000, 16)), y, verbose=0)
    assert loss == pytest.approx(model.evaluate(x, y, verbose=0), rel=RTOL)


def test_batch_aligned_moves_inner_edges_down_to_batch_multiples():
    assert _batch_aligned((1_000,) * 5, 64) == (960, 1_024, 960, 1_024, 1_032)
    assert _batch_aligned((10, 10, 10), 32) == (30,)  # blocks left empty are dropped
    assert _batch_aligned((0,), 32) == (0,)


def test_evaluate_calls_the_test_callbacks_with_the_final_logs(data, capsys):
    x, _, y, _ = data
    model = _mlp()

    class Recorder(Callback):
        def __init__(self):
            super().__init__()
            self.calls = []

        def on_test_begin(self, logs=None):
            self.calls.append(("begin", logs))

        def on_test_end(self, logs=None):
            self.calls.append(("end", logs))

    recorder = Recorder()
    with dask.config.set(scheduler="threads"):
        logs = model.evaluate(x[:1_000], y[:1_000], callbacks=[recorder], return_dict=True)
    assert recorder.calls == [("begin", {}), ("end", logs)]
    assert capsys.readouterr().out == " - ".join(f"{k}: {v:.4f}" for k, v in logs.items()) + "\n"


def test_evaluate_on_empty_data_raises_as_in_memory():
    inputs = Input(shape=(4,))
    model = Model(inputs, Dense(1)(inputs))
    model.compile(loss="mse")
    with pytest.raises(ValueError) as expected:
        model.evaluate(np.zeros((0, 4)), np.zeros((0, 1)), verbose=0)
    with pytest.raises(ValueError) as received, dask.config.set(scheduler="threads"):
        model.evaluate(da.zeros((0, 4), chunks=5), np.zeros((0, 1)), verbose=0)
    assert str(received.value) == str(expected.value)


# ------------------------------------------------------------------- errors
def test_unknown_chunk_sizes_are_refused_with_what_to_call():
    inputs = Input(shape=(4,))
    model = Model(inputs, Dense(1)(inputs))
    model.compile(loss="mse")
    x = da.from_array(np.arange(40, dtype="float32").reshape(10, 4), chunks=5)
    filtered = x[x[:, 0] > 10]
    with pytest.raises(ValueError, match=r"predict\(\) of model '.*' received a Dask array with unknown chunk "
                                         r"sizes for x, of shape \(nan, 4\).*\(e.g. x = x.compute_chunk_sizes\(\)\)"):
        model.predict(filtered)
    with pytest.raises(ValueError, match=r"evaluate\(\) .* unknown chunk sizes for y, of shape \(nan, 1\).*"
                                         r"\(e.g. y = y.compute_chunk_sizes\(\)\)"):
        model.evaluate(x, x[x[:, 0] > 10][:, :1], verbose=0)


def test_arrays_of_different_lengths_are_refused_as_in_memory():
    inputs = Input(shape=(4,))
    model = Model(inputs, Dense(1)(inputs))
    model.compile(loss="mse")
    with pytest.raises(ValueError) as expected:
        model.evaluate(np.zeros((10, 4)), np.zeros((9, 1)), verbose=0)
    with pytest.raises(ValueError) as received:
        model.evaluate(da.zeros((10, 4), chunks=5), np.zeros((9, 1)), verbose=0)
    assert str(received.value) == str(expected.value)
    assert str(received.value) == ("Data cardinality is ambiguous: 'x' sizes: [10]; 'y' sizes: [9]. Make sure all "
                                   "arrays contain the same number of samples.")
    left, right = Input(shape=(2,), name="left"), Input(shape=(3,), name="right")
    two = Model([left, right], Dense(1)(concatenate([left, right])))
    with pytest.raises(ValueError, match=r"'x' sizes: \[10, 9\]\. Make sure all arrays contain the same number"):
        two.predict([da.zeros((10, 2)), da.zeros((9, 3))])


def test_a_metric_whose_state_may_not_add_up_is_refused_before_any_block_runs():
    inputs = Input(shape=(4,))
    model = Model(inputs, Dense(1)(inputs))
    model.compile(loss="mse", metrics=["mae", Maximum()])
    x = da.zeros((10, 4), chunks=5).map_blocks(_never_computed, meta=np.zeros((0, 4)))
    with pytest.raises(ValueError, match=r"cannot compute metric 'maximum' \(Maximum\): it sums the metric states "
                                         r"of the blocks.*Evaluate on NumPy arrays \(x.compute\(\)\)"):
        model.evaluate(x, np.zeros((10, 1)), verbose=0)


def _never_computed(block):
    raise AssertionError("a block was computed")


def test_predict_refuses_callbacks_it_could_not_call():
    inputs = Input(shape=(4,))
    model = Model(inputs, Dense(1)(inputs))
    with pytest.raises(ValueError, match=r"returns lazy arrays .* so it calls no callbacks; received callbacks="):
        model.predict(da.zeros((10, 4)), callbacks=[Callback()])


def test_the_core_install_runs_without_dask():
    """engine imports Dask only when a Dask array is passed: with dask and
    distributed made unimportable, models still build, predict and evaluate."""
    code = (
        "import sys; sys.modules.update(dask=None, distributed=None)\n"
        "import numpy as np\n"
        "from engine import Input, Model\n"
        "from layers import Dense\n"
        "inputs = Input(shape=(2,)); model = Model(inputs, Dense(1)(inputs)); model.compile(loss='mse')\n"
        "print(model.predict(np.ones((3, 2)), verbose=0).shape, model.evaluate(np.ones((3, 2)), np.ones((3, 1)), "
        "verbose=0) >= 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            cwd=Path(__file__).parents[2])
    assert result.stdout.strip() == "(3, 1) True"
