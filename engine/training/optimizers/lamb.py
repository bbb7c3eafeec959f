"""Lamb: Adam steps rescaled per weight by the ratio of the weight's norm to the step's."""

import numpy as np

from engine.training.optimizers.base import Optimizer


class Lamb(Optimizer):
    """Lamb (You et al., 2019), in Keras' form. At step ``t`` (from 1)::

        m = m + (g - m) * (1 - beta_1)
        v = v + (g**2 - v) * (1 - beta_2)
        u = (m / (1 - beta_1**t)) / (sqrt(v / (1 - beta_2**t)) + epsilon)
        ratio = norm(w) / norm(u)        # 1 when either norm is 0
        w = w - ratio * learning_rate * u

    Args:
        learning_rate: A float or a ``LearningRateSchedule``.
        beta_1: Decay rate of the first-moment estimate.
        beta_2: Decay rate of the second-moment estimate.
        epsilon: Small constant for numerical stability.
        **kwargs: The other arguments of ``Optimizer`` (``weight_decay``,
            ``clipnorm``, ``use_ema``, ``name``...).

    Example:
        >>> import numpy as np
        >>> from engine.network.variable import Variable
        >>> w = Variable(np.array([3.0, 4.0], "float32"), name="w", path="dense/w")
        >>> Lamb(learning_rate=0.1).apply_gradients([(np.array([1.0, -1.0], "float32"), w)])
        >>> np.round(w.value, 4)  # a step of norm 0.1 * norm(w)
        array([2.6464, 4.3536], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def _create_slots(self, variables):
        self._momentums, self._velocities = self._add_slots(variables, "momentum", "velocity")

    def update_step(self, gradient, variable, learning_rate):
        cast = variable.dtype.type
        t = cast(self.iterations + 1)
        m, v = self._slot(self._momentums, variable), self._slot(self._velocities, variable)
        m.value = m.value + (gradient - m.value) * (1 - self.beta_1)
        v.value = v.value + (np.square(gradient) - v.value) * (1 - self.beta_2)
        m_hat = m.value / (1 - cast(self.beta_1) ** t)
        update = m_hat / (np.sqrt(v.value / (1 - cast(self.beta_2) ** t)) + self.epsilon)
        w_norm = np.sqrt(np.sum(np.square(variable.value)))
        u_norm = np.sqrt(np.sum(np.square(update)))
        ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else cast(1)
        variable.value = variable.value - ratio * cast(learning_rate) * update

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}
