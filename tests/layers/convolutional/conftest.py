import inspect

import numpy as np
import pytest

from tests.layers.oracle import keras


@pytest.fixture
def keras_layer():
    """``keras_layer(name, input_shape, *args, **kwargs)``: Keras' layer ``name``,
    built for ``input_shape``, with every weight random in [-0.5, 0.5] (so that
    biases are tested too). Its initializers are "zeros": Keras' random
    initializers take seconds per layer on jax."""
    rng = np.random.default_rng(7)

    def build(name, input_shape, *args, **kwargs):
        cls = getattr(keras.layers, name)
        for parameter in inspect.signature(cls).parameters:
            if parameter.endswith("_initializer"):
                kwargs.setdefault(parameter, "zeros")
        layer = cls(*args, **kwargs)
        layer.build(input_shape)
        layer.set_weights([rng.uniform(-0.5, 0.5, np.shape(w)).astype("float32") for w in layer.get_weights()])
        return layer

    return build


@pytest.fixture
def random_weights():
    """Builds one of our layers for ``input_shape`` with random weights in [-0.5, 0.5]."""
    rng = np.random.default_rng(8)

    def build(layer, input_shape):
        layer.build(input_shape)
        layer.set_weights([rng.uniform(-0.5, 0.5, w.shape) for w in layer.get_weights()])
        return layer

    return build


@pytest.fixture
def inputs():
    """``inputs(shape, dtype="float32", seed=0)``: standard normal inputs."""
    def make(shape, dtype="float32", seed=0):
        return np.random.default_rng(seed).normal(size=shape).astype(dtype)

    return make
