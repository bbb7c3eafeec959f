"""graph._walk: the calls and links every view reads off the execution plan."""

import sys

from engine import Input, Layer, Model
from graph._walk import walk
from layers import Dense
from tests.graph.zoo import zoo


def edge_pairs(graph, level):
    return [(source, target) for source, target, _ in graph.edges(level)]


def test_calls_follow_the_plan_and_links_carry_the_producers_tensor():
    model = zoo()
    graph = walk(model)
    assert [call.node for call in graph.calls[2:]] == [step.node for step in model.plan.steps]
    for link in graph.links:
        layer, node_index, _ = link.tensor._keras_history
        assert (layer, node_index) == (link.source.layer, link.source.node_index)


def test_expansion_goes_deeper_than_the_recursion_limit():
    depth = sys.getrecursionlimit() + 100
    x = Input(shape=(2,), name="x0")
    model = Model(x, Dense(2, name="d")(x), name="m0")
    for level in range(1, depth):
        x = Input(shape=(2,), name=f"x{level}")
        model = Model(x, model(x), name=f"m{level}")
    graph = walk(model, expand_nested=True)
    deepest = graph.calls[-1]
    assert deepest.depth == depth - 1
    assert deepest.layer_key.endswith("m2/m1/m0/d") and deepest.layer_key.count("/") == depth - 1
    assert len(graph.edges("layer")) == depth


def test_dict_inputs_of_a_nested_model_link_by_the_keys_it_was_built_with():
    b, a = Input(shape=(2,), name="b"), Input(shape=(4,), name="a")
    inner = Model({"x": b, "y": a}, Dense(1, name="from_b")(b) + Dense(1, name="from_a")(a), name="inner")
    p, q = Input(shape=(2,), name="p"), Input(shape=(4,), name="q")
    model = Model([p, q], inner({"x": p, "y": q}), name="outer")
    assert edge_pairs(walk(model, expand_nested=True), "layer")[:2] == [("p", "inner/b"), ("q", "inner/a")]


def test_a_tensor_made_inside_a_nested_model_and_used_outside():
    x = Input(shape=(3,), name="x")
    hidden = Dense(3, name="hidden")(x)
    inner = Model(x, Dense(2, name="head")(hidden), name="inner")
    z = Input(shape=(3,), name="z")
    model = Model(z, [inner(z), Dense(1, name="side")(hidden)], name="outer")
    assert edge_pairs(walk(model), "layer") == [("z", "inner"), ("z", "hidden"), ("hidden", "side")]
    assert edge_pairs(walk(model, expand_nested=True), "layer") == [
        ("z", "inner/x"), ("inner/x", "inner/hidden"), ("inner/hidden", "inner/head"), ("z", "hidden"),
        ("hidden", "side")]


def test_two_model_inputs_from_one_multi_output_call_become_two_inputs():
    class Split(Layer):
        def compute_output_shape(self, input_shape):
            return [input_shape, input_shape]

        def call(self, inputs):
            return [inputs, -inputs]

    x = Input(shape=(2,), name="x")
    left, right = Split(name="split")(x)
    model = Model([left, right], left + right, name="from_split")
    graph = walk(model)
    # As in Keras, a model given intermediate tensors as inputs starts from Inputs of its own, one per tensor.
    assert [call.node_key for call in graph.calls] == ["splitCLONE[0]", "split_0_1CLONE[0]", "add[1]"]
    assert [(s, t, link.tensor._keras_history.tensor_index) for s, t, link in graph.edges("node")] == [
        ("splitCLONE[0]", "add[1]", 0), ("split_0_1CLONE[0]", "add[1]", 0)]
