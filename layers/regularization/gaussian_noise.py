"""GaussianNoise: adds zero-centred Gaussian noise in training."""

import numbers

from layers.core.seed_generator import _NoiseLayer, SeedGenerator


class GaussianNoise(_NoiseLayer):
    """Adds noise drawn from ``N(0, stddev**2)`` in training; the identity in inference.

    Args:
        stddev: standard deviation of the noise, in [0, 1].
        seed: integer seed of the layer's own generator; by default the noise
            comes from the global generator (``engine.utils.set_random_seed``).

    Example:
        >>> import numpy as np
        >>> GaussianNoise(0.1, seed=0)(np.zeros((2, 3)), training=True).shape
        (2, 3)
    """

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(stddev, numbers.Real) or isinstance(stddev, bool) or not 0 <= stddev <= 1:
            raise ValueError(
                "Invalid value received for argument `stddev`. Expected a float value between 0 and 1. "
                f"Received: stddev={stddev!r}"
            )
        self.stddev = stddev
        self.seed = seed
        self.seed_generator = SeedGenerator(seed)

    def forward(self, inputs, training=True):
        if not training or self.stddev == 0:
            return inputs, None
        noise = self.seed_generator.generator.standard_normal(inputs.shape).astype(inputs.dtype)
        return inputs + self.stddev * noise, None

    def get_config(self):
        config = super().get_config()
        config.update(stddev=self.stddev, seed=self.seed)
        return config
