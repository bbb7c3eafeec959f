"""What the random layers (Dropout, GaussianNoise, ...) share: where they draw
their noise (``SeedGenerator``, the class ``keras.random`` takes as ``seed=``),
and a base class for layers that perturb their input in training."""

from engine import Layer
from engine.keras_random import SeedGenerator  # noqa: F401  (the layers' seeds are keras.random's)


class _NoiseLayer(Layer):
    """A shape-preserving layer that is the identity at inference. Its ``forward``
    (``training=True``) returns ``(outputs, noise)`` where ``outputs`` depends on
    the input as ``inputs * noise`` (dropout masks), or as ``inputs + something``
    with ``noise=None`` (additive noise): ``backward`` follows from that."""

    supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape

    def call(self, inputs, training=False):
        return self.forward(inputs, training=training)[0]

    def backward(self, cache, grad_outputs):
        return (grad_outputs if cache is None else grad_outputs * cache), {}

    def flops(self, input_shapes, output_shapes):
        """0: the identity at inference (dropout and noise act in training only)."""
        return 0
