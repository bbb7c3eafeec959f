"""Dropout: zeroes a random fraction of the inputs in training, scaling the rest up."""

import numbers

from layers.core.seed_generator import _NoiseLayer, SeedGenerator


class Dropout(_NoiseLayer):
    """Inverted dropout: in training, each unit is kept with probability
    ``1 - rate`` and scaled by ``1 / (1 - rate)``; in inference, the identity.

    Args:
        rate: fraction of the units to drop, in [0, 1).
        noise_shape: shape of the mask, broadcast against the inputs; ``None``
            entries take the input's size (``(None, 1, None)`` drops the same
            features at every timestep).
        seed: integer seed of the layer's own generator; by default masks come
            from the global generator (``engine.utils.set_random_seed``).

    Example:
        >>> import numpy as np
        >>> Dropout(0.5, seed=1)(np.ones((2, 4)), training=True).sum(axis=1).shape
        (2,)
    """

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, numbers.Real) or isinstance(rate, bool) or not 0 <= rate < 1:
            raise ValueError(
                "Invalid value received for argument `rate`. Expected a float value in [0, 1). "
                f"Received: rate={rate!r}"
            )
        self.rate = rate
        self.noise_shape = _validate_noise_shape(noise_shape)
        self.seed = seed
        self.seed_generator = SeedGenerator(seed)

    def build(self, input_shape):
        self._mask_shape(input_shape)  # fails early on a noise_shape that does not fit

    def _mask_shape(self, input_shape):
        """The shape of the mask for inputs of ``input_shape``."""
        if self.noise_shape is None:
            return tuple(input_shape)
        if len(self.noise_shape) != len(input_shape):
            raise ValueError(
                f"Layer {self.name!r} (Dropout) has noise_shape={self.noise_shape} of rank "
                f"{len(self.noise_shape)}, but received inputs of rank {len(input_shape)} "
                f"(shape {tuple(input_shape)}). The noise_shape needs one entry per input axis."
            )
        shape = tuple(size if n is None else n for n, size in zip(self.noise_shape, input_shape))
        for n, size in zip(shape, input_shape):
            if n not in (1, size) and size is not None:
                raise ValueError(
                    f"Layer {self.name!r} (Dropout): noise_shape={self.noise_shape} does not broadcast "
                    f"to the input shape {tuple(input_shape)}; each entry must be None, 1 or the "
                    "input's size on that axis."
                )
        return shape

    def forward(self, inputs, training=True):
        if not training or self.rate == 0:
            return inputs, None
        keep = 1.0 - self.rate
        drawn = self.seed_generator.generator.random(self._mask_shape(inputs.shape))
        mask = (drawn < keep).astype(inputs.dtype) / keep
        return inputs * mask, mask

    def get_config(self):
        config = super().get_config()
        config.update(rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)
        return config


def _validate_noise_shape(noise_shape):
    if noise_shape is None:
        return None
    if isinstance(noise_shape, (list, tuple)) and all(
        n is None or (isinstance(n, int) and not isinstance(n, bool) and n > 0) for n in noise_shape
    ):
        return tuple(noise_shape)
    raise ValueError(
        "Invalid value received for argument `noise_shape`. Expected a tuple or list of positive "
        f"integers or None. Received: noise_shape={noise_shape!r}"
    )
