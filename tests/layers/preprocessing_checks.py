"""The second oracle of the preprocessing layers' backward: the traced gradient of their own call."""

import numpy as np

from engine import tree
from engine.network.layer_tracing import traced_backward, traced_forward


def assert_traced_gradients_match(layer, inputs):
    """``layer.backward`` equals the automatic differentiation of ``layer.call`` (float64)."""
    layer.dtype = "float64"
    layer(inputs)
    outputs, cache = layer.forward(inputs, training=False)
    grad_outputs = np.random.default_rng(1).normal(size=np.shape(outputs))
    grad_inputs, _ = layer.backward(cache, grad_outputs)
    traced_outputs, trace = traced_forward(layer, inputs, (), False, {})
    traced_inputs, _ = traced_backward(layer, trace, grad_outputs)
    np.testing.assert_allclose(tree.flatten(traced_outputs)[0], outputs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tree.flatten(traced_inputs)[0], grad_inputs, rtol=1e-9, atol=1e-12)
