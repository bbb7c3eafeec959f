import numpy as np
import pytest


@pytest.fixture
def random_weights():
    """Builds a layer (Keras' or ours) for ``input_shape`` and sets every weight to
    random values in [0.5, 1.5] (valid for gammas, betas and moving variances)."""
    rng = np.random.default_rng(7)

    def build(layer, input_shape):
        layer.build(input_shape)
        layer.set_weights([rng.uniform(0.5, 1.5, np.shape(w)).astype("float32") for w in layer.get_weights()])
        return layer

    return build
