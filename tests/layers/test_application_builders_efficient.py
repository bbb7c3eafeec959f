"""The MobileNetV3 and EfficientNet (V1, V2) builders of layers/applications/ against
keras.applications: for the same arguments, the same layers and operations (class, name,
output shape, parameters, inputs, main arguments), the same parameter count; Keras' weights
files load into them with Keras' outputs; the models save to .keras and load back."""

import json
import re
from collections import Counter

import numpy as np
import pytest

from engine import load_model
from layers import applications as ours
from tests.layers.data.make_application_references import reference as stored_reference

keras = pytest.importorskip("keras")

# The arguments of a layer whose values must agree with Keras' (when both configs have them).
_ARGUMENTS = ("filters", "kernel_size", "strides", "padding", "use_bias", "activation", "axis", "momentum",
              "epsilon", "rate", "noise_shape", "scale", "offset", "keepdims", "max_value", "target_shape", "mean",
              "variance", "kernel_initializer", "depthwise_initializer", "bias_initializer")


def _is_automatic(name, class_name):
    """Whether Keras (or nodeweave) named the operation from its class, as Keras' ``to_snake_case`` does
    (``re_lu_3`` for a ReLU), counting across the session, rather than the builder."""
    snake = re.sub("([a-z])([A-Z])", r"\1_\2", re.sub("(.)([A-Z][a-z]+)", r"\1_\2", class_name)).lower()
    return re.sub(r"_\d+$", "", name) in (snake, "input_layer")


def _class_name(operation):
    """Keras' name for the operation's class: a recorded ``x + 3.0`` is a BinaryOp layer in nodeweave and an
    ``Add`` operation (not a layer) in Keras."""
    if type(operation).__name__ == "BinaryOp":
        return "".join(part.title() for part in operation.get_config()["op"].split("_"))
    return type(operation).__name__


def _plain(value):
    """A config value with tuples as lists, floats rounded, and initializers as (class name, config)."""
    if isinstance(value, dict) and "class_name" in value:
        config = {k: v for k, v in value.get("config", {}).items() if k != "seed" and v is not None}
        return value["class_name"], _plain(config)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    return value


def _arguments(operation):
    config = operation.get_config() if hasattr(operation, "get_config") else {}
    return {key: _plain(config[key]) for key in _ARGUMENTS if key in config}


def _entries(model) -> list:
    """Our model's layers as the stored references list Keras' operations: class, name, output shape, parameters,
    inputs and arguments (through JSON, as stored: tuples become lists)."""
    entries = []
    for layer in model.layers:
        nodes = layer.inbound_nodes
        entries.append({"class": _class_name(layer), "name": layer.name,
                        "shape": list(nodes[0].output_tensors[0].shape), "params": layer.count_params(),
                        "inputs": [tensor._keras_history[0].name for tensor in nodes[0].input_tensors] if nodes else [],
                        "arguments": json.loads(json.dumps(_arguments(layer)))})
    return entries


def _operations(entries):
    """{key: (class, output shape, parameters, input keys)} of every layer and recorded operation, and {name: key};
    a key is the name, or for an automatically named one, the class and the keys of its inputs."""
    keys, rows = {}, {}
    for entry in entries:  # inputs before the operations that read them, in both
        inputs = tuple(keys[name] for name in entry["inputs"])
        key = f"{entry['class']}<-{inputs}" if _is_automatic(entry["name"], entry["class"]) else entry["name"]
        keys[entry["name"]] = key
        assert key not in rows, f"two operations of key {key}"
        rows[key] = (entry["class"], tuple(entry["shape"]), entry["params"], inputs)
    return rows, keys


def assert_same_architecture(builder, **kwargs):
    """``builder(**kwargs)`` has the operations of Keras' model, stored by
    tests/layers/data/make_application_references.py."""
    model = getattr(ours, builder)(weights=None, **kwargs)
    reference = stored_reference(builder, kwargs)
    ours_entries = _entries(model)
    (ours_rows, ours_keys), (keras_rows, keras_keys) = _operations(ours_entries), _operations(reference["operations"])
    assert sorted(ours_rows) == sorted(keras_rows)
    for key, row in ours_rows.items():
        assert row == keras_rows[key], key
    keras_arguments = {keras_keys[entry["name"]]: entry["arguments"] for entry in reference["operations"]}
    for entry in ours_entries:
        expected, received = keras_arguments[ours_keys[entry["name"]]], entry["arguments"]
        shared = expected.keys() & received.keys()
        assert {k: received[k] for k in shared} == {k: expected[k] for k in shared}, entry["name"]
    assert model.name == reference["name"] and model.count_params() == reference["params"]
    return model


SMALL = {"input_shape": (32, 32, 3)}
CASES = [
    pytest.param("MobileNetV3Small", {**SMALL, "minimalistic": True, "include_top": False, "pooling": "avg"},
                 id="V3Small-minimalistic"),
    pytest.param("MobileNetV3Small", {**SMALL, "classes": 10}, id="V3Small", marks=pytest.mark.slow),
    pytest.param("MobileNetV3Small", {"input_shape": (40, 33, 3), "alpha": 0.75, "include_preprocessing": False,
                                      "dropout_rate": 0.0, "classifier_activation": None},
                 id="V3Small-narrow", marks=pytest.mark.slow),
    pytest.param("MobileNetV3Large", {**SMALL, "classes": 10}, id="V3Large", marks=pytest.mark.slow),
    pytest.param("MobileNetV3Large", {"alpha": 1.25, "include_top": False, "pooling": "max"}, id="V3Large-wide",
                 marks=pytest.mark.slow),
    pytest.param("EfficientNetB0", {**SMALL, "classes": 10}, id="B0", marks=pytest.mark.slow),
    pytest.param("EfficientNetB0", {"include_top": False, "pooling": "max", "input_shape": (33, 47, 3)},
                 id="B0-notop", marks=pytest.mark.slow),
    pytest.param("EfficientNetV2B0", {**SMALL, "classes": 10}, id="V2B0", marks=pytest.mark.slow),
    pytest.param("EfficientNetV2B0", {"include_top": False, "pooling": "avg", "include_preprocessing": False},
                 id="V2B0-notop", marks=pytest.mark.slow),
    pytest.param("EfficientNetV2B0", {"input_shape": (32, 32, 1), "include_top": False}, id="V2B0-gray",
                 marks=pytest.mark.slow),
]


@pytest.mark.parametrize("builder, kwargs", CASES)
def test_builder_makes_kerass_architecture(builder, kwargs):
    assert_same_architecture(builder, **kwargs)


BIG = ["EfficientNetB1", "EfficientNetB2", "EfficientNetB3", "EfficientNetB4", "EfficientNetB5", "EfficientNetB6",
       "EfficientNetB7", "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3", "EfficientNetV2S",
       "EfficientNetV2M", "EfficientNetV2L"]


@pytest.mark.slow
@pytest.mark.parametrize("builder", BIG)
def test_big_builder_has_kerass_parameters_and_layers(builder):
    model = getattr(ours, builder)(weights=None, **SMALL)
    reference = stored_reference(builder, SMALL)
    keras_layers = [entry for entry in reference["operations"] if entry["layer"]]
    assert model.count_params() == reference["params"]
    assert Counter(type(layer).__name__ for layer in model.layers) == Counter(entry["class"] for entry in keras_layers)
    assert sorted(layer.name for layer in model.layers if not _is_automatic(layer.name, type(layer).__name__)) == \
        sorted(entry["name"] for entry in keras_layers if not _is_automatic(entry["name"], entry["class"]))


@pytest.mark.slow  # Keras builds, saves and runs the models live: 20-60 s each on shared cores
@pytest.mark.parametrize("builder, kwargs", [CASES[1], CASES[5], CASES[7]])
def test_kerass_weights_and_model_files_load_with_kerass_outputs(builder, kwargs, keras_model, tmp_path):
    """The builder with Keras' weights file, and Keras' whole .keras file loaded (what the "imagenet" error
    advises), both compute Keras' outputs."""
    reference = keras_model(builder, **kwargs)
    reference.save_weights(tmp_path / "k.weights.h5")
    reference.save(tmp_path / "k.keras")
    model = getattr(ours, builder)(weights=str(tmp_path / "k.weights.h5"), **kwargs)
    x = np.random.default_rng(0).uniform(0, 255, size=(2, *reference.input.shape[1:])).astype("float32")
    expected = reference.predict(x, verbose=0)
    np.testing.assert_allclose(model.predict(x, verbose=0), expected, atol=2e-5)
    np.testing.assert_allclose(load_model(tmp_path / "k.keras").predict(x, verbose=0), expected, atol=2e-5)


# keras.applications' parameter counts at Keras' default arguments (1000 classes; MobileNetV3 at any size).
KERAS_PARAMETERS = {"MobileNetV3Small": 2_554_968, "MobileNetV3Large": 5_507_432, "EfficientNetB0": 5_330_571,
                    "EfficientNetV2B0": 7_200_312}


@pytest.mark.parametrize("builder", sorted(KERAS_PARAMETERS))
def test_default_architecture_has_kerass_parameter_count(builder):
    model = getattr(ours, builder)(weights=None)
    assert model.count_params() == KERAS_PARAMETERS[builder]
    assert model.output.shape == (None, 1000) and model.layers[-1].name == "predictions"


@pytest.mark.parametrize("builder, kwargs", [
    ("MobileNetV3Small", {"minimalistic": True}),
    ("EfficientNetB0", {"include_top": False, "pooling": "avg"}),
    ("EfficientNetV2B0", {"include_top": False, "pooling": "max"}),
])
def test_model_round_trips_through_a_keras_file(builder, kwargs, tmp_path):
    model = getattr(ours, builder)(weights=None, input_shape=(32, 32, 3), **kwargs)
    model.save(tmp_path / "m.keras")
    loaded = load_model(tmp_path / "m.keras")
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    x = np.random.default_rng(1).uniform(0, 255, size=(2, 32, 32, 3)).astype("float32")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


def test_a_built_architecture_runs_and_trains():
    model = ours.EfficientNetV2B0(weights=None, input_shape=(32, 32, 3), classes=3)
    x = np.random.default_rng(0).uniform(0, 255, size=(2, 32, 32, 3)).astype("float32")
    assert model.predict(x, verbose=0).shape == (2, 3)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    assert np.isfinite(model.train_on_batch(x, np.array([0, 2])))


def test_imagenet_is_refused_with_what_to_do_and_small_inputs_are_refused():
    with pytest.raises(ValueError, match=r"MobileNetV3Large\(weights='imagenet'\): nodeweave does not download .*"
                                         r"\.save\('mobilenetv3large.keras'\)"):
        ours.MobileNetV3Large()
    with pytest.raises(ValueError, match=r"EfficientNetV2S\(weights='imagenet'\)"):
        ours.EfficientNetV2S()
    with pytest.raises(ValueError, match=r"at least 32x32; Received: input_shape=\(31, 64, 3\)"):
        ours.EfficientNetB0(weights=None, input_shape=(31, 64, 3))


def test_default_input_shapes_follow_keras():
    """MobileNetV3 pools globally, so even its classifier takes any size; EfficientNets' classifiers want theirs."""
    assert ours.MobileNetV3Small(weights=None).input.shape == (None, None, None, 3)
    assert ours.EfficientNetB0(weights=None).input.shape == (None, 224, 224, 3)
    assert ours.EfficientNetV2B0(weights=None, include_top=False).input.shape == (None, None, None, 3)
