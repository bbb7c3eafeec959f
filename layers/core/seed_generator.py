"""What the random layers (Dropout, GaussianNoise, ...) share: where they draw
their noise, and a base class for layers that perturb their input in training."""

import numpy as np

from engine import Layer
from engine.utils import random_generator


class SeedGenerator:
    """The random source of one layer.

    With a ``seed``, the layer owns a generator seeded once, so two layers with
    the same seed draw the same sequence of masks; without one, every draw uses
    the global generator of ``engine.utils`` at draw time, so
    ``engine.utils.set_random_seed`` makes the run reproducible.

    Example:
        >>> a, b = SeedGenerator(7), SeedGenerator(7)
        >>> bool((a.generator.random(3) == b.generator.random(3)).all())
        True
    """

    def __init__(self, seed=None):
        if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool)):
            raise ValueError(f"Expected `seed` to be an integer or None. Received: seed={seed!r}")
        self._generator = None if seed is None else random_generator(seed)

    @property
    def generator(self) -> np.random.Generator:
        return random_generator() if self._generator is None else self._generator


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
