"""Qualified names (engine/network/qualified_names.py): one name for every layer, call and tensor, at any depth."""

import pytest

from engine import Input, Model, Sequential
from engine.network.qualified_names import find_layer, find_node, find_tensor, layer_paths, node_paths, path_of
from layers import Dense, add


def _three_deep():
    """``outer`` holds ``block`` (a Sequential called twice) holding ``inner``
    (functional); ``mid`` is the name of a layer at each depth."""
    x = Input(shape=(3,), name="x")
    inner = Model(x, Dense(3, name="mid")(x), name="inner")
    block = Sequential([Input(shape=(3,), name="block_in"), inner, Dense(3, name="mid")], name="block")
    z = Input(shape=(3,), name="z")
    outer = Model(z, Dense(2, name="mid")(block(block(z))), name="outer")
    return outer, block, inner


def test_layer_paths_list_every_depth_in_plan_order_without_the_models_own_name():
    outer, block, inner = _three_deep()
    paths = layer_paths(outer)
    assert list(paths) == ["z", "block", "block/block_in", "block/inner", "block/inner/x", "block/inner/mid",
                           "block/mid", "mid"]
    assert paths["block/inner/mid"] is inner.layers[1]
    assert paths["block/mid"] is block.layers[1]
    assert paths["mid"] is outer.layers[-1]
    assert len({id(layer) for layer in paths.values()}) == len(paths)


def test_get_layer_takes_paths_at_depth_three_and_keeps_plain_names():
    outer, block, inner = _three_deep()
    assert outer.get_layer("block/inner/mid") is inner.get_layer("mid")
    assert outer.get_layer("block/mid") is block.get_layer("mid")
    assert outer.get_layer("mid") is outer.layers[-1]
    assert outer.get_layer("block") is block and outer.get_layer(index=1) is block


def test_get_layer_errors_name_the_closest_paths():
    outer, _, _ = _three_deep()
    with pytest.raises(ValueError, match=r"No layer 'block/inner/mdi' in model 'outer'\. Closest: "
                                         r"'block/inner/mid', "):
        outer.get_layer("block/inner/mdi")
    with pytest.raises(ValueError, match=r"No such layer: 'x' in model 'outer'\. Existing layers are: "
                                         r"\['z', 'block', 'mid'\]\. Nested models hold 'x' at: 'block/inner/x'"):
        outer.get_layer("x")
    with pytest.raises(ValueError, match=r"No layer 'inner/mid' in model 'outer'\. Closest: 'block/inner/mid'"):
        find_layer(outer, "inner/mid")


def test_calls_and_tensors_of_a_shared_layer_are_the_real_objects():
    a, b = Input(shape=(3,), name="a"), Input(shape=(3,), name="b")
    shared = Dense(2, name="shared")
    total = add([shared(a), shared(b)], name="sum")
    model = Model([a, b], total, name="towers")
    assert list(node_paths(model)) == ["a[0]", "b[0]", "shared[0]", "shared[1]", "sum[0]"]
    assert model.get_node("shared[1]") is shared.inbound_nodes[1]
    assert model.get_node("shared[1]").input_tensors[0] is b
    assert model.get_tensor("shared[1][0]") is shared.inbound_nodes[1].output_tensors[0]
    assert model.get_tensor("sum[0][0]") is total
    assert model.get_tensor("a[0][0]") is a and model.get_tensor("b") is b
    assert path_of(model, shared.inbound_nodes[1]) == "shared[1]"
    assert path_of(model, total) == "sum[0][0]" and path_of(model, b) == "b[0][0]"
    with pytest.raises(ValueError, match=r"No call 'shared\[2\]' in model 'towers'\. Closest: 'shared\[0\]'"):
        model.get_node("shared[2]")
    with pytest.raises(ValueError, match=r"No tensor 'shared\[1\]\[1\]' in model 'towers'\. Closest: "
                                         r"'shared\[1\]\[0\]'"):
        model.get_tensor("shared[1][1]")


def test_calls_outside_the_model_are_not_its_calls():
    shared = Dense(2, name="shared")
    shared(Input(shape=(3,), name="elsewhere"))
    x = Input(shape=(3,), name="x")
    model = Model(x, shared(x), name="m")
    assert list(node_paths(model)) == ["x[0]", "shared[1]"]
    with pytest.raises(ValueError, match=r"No call 'shared\[0\]' in model 'm'\. Closest: 'shared\[1\]'"):
        model.get_node("shared[0]")


def test_nested_calls_and_tensors_resolve_by_path_and_by_the_views_keys():
    outer, block, inner = _three_deep()
    mid_call = inner.get_layer("mid").inbound_nodes[0]
    assert outer.get_node("block/inner/mid[0]") is mid_call
    assert outer.get_node("block[1]/inner[0]/mid[0]") is mid_call  # to_networkx(level="node", expand_nested=True)
    assert outer.get_node("block[1]") is block.inbound_nodes[1]
    assert outer.get_tensor("block/inner/mid[0][0]") is mid_call.output_tensors[0]
    assert outer.get_tensor("block/inner/x") is inner.inputs[0]
    assert path_of(outer, mid_call.output_tensors[0]) == "block/inner/mid[0][0]"
    assert path_of(outer, inner.get_layer("mid")) == "block/inner/mid"
    assert path_of(outer, outer.outputs[0]) == "mid[0][0]"
    with pytest.raises(ValueError, match=r"No call 'block\[2\]/inner\[0\]/mid\[0\]' in model 'outer'"):
        outer.get_node("block[2]/inner[0]/mid[0]")


def test_two_nested_models_may_hold_layers_of_one_name():
    def tower(name):
        x = Input(shape=(3,), name="x")
        return Model(x, Dense(2, name="dense")(Dense(4, name="hidden")(x)), name=name)

    left, right = tower("left"), tower("right")
    a = Input(shape=(3,), name="a")
    model = Model(a, add([left(a), right(a)]), name="two")
    assert model.get_layer("left/dense") is left.get_layer("dense")
    assert model.get_layer("right/dense") is right.get_layer("dense")
    assert model.get_layer("left/dense") is not model.get_layer("right/dense")
    assert path_of(model, right.get_layer("hidden")) == "right/hidden"
    assert model.get_tensor("right/dense[0][0]") is right.outputs[0]


def test_path_of_refuses_what_the_model_does_not_hold():
    x = Input(shape=(3,), name="x")
    model = Model(x, Dense(2, name="d")(x), name="m")
    with pytest.raises(ValueError, match=r"Layer 'stray' \(Dense\) is not part of model 'm'"):
        path_of(model, Dense(1, name="stray"))


def test_a_sequential_model_names_its_layers_once_built():
    model = Sequential([Dense(4, name="hidden"), Dense(1, name="out")], name="seq")
    assert list(layer_paths(model)) == ["hidden", "out"]
    model.build((None, 3))
    assert list(layer_paths(model))[1:] == ["hidden", "out"]
    assert find_tensor(model, "out[0][0]") is model.outputs[0]
    assert find_node(model, "hidden[0]") is model.get_layer("hidden").inbound_nodes[0]
