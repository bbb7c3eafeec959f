"""Writes application_references.json.gz beside this file: for every keras.applications case that
tests/layers/test_application_builders*.py compare our builders with (same builder, same arguments),
Keras' model name, parameter count and operations (layers and recorded ``keras.ops`` calls) in
Keras' order, each with its class, name, output shape, parameter count, inputs' names and main
arguments; no weights. Building the Keras models live took the tests minutes; reading this, a second.

Keras builds on its NumPy backend here: the architecture does not depend on the backend, and JAX
would spend minutes compiling initializers. Run from the repository's root:

    KERAS_BACKEND=jax .venv/bin/python tests/layers/data/make_application_references.py
"""

import gzip
import json
import os
import sys

PATH = os.path.join(os.path.dirname(__file__), "application_references.json.gz")
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def case_key(builder: str, kwargs: dict) -> str:
    """The references' key of ``builder(weights=None, **kwargs)``.

    >>> case_key("ResNet50", {"input_shape": (32, 32, 3), "classes": 10})
    'ResNet50 {"classes": 10, "input_shape": [32, 32, 3]}'
    """
    return f"{builder} {json.dumps(kwargs, sort_keys=True)}"


_REFERENCES = {}


def reference(builder: str, kwargs: dict) -> dict:
    """The stored Keras model of ``builder(weights=None, **kwargs)``: ``{"name", "params", "operations"}``, each
    operation ``{"class", "layer", "name", "shape", "params", "inputs", "arguments"}`` in Keras' order.

    Raises:
        KeyError: the case is not stored; rerun this script after adding it to a test's cases.
    """
    if not _REFERENCES:
        with gzip.open(PATH, "rt", encoding="utf-8") as file:
            _REFERENCES.update(json.load(file)["cases"])
    key = case_key(builder, kwargs)
    if key not in _REFERENCES:
        raise KeyError(f"No stored Keras reference for {key} in {PATH}; run "
                       f"tests/layers/data/make_application_references.py to store it.")
    return _REFERENCES[key]


def _record(operation, arguments) -> dict:
    import keras

    node = operation._inbound_nodes[0]
    is_layer = isinstance(operation, keras.layers.Layer)
    assert is_layer or type(operation).__module__.startswith("keras.src.ops"), operation
    return {"class": type(operation).__name__, "layer": is_layer, "name": operation.name,
            "shape": list(node.output_tensors[0].shape),
            "params": operation.count_params() if hasattr(operation, "count_params") else 0,
            "inputs": [tensor._keras_history[0].name for tensor in node.input_tensors],
            "arguments": arguments(operation)}


def _cases():
    """(builder, kwargs) of every case the three test modules compare with Keras."""
    from tests.layers import test_application_builders as plain
    from tests.layers import test_application_builders_efficient as efficient
    from tests.layers import test_application_builders_inception as inception

    cases = list(plain.CASES) + [inception.SMALL_CASE] + list(inception.SLOW_CASES)
    cases += [tuple(case.values) for case in efficient.CASES] + [(builder, efficient.SMALL) for builder in efficient.BIG]
    return cases, efficient._arguments


def main():
    os.environ["KERAS_BACKEND"] = "numpy"
    sys.path.insert(0, _ROOT)
    import keras

    cases, arguments = _cases()
    stored = {}
    for builder, kwargs in cases:
        key = case_key(builder, kwargs)
        if key in stored:
            continue
        model = getattr(keras.applications, builder)(weights=None, **kwargs)
        stored[key] = {"name": model.name, "params": model.count_params(),
                       "operations": [_record(operation, arguments) for operation in model.operations]}
        print(key, flush=True)
    text = json.dumps({"keras_version": keras.__version__, "cases": stored}, separators=(",", ":"))
    with gzip.GzipFile(PATH, "wb", mtime=0) as file:  # no time stamp: the same models give the same bytes
        file.write(text.encode("utf-8"))


if __name__ == "__main__":
    main()
