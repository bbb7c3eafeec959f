"""GaussianDropout: multiplies the inputs by 1-centred Gaussian noise in training."""

import math
import numbers

from layers.core.seed_generator import _NoiseLayer, SeedGenerator


class GaussianDropout(_NoiseLayer):
    """Multiplies by noise drawn from ``N(1, rate / (1 - rate))`` in training;
    the identity in inference.

    Args:
        rate: drop probability (as in Dropout), in [0, 1).
        seed: integer seed of the layer's own generator; by default the noise
            comes from the global generator (``engine.utils.set_random_seed``).

    Example:
        >>> import numpy as np
        >>> GaussianDropout(0.2, seed=0)(np.ones((2, 3)), training=True).shape
        (2, 3)
    """

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, numbers.Real) or isinstance(rate, bool) or not 0 <= rate < 1:
            raise ValueError(
                "Invalid value received for argument `rate`. Expected a float value in [0, 1). "
                f"Received: rate={rate!r}"
            )
        self.rate = rate
        self.seed = seed
        self.seed_generator = SeedGenerator(seed)

    def forward(self, inputs, training=True):
        if not training or self.rate == 0:
            return inputs, None
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        noise = 1 + stddev * self.seed_generator.generator.standard_normal(inputs.shape).astype(inputs.dtype)
        return inputs * noise, noise

    def get_config(self):
        config = super().get_config()
        config.update(rate=self.rate, seed=self.seed)
        return config
