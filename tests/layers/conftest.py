"""Fixtures of the layer tests."""

import pytest


@pytest.fixture(scope="module")
def keras_model():
    """``keras_model(builder, **kwargs)``: ``keras.applications.<builder>(weights=None, **kwargs)``, built
    once per test module, for the tests that need Keras' outputs (10-130 s each on shared cores); the
    architecture tests read Keras' stored models instead."""
    keras = pytest.importorskip("keras")
    built = {}

    def build(builder, **kwargs):
        key = (builder, tuple(sorted(kwargs.items())))
        if key not in built:
            built[key] = getattr(keras.applications, builder)(weights=None, **kwargs)
        return built[key]

    return build
