import numpy as np
import pytest

from engine import Layer


@pytest.fixture
def random_weights():
    """Builds a layer (Keras' or ours) for ``input_shape`` and sets every weight to
    random values in [-0.5, 0.5], so that biases and recurrent terms all matter."""
    rng = np.random.default_rng(7)

    def build(layer, input_shape):
        layer.build(input_shape)
        layer.set_weights([rng.uniform(-0.5, 0.5, np.shape(w)).astype("float32") for w in layer.get_weights()])
        return layer

    return build


class WithMask(Layer):
    """Runs a recurrent layer with a fixed ``mask`` (and call arguments), so that the
    gradient checker, which only passes inputs, can check masked passes."""

    def __init__(self, layer, mask, **call_kwargs):
        super().__init__()
        self.layer = layer
        self.mask = mask
        self.call_kwargs = call_kwargs

    def call(self, inputs, training=False):
        return self.layer.call(inputs, mask=self.mask, training=training, **self.call_kwargs)

    def forward(self, inputs, training=True):
        return self.layer.forward(inputs, training=training, mask=self.mask, **self.call_kwargs)

    def backward(self, cache, grad_outputs):
        return self.layer.backward(cache, grad_outputs)


@pytest.fixture
def with_mask():
    return WithMask
