"""Adam: gradient steps scaled by running estimates of the gradient's first
and second moments."""

import numpy as np

from engine.optimizers.base import Optimizer


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2014), in Keras' form. At step ``t`` (from 1)::

        m = m + (g - m) * (1 - beta_1)
        v = v + (g**2 - v) * (1 - beta_2)
        alpha = learning_rate * sqrt(1 - beta_2**t) / (1 - beta_1**t)
        w = w - alpha * m / (sqrt(v) + epsilon)

    With ``amsgrad=True`` the largest ``v`` seen so far replaces ``v`` in the last line.

    Args:
        learning_rate: A float or a ``LearningRateSchedule``.
        beta_1: Decay rate of the first-moment estimate.
        beta_2: Decay rate of the second-moment estimate.
        epsilon: Small constant for numerical stability.
        amsgrad: Whether to apply the AMSGrad variant.
        **kwargs: The other arguments of ``Optimizer`` (``weight_decay``,
            ``clipnorm``, ``use_ema``, ``name``...).

    Example:
        >>> import numpy as np
        >>> from engine.variable import Variable
        >>> w = Variable(np.zeros(2, "float32"), name="w", path="dense/w")
        >>> Adam(learning_rate=0.1).apply_gradients([(np.array([1.0, -3.0], "float32"), w)])
        >>> np.round(w.value, 4)
        array([-0.1,  0.1], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.amsgrad = amsgrad

    def _create_slots(self, variables):
        self._momentums, self._velocities = self._add_slots(variables, "momentum", "velocity")
        self._velocity_hats = self._add_slots(variables, "velocity_hat")[0] if self.amsgrad else []

    def update_step(self, gradient, variable, learning_rate):
        cast = variable.dtype.type
        t = cast(self.iterations + 1)
        alpha = cast(learning_rate) * np.sqrt(1 - cast(self.beta_2) ** t) / (1 - cast(self.beta_1) ** t)
        m, v = self._slot(self._momentums, variable), self._slot(self._velocities, variable)
        m.value = m.value + (gradient - m.value) * (1 - self.beta_1)
        v.value = v.value + (np.square(gradient) - v.value) * (1 - self.beta_2)
        if self.amsgrad:
            v_hat = self._slot(self._velocity_hats, variable)
            v_hat.value = np.maximum(v_hat.value, v.value)
            v = v_hat
        variable.value = variable.value - m.value * alpha / (np.sqrt(v.value) + self.epsilon)

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                "amsgrad": self.amsgrad}
