"""InceptionV3, InceptionResNetV2, ConvNeXt and NASNet builders against keras.applications:
for the same arguments, the same layers (class, name, output shape, parameters, inputs) in
the same order of creation, and the same parameter count; a built model saves to
``.keras`` and loads back; the builders' own arguments."""

import re

import numpy as np
import pytest

from engine.files.keras_format.write_order import keras_operations
from layers import applications as ours
from tests.layers.data.make_application_references import reference as stored_reference

keras = pytest.importorskip("keras")


def _is_automatic(layer_name: str, class_name: str) -> bool:
    """Whether the session named the layer (``conv2d_93``), not the builder."""
    base = re.sub(r"_\d+$", "", layer_name)
    return base in (re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", class_name).lower(), "input_layer")


def _suffix(name: str) -> int:
    match = re.search(r"_(\d+)$", name)
    return int(match.group(1)) if match else 0


def architecture(entries: list) -> dict:
    """{key: (class, output shape, parameters, input keys)} of a model's operations (its layers and, in Keras,
    the ``keras.ops`` calls that nodeweave records as layers), given as the stored references list them, in
    their order.

    A named layer's key is its name; an automatically named one's is its class and its rank among
    the model's layers of that class by the number the session gave it (``conv2d#3``: the fourth
    Conv2D created), so that both builders must also create their layers in one order."""
    automatic = {}
    for entry in entries:
        if _is_automatic(entry["name"], entry["class"]) or entry["class"].startswith("op:"):
            automatic.setdefault(entry["class"], []).append(entry["name"])
    keys = {name: f"{class_name}#{rank}" for class_name, names in automatic.items()
            for rank, name in enumerate(sorted(names, key=_suffix))}
    rows = {}
    for entry in entries:
        key = keys.setdefault(entry["name"], entry["name"])
        inputs = tuple(keys[name] for name in entry["inputs"])
        assert key not in rows, f"two layers of key {key}"
        rows[key] = (entry["class"], tuple(entry["shape"]), entry["params"], inputs)
    return rows


def _entries(operations) -> list:
    """Our model's operations as the stored references list Keras': class, name, output shape, parameters, inputs."""
    return [{"class": _class(layer), "name": layer.name, "shape": list(layer.output.shape),
             "params": layer.count_params() if hasattr(layer, "count_params") else 0,
             "inputs": [tensor._keras_history[0].name for tensor in layer.inbound_nodes[0].input_tensors]}
            for layer in operations]


def _keras_entries(reference: dict) -> list:
    """The stored Keras operations, a ``keras.ops`` call's class written ``op:add`` as ``_class`` writes ours."""
    return [{**entry, "class": entry["class"] if entry["layer"] else "op:" + re.sub(r"_\d+$", "", entry["name"])}
            for entry in reference["operations"]]


def _class(layer) -> str:
    """The layer's class, or ``op:add`` for a ``keras.ops`` call (Keras' ``Add`` operation, nodeweave's BinaryOp)."""
    if type(layer).__module__.startswith(("engine.network.ops", "keras.src.ops")):
        return "op:" + re.sub(r"_\d+$", "", layer.name)
    return type(layer).__name__


def assert_same_architecture(builder, **kwargs):
    """The layers of ``builder(**kwargs)`` are those of Keras' model (stored by
    tests/layers/data/make_application_references.py), in the order Keras lists them (which names the layers'
    weights in Keras' weights files: ``layers/conv2d_17``)."""
    model = getattr(ours, builder)(weights=None, **kwargs)
    reference = stored_reference(builder, kwargs)
    ours_rows = architecture(_entries(keras_operations(model)[0]))
    keras_rows = architecture(_keras_entries(reference))
    assert list(ours_rows) == list(keras_rows)
    for key, row in ours_rows.items():
        assert row == keras_rows[key], key
    assert model.name == reference["name"] and model.count_params() == reference["params"]
    return model


# The smallest inputs each architecture allows. ConvNeXtTiny (153 layers, the nested Sequential stem, the
# residual sums Keras records as keras.ops calls) runs with every test run; the others with the slow tests.
SMALL_CASE = ("ConvNeXtTiny", {"input_shape": (32, 32, 3), "classes": 10})
SLOW_CASES = [
    ("ConvNeXtTiny", {"include_top": False, "pooling": "max", "input_shape": (40, 48, 1)}),
    ("InceptionV3", {"input_shape": (75, 75, 3), "classes": 10}),
    ("InceptionV3", {"include_top": False, "pooling": "avg"}),
    ("InceptionResNetV2", {"input_shape": (75, 75, 3), "classes": 10, "classifier_activation": None}),
    ("NASNetMobile", {"input_shape": (32, 32, 3), "classes": 10}),
    ("NASNetLarge", {"include_top": False, "pooling": "max", "input_shape": (32, 32, 3)}),
]


def test_convnext_tiny_makes_kerass_architecture():
    builder, kwargs = SMALL_CASE
    assert_same_architecture(builder, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("builder, kwargs", SLOW_CASES, ids=[f"{b}-{i}" for i, (b, _) in enumerate(SLOW_CASES)])
def test_builder_makes_kerass_architecture(builder, kwargs):
    assert_same_architecture(builder, **kwargs)


@pytest.mark.slow  # Keras builds and runs the model live: 20-130 s on shared cores
def test_kerass_convnext_weights_file_loads_with_kerass_outputs(keras_model, tmp_path):
    builder, kwargs = SMALL_CASE
    reference = keras_model(builder, **kwargs)
    reference.save_weights(tmp_path / "k.weights.h5")
    model = getattr(ours, builder)(weights=str(tmp_path / "k.weights.h5"), **kwargs)
    x = np.random.default_rng(0).uniform(0, 255, size=(2, 32, 32, 3)).astype("float32")
    np.testing.assert_allclose(model.predict(x, verbose=0), reference.predict(x, verbose=0), atol=2e-5)


@pytest.mark.slow  # Keras builds and runs the model live: 20-130 s on shared cores
def test_kerass_nasnet_weights_file_loads_with_kerass_outputs(keras_model, tmp_path):
    builder, kwargs = SLOW_CASES[4]
    reference = keras_model(builder, **kwargs)
    reference.save_weights(tmp_path / "k.weights.h5")
    model = getattr(ours, builder)(weights=str(tmp_path / "k.weights.h5"), **kwargs)
    x = np.random.default_rng(0).uniform(-1, 1, size=(2, 32, 32, 3)).astype("float32")
    np.testing.assert_allclose(model.predict(x, verbose=0), reference.predict(x, verbose=0), atol=2e-5)


# keras.applications' parameter counts at Keras' default arguments (Keras' documentation lists them).
KERAS_PARAMETERS = {"InceptionV3": 23_851_784, "InceptionResNetV2": 55_873_736, "ConvNeXtTiny": 28_589_128,
                    "NASNetMobile": 5_326_716, "NASNetLarge": 88_949_818}


@pytest.mark.parametrize("builder", [pytest.param(builder, marks=[pytest.mark.slow] if builder == "NASNetLarge" else [])
                                     for builder in sorted(KERAS_PARAMETERS)])  # NASNetLarge: 8 s
def test_default_architecture_has_kerass_parameter_count(builder):
    model = getattr(ours, builder)(weights=None)
    assert model.count_params() == KERAS_PARAMETERS[builder]
    assert model.output.shape == (None, 1000)


# Saving and loading 20-220 MB of weights and one prediction (12 s for InceptionResNetV2 at 75x75): NASNetMobile
# (19 MB) runs with every test run, the others with the slow tests.
@pytest.mark.parametrize("builder, kwargs", [
    pytest.param("InceptionV3", {"input_shape": (75, 75, 3), "classes": 3}, marks=pytest.mark.slow),
    pytest.param("InceptionResNetV2", {"input_shape": (75, 75, 3), "include_top": False, "pooling": "avg"},
                 marks=pytest.mark.slow),
    pytest.param("ConvNeXtTiny", {"input_shape": (32, 32, 3), "classes": 3}, marks=pytest.mark.slow),
    ("NASNetMobile", {"input_shape": (32, 32, 3), "classes": 3}),
], ids=["InceptionV3", "InceptionResNetV2", "ConvNeXtTiny", "NASNetMobile"])
def test_a_built_model_round_trips_through_a_keras_file(builder, kwargs, tmp_path):
    from engine import load_model
    model = getattr(ours, builder)(weights=None, **kwargs)
    model.save(tmp_path / "m.keras")
    loaded = load_model(tmp_path / "m.keras")
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)
    x = np.random.default_rng(0).uniform(0, 1, size=(1, *kwargs["input_shape"])).astype("float32")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


@pytest.mark.parametrize("builder", ["InceptionV3", "InceptionResNetV2", "ConvNeXtTiny", "ConvNeXtSmall",
                                     "ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtXLarge", "NASNetMobile", "NASNetLarge"])
def test_imagenet_weights_are_refused_with_what_to_do(builder):
    with pytest.raises(ValueError, match=rf"{builder}\(weights='imagenet'\): nodeweave does not download .*"
                                         rf"save\('{builder.lower()}.keras'\)"):
        getattr(ours, builder)()


def test_input_sizes_below_the_architectures_minimum_are_refused():
    with pytest.raises(ValueError, match=r"at least 75x75; Received: input_shape=\(74, 80, 3\)"):
        ours.InceptionV3(weights=None, input_shape=(74, 80, 3))
    with pytest.raises(ValueError, match=r"at least 75x75; Received: input_shape=\(80, 60, 3\)"):
        ours.InceptionResNetV2(weights=None, include_top=False, input_shape=(80, 60, 3))
    with pytest.raises(ValueError, match=r"at least 32x32; Received: input_shape=\(31, 31, 3\)"):
        ours.NASNetMobile(weights=None, input_shape=(31, 31, 3))


def test_convnext_normalizes_three_channel_images_unless_told_not_to():
    model = ours.ConvNeXtTiny(weights=None, input_shape=(32, 32, 3), classes=2)
    normalization = model.get_layer("convnext_tiny_prestem_normalization")
    np.testing.assert_allclose(np.ravel(normalization.input_mean), [123.675, 116.28, 103.53], rtol=1e-6)
    assert model.layers[2].name == "convnext_tiny_stem"
    without = ours.ConvNeXtTiny(weights=None, input_shape=(32, 32, 3), classes=2, include_preprocessing=False)
    gray = ours.ConvNeXtTiny(weights=None, input_shape=(32, 32, 1), classes=2)
    for model in (without, gray):
        assert [layer.name for layer in model.layers[:2]] == [model.layers[0].name, "convnext_tiny_stem"]


def test_nasnet_mobile_defaults_to_224_pixels_and_builds_on_an_input_tensor():
    assert ours.NASNetMobile(weights=None, include_top=False).input.shape == (None, 224, 224, 3)
    from engine import Input
    from layers import Rescaling
    inputs = Input(shape=(32, 32, 3))
    model = ours.NASNetMobile(weights=None, input_tensor=Rescaling(1 / 127.5, offset=-1)(inputs), classes=4)
    assert model.inputs == [inputs] and model.output.shape == (None, 4)
