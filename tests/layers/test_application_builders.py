"""The architecture builders of layers/applications/ against keras.applications: for
the same arguments, the same layers (class, name, output shape, parameters, inputs) and
the same parameter count as Keras' models stored in tests/layers/data/, and Keras' weights
files load into them with Keras' outputs; and the builders' own arguments."""

import re
from collections import Counter

import numpy as np
import pytest

from layers import applications as ours
from tests.layers.data.make_application_references import reference as stored_reference

keras = pytest.importorskip("keras")

def _snake(class_name):
    return re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", class_name).lower()


def _is_automatic(layer_name, class_name):
    """Whether Keras named the layer (``max_pooling2d_3``, counted across the session), not the builder."""
    base = re.sub(r"_\d+$", "", layer_name)
    return base in (_snake(class_name), "input_layer")


def _entries(model) -> list:
    """Our model's layers as the stored references list Keras': class, name, output shape, parameters, inputs."""
    return [{"class": type(layer).__name__, "name": layer.name, "shape": list(layer.output.shape),
             "params": layer.count_params(),
             "inputs": [tensor._keras_history[0].name for tensor in layer.inbound_nodes[0].input_tensors]
             if layer.inbound_nodes else []} for layer in model.layers]


def _layers(entries) -> dict:
    """{key: (class, output shape, parameters, input keys)}: a layer's key is its name, or for an
    automatically named one, its class and the keys of its inputs (the orders of model.layers differ:
    Keras sorts by depth, nodeweave by a depth-first walk)."""
    keys, rows = {}, {}
    for entry in entries:  # inputs before the layers that read them, in both
        class_name = entry["class"]
        inputs = tuple(keys[name] for name in entry["inputs"])
        key = f"{class_name}<-{inputs}" if _is_automatic(entry["name"], class_name) else entry["name"]
        keys[entry["name"]] = key
        assert key not in rows, f"two layers of key {key}"
        rows[key] = (class_name, tuple(entry["shape"]), entry["params"], inputs)
    return rows


def assert_same_architecture(builder, **kwargs):
    """``builder(**kwargs)`` has the layers of Keras' model, stored by tests/layers/data/make_application_references.py."""
    model = getattr(ours, builder)(weights=None, **kwargs)
    reference = stored_reference(builder, kwargs)
    keras_entries = [entry for entry in reference["operations"] if entry["layer"]]
    ours_rows, keras_rows = _layers(_entries(model)), _layers(keras_entries)
    assert sorted(ours_rows) == sorted(keras_rows)
    for key, row in ours_rows.items():
        assert row == keras_rows[key], key
    assert Counter(layer["class_name"] for layer in model.get_config()["layers"]) == Counter(
        entry["class"] for entry in keras_entries)
    assert model.name == reference["name"] and model.count_params() == reference["params"]
    return model


# Keras' models of these cases are stored (tests/layers/data/application_references.json.gz): building them live
# took Keras 3 on JAX 10-180 s each on shared cores; ours take 1-15 s (VGG16 at 224x224 the longest).
CASES = [
    ("ResNet50", {"input_shape": (32, 32, 3), "classes": 10}),
    ("ResNet50", {"include_top": False, "pooling": "max"}),
    ("ResNet50V2", {"input_shape": (64, 48, 3), "classes": 7, "classifier_activation": None}),
    ("ResNet50V2", {"include_top": False, "pooling": "avg", "input_shape": (40, 40, 1)}),
    ("VGG16", {"input_shape": (32, 32, 3), "classes": 10}),
    ("VGG19", {"include_top": False, "pooling": "avg"}),
    ("VGG19", {"include_top": False, "pooling": "max", "input_shape": (48, 40, 3)}),
    ("MobileNetV2", {"input_shape": (96, 96, 3), "alpha": 0.35, "classes": 10}),
    ("MobileNetV2", {"input_shape": (33, 47, 3), "alpha": 1.3, "include_top": False, "pooling": "max"}),
    ("MobileNetV2", {"include_top": False, "pooling": "avg", "alpha": 0.5}),
    ("MobileNet", {"input_shape": (32, 32, 3), "alpha": 0.25, "classes": 10}),
    ("MobileNet", {"include_top": False, "pooling": "avg", "alpha": 0.5, "depth_multiplier": 2}),
    ("Xception", {"input_shape": (71, 71, 3), "classes": 10}),
    ("Xception", {"include_top": False, "pooling": "max", "input_shape": (80, 96, 3)}),
    ("DenseNet121", {"input_shape": (32, 32, 3), "classes": 10}),
    ("DenseNet121", {"include_top": False, "pooling": "max"}),
    ("ResNet50", {}),
    ("ResNet101", {"include_top": False}),
    ("ResNet152V2", {"include_top": False, "pooling": "avg"}),
    ("VGG16", {}),
    ("MobileNetV2", {}),
    ("DenseNet169", {"include_top": False, "pooling": "avg"}),
]


@pytest.mark.slow
@pytest.mark.parametrize("builder, kwargs", CASES, ids=[f"{b}-{i}" for i, (b, _) in enumerate(CASES)])
def test_builder_makes_kerass_architecture(builder, kwargs):
    assert_same_architecture(builder, **kwargs)


@pytest.mark.slow  # Keras builds and runs the models live: 20-60 s on shared cores
@pytest.mark.parametrize("builder, kwargs", CASES[:1] + CASES[2:3], ids=["ResNet50", "ResNet50V2"])
def test_kerass_weights_file_loads_with_kerass_outputs(builder, kwargs, keras_model, tmp_path):
    reference = keras_model(builder, **kwargs)
    reference.save_weights(tmp_path / "k.weights.h5")
    model = getattr(ours, builder)(weights=str(tmp_path / "k.weights.h5"), **kwargs)
    x = np.random.default_rng(0).uniform(0, 1, size=(2, *reference.input.shape[1:])).astype("float32")
    np.testing.assert_allclose(model.predict(x, verbose=0), reference.predict(x, verbose=0), atol=2e-5)


# keras.applications' parameter counts at Keras' default arguments (224x224 or 299x299, 1000 classes).
KERAS_PARAMETERS = {"ResNet50": 25_636_712, "ResNet50V2": 25_613_800, "VGG16": 138_357_544, "VGG19": 143_667_240,
                    "MobileNet": 4_253_864, "MobileNetV2": 3_538_984, "Xception": 22_910_480,
                    "DenseNet121": 8_062_504}


@pytest.mark.parametrize("builder", sorted(KERAS_PARAMETERS))
def test_default_architecture_has_kerass_parameter_count(builder):
    model = getattr(ours, builder)(weights=None)
    assert model.count_params() == KERAS_PARAMETERS[builder]
    assert model.output.shape == (None, 1000) and model.layers[-1].name == "predictions"


def test_a_built_architecture_runs_and_trains():
    model = ours.ResNet50(weights=None, input_shape=(32, 32, 3), classes=3)
    x = np.random.default_rng(0).normal(size=(2, 32, 32, 3)).astype("float32")
    assert model.predict(x, verbose=0).shape == (2, 3)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    assert np.isfinite(model.train_on_batch(x, np.array([0, 2])))


def test_weights_load_from_a_file_and_imagenet_is_refused_with_what_to_do(tmp_path):
    source = ours.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3))
    source.save_weights(tmp_path / "r.weights.h5")
    loaded = ours.ResNet50(weights=str(tmp_path / "r.weights.h5"), include_top=False, input_shape=(32, 32, 3))
    for a, b in zip(source.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"ResNet50\(weights='imagenet'\): nodeweave does not download .*"
                                         r"keras.applications.ResNet50\(weights='imagenet'\).save\('resnet50.keras'\)"):
        ours.ResNet50()
    with pytest.raises(ValueError, match=r"weights=.*missing.h5', which is no file"):
        ours.ResNet50(weights=str(tmp_path / "missing.h5"))


def test_input_shape_and_input_tensor():
    with pytest.raises(ValueError, match=r"at least 32x32; Received: input_shape=\(16, 64, 3\)"):
        ours.ResNet50(weights=None, input_shape=(16, 64, 3))
    with pytest.raises(ValueError, match=r"three integers .* Received: input_shape=\(32, 32\)"):
        ours.ResNet50(weights=None, input_shape=(32, 32))
    images = ours.ResNet50(weights=None, include_top=False).input
    assert images.shape == (None, None, None, 3)
    from engine import Input
    from layers import Rescaling
    inputs = Input(shape=(32, 32, 3))
    model = ours.ResNet50V2(weights=None, input_tensor=Rescaling(1 / 255)(inputs), classes=4)
    assert model.inputs == [inputs] and model.layers[1].name.startswith("rescaling")
