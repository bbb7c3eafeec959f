"""Shared checks for layer tests: Keras 3 as the forward oracle, finite
differences for the backward pass, config round trips, symbolic shapes."""

import keras
import numpy as np

from engine import Input
from engine import tree
from engine.network.gradient_check import gradient_check


def _arrays(outputs):
    return [np.asarray(o) for o in tree.flatten(outputs)]


def assert_matches_keras(ours, theirs, inputs, atol=1e-5, rtol=1e-5, call_kwargs=None):
    """Calls the Keras layer on ``inputs``, copies its weights into ours, and
    compares the outputs (inference mode)."""
    call_kwargs = call_kwargs or {}
    expected = _arrays(theirs(inputs, **call_kwargs))
    ours(inputs, **call_kwargs)
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    received = _arrays(ours(inputs, **call_kwargs))
    assert len(received) == len(expected)
    for got, want in zip(received, expected):
        assert got.shape == want.shape, (got.shape, want.shape)
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol)
    return received


def assert_gradients(layer, inputs, tolerance=1e-6, **kwargs):
    """Input and weight gradients match central differences in float64."""
    report = gradient_check(layer, inputs, **kwargs)
    assert report.max_error < tolerance, f"{layer.name}:\n{report}"
    return report


def assert_config_round_trip(layer):
    """``from_config(get_config())`` rebuilds a layer with the same config."""
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    return clone


def assert_symbolic_shape_matches_eager(layer, inputs):
    """The symbolic output shape equals the eager one, batch axis aside."""
    flat = tree.flatten(inputs)
    symbolic_inputs = tree.pack_as(inputs, [Input(shape=x.shape[1:], dtype=x.dtype) for x in flat])
    symbolic = tree.flatten(layer(symbolic_inputs))
    eager = _arrays(layer(inputs))
    for s, e in zip(symbolic, eager):
        assert s.shape == (None,) + e.shape[1:], (s.shape, e.shape)


__all__ = ["assert_matches_keras", "assert_gradients", "assert_config_round_trip",
           "assert_symbolic_shape_matches_eager", "keras"]
