"""Adafactor: Adam-like steps whose second moment of a matrix is kept as a
row and a column factor, so the state grows with rows + columns."""

import numpy as np

from engine.training.optimizers.base import Optimizer


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern, 2018), in Keras' form, without momentum.
    At step ``t`` (from 1), with ``G = g**2 + epsilon_1`` and ``b = 1 - t**beta_2_decay``::

        alpha = max(epsilon_2, rms(w)) * min(learning_rate, 1 / sqrt(t))
        r = b * r + (1 - b) * mean(G, axis=-1)     # weights of 2 or more dimensions:
        c = b * c + (1 - b) * mean(G, axis=-2)     # the last two axes are factored
        v = (r / mean(r, axis=-1))[..., None] * c[..., None, :]
        v = b * v + (1 - b) * G                    # instead, for 0 or 1 dimension
        u = g / sqrt(v)
        w = w - alpha * u / max(1, rms(u) / clip_threshold)

    Slots per weight, in Keras' order: ``r``, ``c`` and ``v`` (for a weight of
    fewer than 2 dimensions ``r`` and ``c`` are integer zeros Keras keeps as
    placeholders). The factors are named ``<weight>_row_factor`` and
    ``<weight>_column_factor`` (Keras names both after the weight alone).

    Args:
        learning_rate: A float or a ``LearningRateSchedule``.
        beta_2_decay: Exponent of the decay rate of the second moment.
        epsilon_1: Small constant added to the squared gradients.
        epsilon_2: Lower bound of ``rms(w)`` in the step size.
        clip_threshold: Bound of ``rms(u)``, independent of ``clipnorm``,
            ``clipvalue`` and ``global_clipnorm``.
        relative_step: Kept for Keras' configs: Keras 3 caps the rate at
            ``1 / sqrt(t)`` with or without it.
        **kwargs: The other arguments of ``Optimizer`` (``weight_decay``,
            ``clipnorm``, ``use_ema``, ``name``...).

    Example:
        >>> import numpy as np
        >>> from engine.network.variable import Variable
        >>> w = Variable(np.ones((2, 2), "float32"), name="w", path="dense/w")
        >>> optimizer = Adafactor(learning_rate=0.1)
        >>> optimizer.apply_gradients([(np.full((2, 2), 0.5, "float32"), w)])
        >>> w.value  # alpha = rms(w) * 0.1; u = 1
        array([[0.9, 0.9],
               [0.9, 0.9]], dtype=float32)
        >>> [v.shape for v in optimizer.variables[2:]]  # r, c, v
        [(2,), (2,), (2, 2)]
    """

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3, clip_threshold=1.0,
                 relative_step=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_2_decay = beta_2_decay
        self.epsilon_1 = epsilon_1
        self.epsilon_2 = epsilon_2
        self.clip_threshold = clip_threshold
        self.relative_step = relative_step

    def _create_slots(self, variables):
        self._rows, self._columns, self._velocities = [], [], []
        for variable in variables:
            prefix = variable.path.replace("/", "_")
            if len(variable.shape) < 2:
                row = column = np.array(0, "int32")
            else:
                row = np.zeros(variable.shape[:-1], variable.dtype)
                column = np.zeros(variable.shape[:-2] + variable.shape[-1:], variable.dtype)
            self._rows.append(self._add_slot(f"{prefix}_row_factor", row))
            self._columns.append(self._add_slot(f"{prefix}_column_factor", column))
            self._velocities.append(self._add_slot(f"{prefix}_velocity", np.zeros(variable.shape, variable.dtype)))

    def update_step(self, gradient, variable, learning_rate):
        cast = variable.dtype.type
        t = cast(self.iterations + 1)
        rho = np.minimum(cast(learning_rate), 1 / np.sqrt(t))
        alpha = np.maximum(cast(self.epsilon_2), _rms(variable.value)) * rho
        squared = np.square(gradient) + self.epsilon_1
        decay = 1 - np.power(t, cast(self.beta_2_decay))
        v = self._slot(self._velocities, variable)
        if len(variable.shape) >= 2:
            r, c = self._slot(self._rows, variable), self._slot(self._columns, variable)
            r.value = decay * r.value + (1 - decay) * np.mean(squared, axis=-1)
            c.value = decay * c.value + (1 - decay) * np.mean(squared, axis=-2)
            v.value = (r.value / np.mean(r.value, axis=-1, keepdims=True))[..., None] * c.value[..., None, :]
        else:
            v.value = decay * v.value + (1 - decay) * squared
        u = gradient / np.sqrt(v.value)
        u = u / np.maximum(cast(1), _rms(u) / cast(self.clip_threshold))
        variable.value = variable.value - alpha * u

    def get_config(self):
        return {**super().get_config(), "beta_2_decay": self.beta_2_decay, "epsilon_1": self.epsilon_1,
                "epsilon_2": self.epsilon_2, "clip_threshold": self.clip_threshold,
                "relative_step": self.relative_step}


def _rms(x):
    return np.sqrt(np.mean(np.square(x)))
