"""Functional and Sequential configs: round trips that keep sharing and nesting."""

import json
import random

import numpy as np
import pytest

from engine import Input, Model, ModelFormatError, Sequential
from engine.network import functional_config as replay
from engine.network.functional import Functional
from engine.network.functional_config import functional_config
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


def test_sub_model_on_intermediate_tensor_starts_from_an_input_and_round_trips():
    x = Input(shape=(2,))
    h = Dense(2, name="h")(x)
    tail = Model(h, Dense(1, name="tail")(h))
    config = functional_config(tail)
    assert [layer["name"] for layer in config["layers"]] == ["hCLONE", "tail"]
    revived = Functional.from_config(config)
    revived.set_weights(tail.get_weights())
    data = np.random.rand(3, 2).astype("float32")
    np.testing.assert_allclose(revived(data), tail(data), rtol=1e-6)


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


def _chain_model(depth):
    """The shared and nested model followed by a chain of ``depth`` Dense layers."""
    a, b = Input(shape=(3,), name="a"), Input(shape=(3,), name="b")
    shared = Dense(3, name="shared")
    inner_in = Input(shape=(3,), name="inner_in")
    inner = Model(inner_in, Dense(3, name="inner_dense")(inner_in), name="inner")
    h = inner(shared(a)) + shared(b)
    for i in range(depth):
        h = Dense(3, name=f"chain_{i}")(h)
    return Model([a, b], shared(h), name="chain")


@pytest.fixture
def replay_counts(monkeypatch):
    """Counts the calls replayed and the values decoded while rebuilding configs."""
    counts = {"calls": 0, "decoded": 0}
    replay_call, decode = replay._replay_call, replay._decode

    def counting_replay_call(*args):
        counts["calls"] += 1
        return replay_call(*args)

    def counting_decode(*args):
        counts["decoded"] += 1
        return decode(*args)

    monkeypatch.setattr(replay, "_replay_call", counting_replay_call)
    monkeypatch.setattr(replay, "_decode", counting_decode)
    return counts


@pytest.mark.parametrize("order", ["reverse", "shuffled"])
def test_replay_in_any_layer_order_rebuilds_the_same_model_in_the_same_steps(order, replay_counts):
    model = _chain_model(200)
    config = json.loads(json.dumps(model.get_config()))
    saved = Functional.from_config(config)
    steps_in_saved_order = dict(replay_counts)
    calls = sum(len(entry.get("inbound_nodes", [])) for entry in config["layers"] if entry["class_name"] != "InputLayer")
    # Each call is replayed once: the model's own, and inner_dense's inside the nested model.
    assert steps_in_saved_order["calls"] == calls + 1 == 200 + 6

    replay_counts.update(calls=0, decoded=0)
    if order == "reverse":
        config["layers"].reverse()
    else:
        random.Random(0).shuffle(config["layers"])
    rebuilt = Functional.from_config(config)
    assert replay_counts == steps_in_saved_order
    for clone in (saved, rebuilt):
        assert [layer.name for layer in clone.layers] == [layer.name for layer in model.layers]
        assert _links(clone) == _links(model)
        clone.set_weights(model.get_weights())
        data = [np.random.rand(2, 3), np.random.rand(2, 3)]
        np.testing.assert_array_equal(clone(data), model(data))


def test_a_call_waiting_for_a_missing_reference_is_named_whatever_the_order():
    x = Input(shape=(2,), name="x")
    model = Model(x, Dense(2, name="d3")(Dense(2, name="d2")(Dense(2, name="d1")(x))))
    config = json.loads(json.dumps(model.get_config()))
    next(e for e in config["layers"] if e["name"] == "d2")["inbound_nodes"][0]["args"] = [{"__tensor__": ["d1", 1, 0]}]
    config["layers"].reverse()
    with pytest.raises(ModelFormatError, match=r"layer 'd2' call 0 needs tensors \[\['d1', 1, 0\]\] that no layer produces"):
        Functional.from_config(config)


def _layer(config, name):
    return next(entry for entry in config["layers"] if entry["name"] == name)


def _first_call(config, name):
    return _layer(config, name)["inbound_nodes"][0]


@pytest.mark.parametrize("mutate, message", [
    (lambda c: _first_call(c, "shared").__setitem__("kwargs", [1, 2]),
     r"the 'kwargs' of call 0 of layer 'shared' must be a dict, received list \[1, 2\]"),
    (lambda c: _first_call(c, "shared").__setitem__("kwargs", {1: "x"}),
     r"each key of the 'kwargs' of call 0 of layer 'shared' must be a str, received int 1"),
    (lambda c: _first_call(c, "shared").__setitem__("kwargs", {"__tensor__": ["a", 0, 0]}),
     r"the 'kwargs' of call 0 of layer 'shared' must be a dict of arguments, not a tensor reference"),
    (lambda c: _first_call(c, "shared").__setitem__("args", {"__tensor__": ["a", 0, 0]}),
     r"the 'args' of call 0 of layer 'shared' must be a list, received dict"),
    (lambda c: _first_call(c, "shared").__setitem__("args", []),
     r"the 'args' of call 0 of layer 'shared' are empty"),
    (lambda c: _first_call(c, "shared").pop("args"), r"call 0 of layer 'shared' lacks 'args'"),
    (lambda c: _layer(c, "shared")["inbound_nodes"].__setitem__(0, "a"),
     r"call 0 of layer 'shared' must be a dict, received str 'a'"),
    (lambda c: _first_call(c, "shared").__setitem__("args", [{"__tensor__": ["a", 0]}]),
     (r"a tensor reference in the 'args' of call 0 of layer 'shared' must be \[layer name, node index, tensor "
      r"index\] \(a str and two non-negative ints\), received list \['a', 0\]")),
    (lambda c: _first_call(c, "shared").__setitem__("args", [{"__tensor__": ["a", True, 0]}]),
     r"must be \[layer name, node index, tensor index\].*received list \['a', True, 0\]"),
    (lambda c: _first_call(c, "shared").__setitem__("args", [{"__tensor__": ["a", 0, 0.0]}]),
     r"must be \[layer name, node index, tensor index\].*received list \['a', 0, 0.0\]"),
    (lambda c: _first_call(c, "shared").__setitem__("args", [{"__tensor__": [0, 0, 0]}]),
     r"must be \[layer name, node index, tensor index\].*received list \[0, 0, 0\]"),
    (lambda c: _first_call(c, "shared").__setitem__("args", [{"__tensor__": ["a", -1, 0]}]),
     r"must be \[layer name, node index, tensor index\].*received list \['a', -1, 0\]"),
    (lambda c: _first_call(c, "shared").__setitem__("args", [{"__tensor__": "a"}]),
     r"must be \[layer name, node index, tensor index\].*received str 'a'"),
    (lambda c: _layer(c, "shared").__setitem__("inbound_nodes", {"0": {}}),
     r"the 'inbound_nodes' of layer 'shared' must be a list, received dict"),
    (lambda c: _layer(c, "shared").__setitem__("name", 7), r"the 'name' of a layer entry must be a str, received int 7"),
    (lambda c: _layer(c, "shared").__setitem__("class_name", ["Dense"]),
     r"the 'class_name' of layer 'shared' must be a str, received list \['Dense'\]"),
    (lambda c: _layer(c, "shared").__setitem__("config", "units=4"),
     r"the 'config' of layer 'shared' must be a dict, received str 'units=4'"),
    (lambda c: c["layers"].__setitem__(1, ["b"]), r"a layer entry must be a dict, received list \['b'\]"),
    (lambda c: c.__setitem__("layers", {"a": {}}), r"the model's 'layers' must be a list, received dict"),
    (lambda c: c.__setitem__("name", ["root"]), r"the model's 'name' must be a str, received list \['root'\]"),
    (lambda c: c.__setitem__("trainable", "no"), r"the model's 'trainable' must be a bool, received str 'no'"),
    (lambda c: c.__setitem__("input_layers", "a"),
     (r"'input_layers' must hold tensor references \[layer name, node index, tensor index\], or lists or dicts "
      r"of them; received str 'a'")),
    (lambda c: c.__setitem__("input_layers", {"a": ["a", 0, 0], "b": []}), r"'input_layers' must hold tensor references"),
    (lambda c: c.__setitem__("input_layers", {"a": ["a", 0], "b": ["b", 0, 0]}),
     r"a tensor reference in 'input_layers' must be \[layer name, node index, tensor index\].*received list \['a', 0\]"),
    (lambda c: c.__setitem__("output_layers", {"deep": ["middle", 0, False], "slice": ["get_item", 0, 0]}),
     r"a tensor reference in 'output_layers' must be .*received list \['middle', 0, False\]"),
    (lambda c: c.__setitem__("output_layers", 3), r"'output_layers' must hold tensor references.*received int 3"),
    (lambda c: c.__setitem__("output_layers", {"deep": ["middle", 0, 0], "slice": ["get_item", 0, 1]}),
     r"the model's input or output \['get_item', 0, 1\] refers to no tensor"),
])
def test_config_values_of_the_wrong_type_are_refused(mutate, message):
    config = json.loads(json.dumps(_shared_nested_model().get_config()))
    mutate(config)
    with pytest.raises(ModelFormatError, match=message):
        Functional.from_config(config)


def _nested_list(depth, leaf):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("mutate, message", [
    (lambda c: _first_call(c, "shared").__setitem__("args", _nested_list(100_000, {"__tensor__": ["a", 0, 0]})),
     r"the 'args' of call 0 of layer 'shared' nest deeper than 64 levels"),
    (lambda c: _first_call(c, "shared").__setitem__("kwargs", {"mask": _nested_list(100_000, None)}),
     r"the 'kwargs' of call 0 of layer 'shared' nest deeper than 64 levels"),
    (lambda c: c.__setitem__("input_layers", _nested_list(100_000, ["a", 0, 0])), r"'input_layers' nests deeper than 64 levels"),
    (lambda c: c.__setitem__("output_layers", {"deep": _nested_list(100_000, ["middle", 0, 0])}),
     r"'output_layers' nests deeper than 64 levels"),
])
def test_deeply_nested_values_are_refused_without_exhausting_the_stack(mutate, message):
    config = json.loads(json.dumps(_shared_nested_model().get_config()))
    mutate(config)
    with pytest.raises(ModelFormatError, match=message):
        Functional.from_config(config)


def test_models_nested_100000_deep_are_refused_without_exhausting_the_stack():
    x = Input(shape=(2,), name="x")
    config = Model(x, Dense(2)(x), name="m").get_config()
    for level in range(100_000):
        config = {
            "name": f"m{level}",
            "layers": [
                {"class_name": "InputLayer", "name": f"x{level}", "config": {"batch_shape": [None, 2], "name": f"x{level}"}},
                {"class_name": "Functional", "name": config["name"], "config": config,
                 "inbound_nodes": [{"args": [{"__tensor__": [f"x{level}", 0, 0]}], "kwargs": {}}]},
            ],
            "input_layers": [f"x{level}", 0, 0],
            "output_layers": [config["name"], 0, 0],
        }
    with pytest.raises(ModelFormatError, match="the config nests too deeply for Python's stack"):
        Functional.from_config(config)


# ------------------------------------------------------- Keras parity of configs (issue 12, point 8)
def _tuple_model():
    x = Input(shape=(3,), name="x")
    return Model(x, (Dense(2, name="a")(x), Dense(1, name="b")(x)))


def test_tuple_outputs_come_back_as_tuples_from_memory_json_files_and_pickles(tmp_path):
    import pickle

    from engine import load_model, model_from_json

    model = _tuple_model()
    x = np.ones((2, 3), "float32")
    assert isinstance(model.output, tuple) and isinstance(model(x), tuple)
    model.save(tmp_path / "m.nw")
    for rebuilt in (Functional.from_config(model.get_config()),
                    Functional.from_config(json.loads(json.dumps(model.get_config()))),
                    model_from_json(model.to_json()), load_model(tmp_path / "m.nw"), pickle.loads(pickle.dumps(model))):
        assert isinstance(rebuilt.output, tuple) and isinstance(rebuilt(x), tuple)
    # Written as Keras writes a tuple in JSON.
    assert model.get_config()["output_layers"] == {"class_name": "__tuple__",
                                                   "config": {"value": [["a", 0, 0], ["b", 0, 0]]}}


def test_a_config_made_in_memory_by_keras_with_tuples_is_read():
    import keras

    kx = keras.Input((3,), name="x")
    theirs = keras.Model(kx, (keras.layers.Dense(2, name="a")(kx), keras.layers.Dense(1, name="b")(kx)))
    assert isinstance(theirs.get_config()["output_layers"], tuple)
    config = _tuple_model().get_config()
    config["output_layers"] = theirs.get_config()["output_layers"]  # (['a', 0, 0], ['b', 0, 0])
    assert isinstance(Functional.from_config(config).output, tuple)


def test_configs_with_batch_input_shape_build_the_model():
    dense_first = {"name": "s", "layers": [
        {"class_name": "Dense", "config": {"units": 2, "name": "d", "batch_input_shape": [None, 3]}},
        {"class_name": "Dense", "config": {"units": 1, "name": "d2"}}]}
    model = Sequential.from_config(dense_first)
    # Keras' legacy loader reads this as input_shape=[None, 3] and builds for (None, None, 3); we keep the batch shape.
    assert model.built and model.input_shape == (None, 3) and model.output_shape == (None, 1)
    input_first = {"name": "s", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 3], "name": "inp", "dtype": "float32"}},
        {"class_name": "Dense", "config": {"units": 2, "name": "d"}}]}
    assert Sequential.from_config(input_first).input_shape == (None, 3)
    functional = {"name": "f", "layers": [
        {"class_name": "InputLayer", "name": "inp", "inbound_nodes": [],
         "config": {"batch_input_shape": [None, 3], "dtype": "float32", "name": "inp"}},
        {"class_name": "Dense", "name": "d", "config": {"units": 2, "name": "d"},
         "inbound_nodes": [{"args": [{"__tensor__": ["inp", 0, 0]}]}]}],
        "input_layers": ["inp", 0, 0], "output_layers": ["d", 0, 0]}
    model = Model.from_config(functional)
    assert model.input_shape == (None, 3) and model.output_shape == (None, 2)


class _Scale(__import__("engine").Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class _Wrapper(__import__("engine").Layer):
    """A custom layer whose config holds another custom layer's config."""

    def __init__(self, inner, **kwargs):
        super().__init__(**kwargs)
        self.inner = inner if isinstance(inner, _Scale) else replay.deserialize_layer(inner)

    def call(self, inputs):
        return self.inner(inputs) + 1.0

    def get_config(self):
        return {**super().get_config(), "inner": replay.serialize_layer(self.inner)}


def test_nested_custom_layers_load_with_custom_objects_only():
    from engine.files.registry import registered_name

    assert registered_name(_Scale) is None and registered_name(_Wrapper) is None
    inner_in = Input(shape=(3,))
    inner = Model(inner_in, _Scale(3.0)(inner_in), name="inner")
    x = Input(shape=(3,))
    model = Model(x, _Wrapper(_Scale(0.5))(inner(x)))
    config = json.loads(json.dumps(model.get_config()))
    with pytest.raises(ModelFormatError, match="Unknown layer type: '_Scale'"):
        Model.from_config(config)
    rebuilt = Model.from_config(config, custom_objects={"_Scale": _Scale, "_Wrapper": _Wrapper})
    data = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(rebuilt(data), model(data))
    assert isinstance(rebuilt.layers[-1].inner, _Scale) and rebuilt.layers[-1].inner.factor == 0.5
    # The scope ends with the call: the names are not registered.
    with pytest.raises(ModelFormatError):
        Model.from_config(config)


def _legacy_config(add_calls):
    """A model config as Keras 2 and tf.keras wrote it: calls as lists of [layer, node, tensor, kwargs]."""
    return {
        "name": "legacy",
        "layers": [
            {"class_name": "InputLayer", "name": "x", "inbound_nodes": [],
             "config": {"batch_input_shape": [None, 3], "dtype": "float32", "name": "x"}},
            {"class_name": "Dense", "name": "d", "config": {"units": 3, "name": "d"},
             "inbound_nodes": [[["x", 0, 0, {}]]]},
            {"class_name": "Add", "name": "sum", "config": {"name": "sum"}, "inbound_nodes": add_calls},
        ],
        "input_layers": [["x", 0, 0]],
        "output_layers": ["sum", 0, 0],
    }


def test_keras_legacy_call_lists_rebuild_one_input_alone_and_several_as_a_list():
    model = Functional.from_config(_legacy_config([[["x", 0, 0], ["d", 0, 0, {}]]]))
    assert [layer.name for layer in model.layers] == ["x", "d", "sum"]
    data = np.random.rand(2, 3).astype("float32")
    np.testing.assert_allclose(model(data), data + model.get_layer("d")(data), rtol=1e-6)


@pytest.mark.parametrize("calls, message", [
    ([[["ghost", 0, 0], ["d", 0, 0]]], r"Missing node: ghost \(the config has no layer 'ghost'\): layer 'sum'"),
    ([[["sum", 0, 0], ["d", 0, 0]]], r"either has loops or disconnected nodes: layer 'sum' call 0 needs tensors "
                                     r"\[\['sum', 0, 0\]\]"),
    ([[["d", 0]]], r"call 0 of layer 'sum' in Keras' legacy format must list \[layer name, node index"),
])
def test_keras_legacy_configs_name_missing_layers_loops_and_bad_entries(calls, message):
    with pytest.raises(ModelFormatError, match=message):
        Functional.from_config(_legacy_config(calls))


def test_a_functional_subclass_gets_back_the_keys_its_get_config_added():
    class Scaled(Model):
        def __init__(self, *args, scale=1.0, **kwargs):
            super().__init__(*args, **kwargs)
            self.scale = scale

        def get_config(self):
            return {**super().get_config(), "scale": self.scale}

    x = Input(shape=(3,))
    model = Scaled(x, Dense(2)(x), scale=2.5)
    revived = Scaled.from_config(model.get_config())
    assert isinstance(revived, Scaled) and isinstance(revived, Functional) and revived.scale == 2.5
    with pytest.raises(ModelFormatError, match="The rebuilt graph is not a valid model: .*'scale'"):
        Functional.from_config(model.get_config())  # Functional takes no such argument
