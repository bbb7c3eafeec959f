"""Sequential is a model of its own, as in Keras 3: a stack of layers and, once its input shape is
known, a Functional over them (``_functional``) that runs it and that the graph tools read."""

import os

import numpy as np
import pytest

import graph
from engine import Functional, GradientTape, Input, Layer, Model, Sequential, clone_model, load_model
from engine.files.weight_paths import weight_paths
from engine.network.functional import functional_of
from layers import Dense, Dropout


def _stack(name="stack"):
    return Sequential([Input(shape=(3,), name="x"), Dense(4, activation="relu", name="hidden"),
                       Dense(2, name="head")], name=name)


def test_a_sequential_model_is_a_model_that_holds_a_functional_not_one():
    model = _stack()
    assert isinstance(model, Model) and not isinstance(model, Functional)
    assert Functional not in type(model).__mro__
    assert type(model._functional) is Functional and model._functional is model._functional  # kept, not remade
    assert functional_of(model) is model._functional and functional_of(model._functional) is model._functional
    assert model.inputs == model._functional.inputs and model.output is model._functional.output
    assert model.plan is model._functional.plan and model.input_names == ["x"] and model.output_names == ["head"]
    assert (model.input_shape, model.output_shape) == ((None, 3), (None, 2))


def test_the_functional_is_not_a_child_of_the_model():
    model = _stack()
    assert [layer.name for layer in model.layers] == ["hidden", "head"]
    assert all(layer is not model._functional for layer in model._flatten_layers())
    assert len(model.weights) == 4 and sorted(weight_paths(model)) == [
        "head/bias", "head/kernel", "hidden/bias", "hidden/kernel"]
    model.trainable = False
    assert model.trainable_weights == [] and len(model.non_trainable_weights) == 4


def test_unbuilt_it_has_no_functional_and_no_graph_attributes():
    model = Sequential([Dense(2, name="d")], name="later")
    assert model._functional is None and functional_of(model) is None and not model.built
    for name in ("inputs", "outputs", "input", "output", "input_names", "output_names", "input_shape",
                 "output_shape"):
        assert not hasattr(model, name)
    with pytest.raises(AttributeError, match="Sequential model 'later' has no defined output shape yet"):
        model.output_shape
    assert model(np.ones((5, 7), "float32")).shape == (5, 2)
    assert model.input_shape == (None, 7) and functional_of(model) is model._functional


def test_add_and_pop_make_a_new_functional_over_the_same_weights():
    model = _stack()
    first, kernel = model._functional, model.get_layer("hidden").kernel
    model.add(Dense(5, name="extra"))
    assert model._functional is not first and model.output_shape == (None, 5)
    assert model.get_layer("hidden").kernel is kernel
    model.pop()
    assert model.output_shape == (None, 2) and model.get_layer("hidden").kernel is kernel


def test_a_nested_sequential_is_one_node_of_the_outer_graph_and_trains():
    inner = _stack("inner")
    x = Input(shape=(3,), name="z")
    model = Model(x, Dense(1, name="out")(inner(x)), name="outer")
    assert [layer.name for layer in model.layers] == ["z", "inner", "out"] and len(inner.inbound_nodes) == 1
    assert model.get_layer("inner/hidden") is inner.get_layer("hidden")
    assert model.get_tensor("inner/hidden[0][0]") is inner.get_layer("hidden").output
    data = np.random.default_rng(0).normal(size=(8, 3)).astype("float32")
    before = inner.get_layer("hidden").kernel.numpy().copy()
    model.compile(optimizer="sgd", loss="mse")
    model.fit(data, np.zeros((8, 1), "float32"), epochs=1, verbose=0)
    assert not np.allclose(inner.get_layer("hidden").kernel.numpy(), before)
    with GradientTape() as tape:
        loss = np.sum(model(data) ** 2)
    grads = tape.gradient(loss, inner.trainable_weights)
    assert [g.shape for g in grads] == [(3, 4), (4,), (4, 2), (2,)]
    assert model(data, outputs="inner/hidden[0][0]").shape == (8, 4)


def test_the_graph_tools_enter_a_nested_sequential(tmp_path):
    inner = _stack("inner")
    x = Input(shape=(3,), name="z")
    model = Model(x, Dense(1, name="out")(inner(x)), name="outer")
    data = np.random.default_rng(1).normal(size=(4, 3)).astype("float32")
    part = graph.extract(model, outputs="inner/hidden[0][0]")
    assert part(data).shape == (4, 4)
    edited = graph.replace(model, "inner/head", Dense(2, name="new_head"))
    assert edited.get_layer("inner/new_head").units == 2 and edited(data).shape == (4, 1)
    namespace = {}
    exec(graph.to_python(model), namespace)
    assert "Sequential([" in graph.to_python(model)
    assert namespace["build_model"]().get_layer("inner/head").units == 2
    proto = graph.to_onnx(model)
    assert [node.op_type for node in proto.graph.node].count("MatMul") == 3
    clone = clone_model(model)
    assert type(clone.get_layer("inner")) is Sequential and clone(data).shape == (4, 1)
    lines = []
    model.summary(print_fn=lines.append, expand_nested=True)
    assert any("hidden" in line for line in lines)
    for suffix in (".nw", ".keras"):
        path = os.path.join(tmp_path, f"outer{suffix}")
        model.save(path)
        loaded = load_model(path)
        assert type(loaded.get_layer("inner")) is Sequential
        np.testing.assert_allclose(loaded(data), model(data), rtol=1e-6)


def test_a_sequential_called_on_arrays_runs_its_functional_with_training_flags():
    model = Sequential([Input(shape=(3,)), Dropout(0.99, seed=1)])
    data = np.ones((2, 3), "float32")
    assert np.array_equal(model(data), data)
    assert not np.array_equal(model(data, training=True), data)


class ShapeUnknown(Layer):
    """A layer that cannot say its outputs from its inputs' shapes (Keras' sequential_test has one)."""

    def call(self, inputs):
        return inputs + 1.0

    def compute_output_spec(self, *args, **kwargs):
        raise NotImplementedError


def test_a_layer_that_cannot_say_its_outputs_makes_the_model_run_layer_by_layer():
    model = Sequential([ShapeUnknown()])
    x = np.random.default_rng(0).random((3, 2)).astype("float32")
    np.testing.assert_allclose(model(x), x + 1)
    assert model.built and functional_of(model) is None
    lines = []
    model.summary(print_fn=lines.append)
    assert "shape_unknown (ShapeUnknown)" in "\n".join(lines)


def test_a_model_run_layer_by_layer_trains_with_fit_and_under_a_tape():
    model = Sequential([Dense(3), ShapeUnknown(), Dense(1)])
    model.compile("sgd", "mse")
    rng = np.random.default_rng(0)
    x = rng.random((32, 4)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    losses = model.fit(x, y, epochs=4, verbose=0).history["loss"]
    assert losses[-1] < losses[0]
    assert model.output_names == ["output_0"] and model.predict(x[:2], verbose=0).shape == (2, 1)
    with GradientTape() as tape:
        loss = np.sum(model(x[:2], training=True) ** 2)
    assert [g.shape for g in tape.gradient(loss, model.trainable_weights)] == [(4, 3), (3,), (3, 1), (1,)]
