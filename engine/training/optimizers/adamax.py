"""Adamax: Adam with the infinity norm in place of the second moment."""

import numpy as np

from engine.training.optimizers.base import Optimizer


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, 2014, section 7). At step ``t`` (from 1)::

        m = m + (g - m) * (1 - beta_1)
        u = max(beta_2 * u, |g|)
        w = w - learning_rate * m / ((1 - beta_1**t) * (u + epsilon))

    Args:
        learning_rate: A float or a ``LearningRateSchedule``.
        beta_1: Decay rate of the first-moment estimate.
        beta_2: Decay rate of the infinity norm.
        epsilon: Small constant for numerical stability.
        **kwargs: The other arguments of ``Optimizer`` (``weight_decay``,
            ``clipnorm``, ``use_ema``, ``name``...).

    Example:
        >>> import numpy as np
        >>> from engine.network.variable import Variable
        >>> w = Variable(np.zeros(1, "float32"), name="w", path="dense/w")
        >>> Adamax(learning_rate=0.1).apply_gradients([(np.full(1, 2.0, "float32"), w)])
        >>> np.round(w.value, 4)
        array([-0.1], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def _create_slots(self, variables):
        self._momentums, self._norms = self._add_slots(variables, "momentum", "norm")

    def update_step(self, gradient, variable, learning_rate):
        cast = variable.dtype.type
        beta_1_power = cast(self.beta_1) ** cast(self.iterations + 1)
        m, u = self._slot(self._momentums, variable), self._slot(self._norms, variable)
        m.value = m.value + (gradient - m.value) * (1 - self.beta_1)
        u.value = np.maximum(self.beta_2 * u.value, np.abs(gradient))
        variable.value = variable.value - learning_rate * m.value / ((1 - beta_1_power) * (u.value + self.epsilon))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}
