"""Graphs built, and one model run, from many threads at once.

The interpreter is made to switch threads every microsecond, so that a
read-then-append left unlocked (an automatic name, a first build) interleaves
with another thread's; a node list that yields inside ``len`` and ``append``
does the same for node indices.
"""

import sys
import threading
import time

import numpy as np
import pytest

from engine import Input, KerasTensor, Layer, Model, Sequential
from engine.network.naming import unique_name
from engine.network.node import Node
from layers import (
    GRU,
    LSTM,
    Add,
    BatchNormalization,
    Dense,
    Dropout,
    Flatten,
    MultiHeadAttention,
    SimpleRNN,
)

THREADS = 8
ROUNDS = 100


@pytest.fixture(autouse=True)
def fast_thread_switching():
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def _in_threads(count, fn):
    """Runs ``fn(i)`` in ``count`` threads released together; returns the results in order."""
    barrier = threading.Barrier(count)
    results, errors = [None] * count, []

    def worker(i):
        try:
            barrier.wait()
            results[i] = fn(i)
        except BaseException as error:  # noqa: BLE001 - re-raised in the main thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def _check_node(node):
    """Every input comes from the node its history names, and every output names this node."""
    for tensor in node.input_tensors:
        layer, node_index, tensor_index = tensor._keras_history
        assert layer.inbound_nodes[node_index].output_tensors[tensor_index] is tensor
    for tensor_index, tensor in enumerate(node.output_tensors):
        assert tensor._keras_history == (node.outbound_layer, node.outbound_layer.inbound_nodes.index(node),
                                         tensor_index)


def test_automatic_names_handed_out_in_threads_are_unique():
    names = _in_threads(THREADS, lambda _: [unique_name("race") for _ in range(50_000)])
    flat = [name for per_thread in names for name in per_thread]
    assert len(set(flat)) == len(flat) == THREADS * 50_000


def test_graphs_built_in_threads_get_unique_names_and_consistent_links():
    def build(_):
        models = []
        for _ in range(ROUNDS):
            x = Input(shape=(4,))
            h = Dense(4)(x)
            models.append(Model(x, Add()([h, Dense(4)(h)])))
        return models

    models = [m for per_thread in _in_threads(THREADS, build) for m in per_thread]
    names = [layer.name for model in models for layer in model.layers] + [model.name for model in models]
    assert len(names) == len(set(names)) == THREADS * ROUNDS * 5
    for model in models:
        assert len(model.plan.steps) == 3
        for step in model.plan.steps:
            assert len(step.layer.inbound_nodes) == 1
            _check_node(step.node)


class _SlowBuild(Layer):
    """A layer counting its builds, with a build long enough for threads to meet in it."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.builds = 0

    def build(self, input_shape):
        self.builds += 1
        time.sleep(0.01)
        self.kernel = self.add_weight(shape=(input_shape[-1], 2))

    def compute_output_shape(self, input_shape):
        return input_shape[:-1] + (2,)

    def call(self, inputs):
        return inputs @ self.kernel


def test_a_shared_layer_called_from_threads_builds_once_and_numbers_its_nodes_consistently():
    shared = _SlowBuild(name="shared")

    def call(_):
        pairs = []
        for _ in range(ROUNDS):
            x = Input(shape=(3,))
            pairs.append((x, shared(x)))
        return pairs

    pairs = [pair for per_thread in _in_threads(THREADS, call) for pair in per_thread]
    assert shared.builds == 1
    assert len(shared.inbound_nodes) == THREADS * ROUNDS
    assert sorted(y._keras_history.node_index for _, y in pairs) == list(range(THREADS * ROUNDS))
    for node_index, node in enumerate(shared.inbound_nodes):
        assert node.output_tensors[0]._keras_history == (shared, node_index, 0)
    for x, y in pairs:
        node = shared.inbound_nodes[y._keras_history.node_index]
        assert node.input_tensors == [x] and node.output_tensors == [y]
        assert x._keras_history.layer.outbound_nodes == [node]


class _YieldingList(list):
    """A list that lets other threads run in ``len`` and ``append``, so that an
    unlocked read-then-append of a node index interleaves at once."""

    def __len__(self):
        time.sleep(0)
        return super().__len__()

    def append(self, item):
        time.sleep(0)
        super().append(item)


class _CountingSequential(Sequential):
    """A Sequential model counting how often its graph is built."""

    def build(self, input_shape=None):
        self.graph_builds = getattr(self, "graph_builds", 0) + 1
        time.sleep(0.01)
        super().build(input_shape)


def test_a_sequential_model_first_called_from_threads_builds_its_graph_once():
    model = _CountingSequential([Dense(2, name="only")])
    x = np.ones((4, 3), "float32")
    outputs = _in_threads(THREADS, lambda _: model(x))
    assert model.graph_builds == 1
    for output in outputs:
        np.testing.assert_array_equal(output, outputs[0])


def test_nodes_registered_in_threads_get_the_index_their_outputs_name():
    source, shared = Input(shape=(2,), name="source"), Dense(2, name="shared")
    shared._inbound_nodes = _YieldingList()
    shared(source)

    def register(_):
        return [Node(shared, (source,), {}, KerasTensor((None, 2))).output_tensors[0] for _ in range(500)]

    outputs = [y for per_thread in _in_threads(THREADS, register) for y in per_thread]
    assert len(shared.inbound_nodes) == len(source._keras_history.layer.outbound_nodes) == 1 + THREADS * 500
    for node_index, node in enumerate(shared.inbound_nodes):
        assert node.output_tensors[0]._keras_history == (shared, node_index, 0)
    assert all(shared.inbound_nodes[y._keras_history.node_index].output_tensors == [y] for y in outputs)


def _stateful_model():
    """One model holding every layer family that keeps state or randomness."""
    sequence = Input(shape=(6, 4), name="sequence")
    h = LSTM(5, return_sequences=True)(sequence)
    h = GRU(5, return_sequences=True)(h)
    h = SimpleRNN(5, return_sequences=True)(h)
    h = MultiHeadAttention(num_heads=2, key_dim=3)(h, h)
    h = Dropout(0.5)(BatchNormalization()(h))
    inner_in = Input(shape=(6, 5), name="inner_in")
    inner = Model(inner_in, Dense(5, activation="tanh")(inner_in), name="inner")
    shared = Dense(5, name="shared")
    h = shared(inner(h)) + shared(h)
    return Model(sequence, Dense(1)(Flatten()(h)), name="stateful")


def test_one_model_called_from_16_threads_matches_sequential_results():
    model = _stateful_model()
    batch_norm = next(layer for layer in model.layers if isinstance(layer, BatchNormalization))
    batch_norm.set_weights([w + np.random.rand(*w.shape) for w in batch_norm.get_weights()])
    inputs = [np.random.rand(3, 6, 4).astype("float32") for _ in range(16)]
    expected = [model(x, training=False) for x in inputs]

    results = _in_threads(16, lambda i: [model(inputs[i], training=False) for _ in range(5)])
    for i, outputs in enumerate(results):
        for output in outputs:
            np.testing.assert_allclose(output, expected[i], rtol=1e-6, atol=1e-6)


def test_predict_while_fit_runs_in_another_thread():
    model = _stateful_model()
    model.compile(optimizer="adam", loss="mse")
    x, y = np.random.rand(64, 6, 4), np.random.rand(64, 1)
    fitted = threading.Event()
    predictions = []

    def work(i):
        if i == 0:
            history = model.fit(x, y, batch_size=16, epochs=3, verbose=0)
            fitted.set()
            return history
        while not fitted.is_set():
            predictions.append(model.predict(x[:8], verbose=0))
        return None

    history = _in_threads(2, work)[0]
    assert len(history.history["loss"]) == 3
    assert predictions and all(p.shape == (8, 1) and np.isfinite(p).all() for p in predictions)


def test_a_modules_children_are_listed_while_another_thread_sets_an_attribute():
    class SetsAnAttributeWhenRead(list):  # does what another thread's first call may do meanwhile
        def __iter__(self):
            owner.made_meanwhile = Dense(1, name="meanwhile")
            return super().__iter__()

    owner = Layer(name="owner")
    owner.parts = SetsAnAttributeWhenRead([Dense(2, name="part")])
    owner.after = Dense(3, name="after")
    assert [module.name for module in owner._child_modules()] == ["part", "after"]
