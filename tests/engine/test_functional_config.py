"""Functional and Sequential configs: round trips that keep sharing and nesting."""

import json

import numpy as np
import pytest

from engine import Input, Model, ModelFormatError, Sequential
from engine.functional import Functional
from engine.functional_config import functional_config
from layers import Activation, Dense


def _shared_nested_model():
    a = Input(shape=(3,), name="a")
    b = Input(shape=(3,), name="b")
    shared = Dense(4, name="shared")
    inner_in = Input(shape=(4,), name="inner_in")
    inner = Model(inner_in, Dense(2, name="inner_dense")(inner_in), name="inner")
    mid_in = Input(shape=(4,), name="mid_in")
    middle = Model(mid_in, inner(Activation("tanh", name="mid_tanh")(mid_in)), name="middle")
    merged = shared(a) + shared(b) * 2.0
    return Model(inputs={"a": a, "b": b}, outputs={"deep": middle(merged), "slice": merged[:, :2]}, name="root")


def _links(model):
    return [(s.layer.name, [(t._keras_history.layer.name, t._keras_history.tensor_index) for t in s.node.input_tensors])
            for s in model.plan.steps]


def test_config_lists_layers_with_history_references():
    config = _shared_nested_model().get_config()
    shared = next(entry for entry in config["layers"] if entry["name"] == "shared")
    assert shared["class_name"] == "Dense"
    assert [node["args"] for node in shared["inbound_nodes"]] == [[{"__tensor__": ["a", 0, 0]}], [{"__tensor__": ["b", 0, 0]}]]
    assert config["output_layers"] == {"deep": ["middle", 0, 0], "slice": ["get_item", 0, 0]}
    nested = next(entry for entry in config["layers"] if entry["name"] == "middle")
    assert nested["class_name"] == "Functional"
    assert [entry["name"] for entry in nested["config"]["layers"]] == ["mid_in", "mid_tanh", "inner"]


def test_round_trip_rebuilds_an_equal_graph():
    model = _shared_nested_model()
    clone = Functional.from_config(json.loads(json.dumps(model.get_config())))
    assert [l.name for l in clone.layers] == [l.name for l in model.layers]
    assert _links(clone) == _links(model)
    assert len(clone.get_layer("shared").inbound_nodes) == 2
    assert isinstance(clone.get_layer("middle").get_layer("inner"), Functional)
    clone.set_weights(model.get_weights())
    data = {"a": np.random.rand(2, 3), "b": np.random.rand(2, 3)}
    for key, value in model(data).items():
        np.testing.assert_array_equal(clone(data)[key], value)


def test_sequential_round_trip_with_and_without_input():
    with_input = Sequential([Input(shape=(3,)), Dense(2, activation="relu")], name="s1")
    without = Sequential([Dense(2), Dense(1)], name="s2")
    without(np.ones((1, 5)))
    for model in (with_input, without):
        clone = Sequential.from_config(json.loads(json.dumps(model.get_config())))
        clone.set_weights(model.get_weights())
        x = np.random.rand(4, model.plan.inputs[0].shape[1])
        np.testing.assert_array_equal(clone(x), model(x))


def test_sub_model_on_intermediate_tensor_explains_why_it_cannot_be_serialized():
    x = Input(shape=(2,))
    h = Dense(2, name="h")(x)
    with pytest.raises(ValueError, match="takes the intermediate tensor 'h\\[0\\]\\[0\\]' as an input"):
        functional_config(Model(h, Dense(1)(h)))


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["layers"].append(c["layers"][1]), "appears twice"),
    (lambda c: c["layers"][2]["inbound_nodes"][0]["args"].__setitem__(0, {"__tensor__": ["nowhere", 0, 0]}), "needs tensors .*nowhere"),
    (lambda c: c.__setitem__("output_layers", {"deep": ["ghost", 0, 0]}), "refers to no tensor"),
    (lambda c: c["layers"][2].__setitem__("class_name", "Dens"), "Unknown layer type: 'Dens'.*Did you mean 'Dense'"),
    (lambda c: c["layers"][2]["config"].__setitem__("unitz", 3), "Cannot create layer 'shared'"),
    (lambda c: c.pop("layers"), "lacks 'layers'"),
])
def test_broken_configs_raise_model_format_error(mutate, message):
    config = json.loads(json.dumps(_shared_nested_model().get_config()))
    mutate(config)
    with pytest.raises(ValueError, match=message):
        Functional.from_config(config)


def test_a_cycle_in_the_config_is_detected():
    x = Input(shape=(2,), name="x")
    model = Model(x, Dense(2, name="d2")(Dense(2, name="d1")(x)))
    config = json.loads(json.dumps(model.get_config()))
    d1 = next(e for e in config["layers"] if e["name"] == "d1")
    d1["inbound_nodes"][0]["args"] = [{"__tensor__": ["d2", 0, 0]}]
    with pytest.raises(ModelFormatError, match="no layer produces .*or a cycle"):
        Functional.from_config(config)
