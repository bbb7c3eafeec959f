"""A second oracle for every catalog layer's backward, beside finite differences: the
traced gradient of its own ``call`` (engine.autodiff), where tracing applies."""

import numpy as np
import pytest

from engine import tree
from engine.autodiff import TracingError
from engine.network.layer_tracing import traced_backward, traced_forward
from tests.engine.test_saving_catalog import EXAMPLES

# Their call reads the weights as plain arrays (`self.kernel.value`, for inference speed), so
# the trace sees only the inputs: their input gradients are compared, their weights are not.
WEIGHTS_READ_AS_ARRAYS = {"Attention", "BatchNormalization", "Dense", "Embedding", "GroupNormalization",
                          "LayerNormalization", "MultiHeadAttention", "PReLU"}
# Their call uses what the tracer cannot follow: the function named.
NOT_TRACEABLE = {
    "AveragePooling1D": "numpy.asarray",      # pools through a helper that converts its input
    "AveragePooling2D": "ndarray.strides",    # strided windows (as_strided)
    "MaxPooling1D": "numpy.copyto",           # a running max written into a preallocated array
    "MaxPooling2D": "numpy.copyto",
    "Conv1D": "numpy.asarray",                # im2col helpers convert and stride
    "Conv2D": "numpy.asarray",
    "Conv3D": "ndarray.strides",
    "DepthwiseConv2D": "ndarray.strides",     # einsum over a strided view of the windows
    "SeparableConv2D": "numpy.asarray",
    "Conv1DTranspose": "numpy.add",           # col2im scatters with an in-place ufunc
    "Conv2DTranspose": "numpy.add",
    "SimpleRNN": "numpy.asarray",             # the time loop writes its outputs into a preallocated array
    "GRU": "numpy.asarray",
    "LSTM": "numpy.asarray",
    "Bidirectional": "numpy.asarray",
    "RepeatVector": "numpy.repeat",           # no rule for np.repeat yet
    "UpSampling1D": "numpy.repeat",
}


def _inputs(name):
    _, shapes, dtype = EXAMPLES[name]
    rng = np.random.default_rng(0)
    if dtype == "int32":
        arrays = [rng.integers(0, 10, size=(2,) + s).astype(dtype) for s in shapes]
    else:
        arrays = [rng.normal(size=(2,) + s) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_traced_call_gives_the_hand_written_gradients(name):
    layer = EXAMPLES[name][0]()
    layer.dtype = "float64"
    x = _inputs(name)
    layer(x)
    for variable in layer.weights:
        variable.value = variable.value.astype("float64")
    if name in NOT_TRACEABLE:
        with pytest.raises(TracingError) as error:
            traced_forward(layer, x, (), False, {})
        assert error.value.function == NOT_TRACEABLE[name]
        return
    outputs, cache = layer.forward(x, training=False)
    grad_outputs = tree.map_structure(lambda o: np.random.default_rng(1).normal(size=np.shape(o)), outputs)
    grad_inputs, grad_weights = layer.backward(cache, grad_outputs)
    traced_outputs, trace = traced_forward(layer, x, (), False, {})
    traced_inputs, traced_weights = traced_backward(layer, trace, grad_outputs)
    for ours, theirs in zip(tree.flatten(traced_outputs), tree.flatten(outputs)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    for hand, traced in zip(tree.flatten(grad_inputs), tree.flatten(traced_inputs)):
        if hand is not None:
            np.testing.assert_allclose(traced, hand, rtol=1e-9, atol=1e-12)
    if name in WEIGHTS_READ_AS_ARRAYS:
        assert traced_weights == {}
    else:
        assert set(traced_weights) == set(grad_weights)
        for variable, hand in grad_weights.items():
            np.testing.assert_allclose(traced_weights[variable], hand, rtol=1e-9, atol=1e-12)
