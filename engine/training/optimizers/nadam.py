"""Nadam: Adam with Nesterov momentum."""

import numpy as np

from engine.training.optimizers.base import Optimizer
from engine.network.variable import Variable


class Nadam(Optimizer):
    """Nadam (Dozat, 2015), in Keras' form. With the momentum schedule
    ``mu(t) = beta_1 * (1 - 0.5 * 0.96**t)`` and ``P(t) = mu(1) * ... * mu(t)``,
    at step ``t`` (from 1)::

        m = m + (g - m) * (1 - beta_1)
        v = v + (g**2 - v) * (1 - beta_2)
        m_hat = mu(t+1) * m / (1 - P(t+1)) + (1 - mu(t)) * g / (1 - P(t))
        v_hat = v / (1 - beta_2**t)
        w = w - learning_rate * m_hat / (sqrt(v_hat) + epsilon)

    ``P(t)`` is kept in a slot shared by all weights, updated once per step.

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
        >>> w = Variable(np.zeros(1, "float32"), name="w", path="dense/w")
        >>> Nadam(learning_rate=0.1).apply_gradients([(np.ones(1, "float32"), w)])
        >>> np.round(w.value, 4)
        array([-0.1063], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def _create_slots(self, variables):
        self._momentums, self._velocities = self._add_slots(variables, "momentum", "velocity")
        dtype = variables[0].dtype if variables else np.float32
        self._u_product = Variable(np.array(1.0, dtype), name="u_product", path=f"{self.name}/u_product",
                                   trainable=False)
        self._variables.append(self._u_product)

    def _mu(self, step, cast):
        return cast(self.beta_1) * (1 - 0.5 * cast(0.96) ** cast(step))

    def _update_steps(self, grads, variables, learning_rate):
        cast = self._u_product.dtype.type
        self._u_product.value = self._u_product.value * self._mu(self.iterations + 1, cast)
        super()._update_steps(grads, variables, learning_rate)

    def update_step(self, gradient, variable, learning_rate):
        cast = variable.dtype.type
        t = self.iterations + 1
        beta_1, beta_2 = cast(self.beta_1), cast(self.beta_2)
        mu_t, mu_next = self._mu(t, cast), self._mu(t + 1, cast)
        product_t = cast(self._u_product.value)
        product_next = product_t * mu_next
        m, v = self._slot(self._momentums, variable), self._slot(self._velocities, variable)
        m.value = m.value + (gradient - m.value) * (1 - beta_1)
        v.value = v.value + (np.square(gradient) - v.value) * (1 - beta_2)
        m_hat = mu_next * m.value / (1 - product_next) + (1 - mu_t) * gradient / (1 - product_t)
        v_hat = v.value / (1 - beta_2 ** cast(t))
        variable.value = variable.value - m_hat * learning_rate / (np.sqrt(v_hat) + self.epsilon)

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}
