"""Adadelta: steps scaled by the ratio of running root mean squares of past
steps and of past gradients."""

import numpy as np

from engine.training.optimizers.base import Optimizer


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012), in Keras' form::

        acc_g = rho * acc_g + (1 - rho) * g**2
        delta = -sqrt(acc_delta + epsilon) * g / sqrt(acc_g + epsilon)
        acc_delta = rho * acc_delta + (1 - rho) * delta**2
        w = w + learning_rate * delta

    Args:
        learning_rate: A float or a ``LearningRateSchedule``; 1.0 gives the
            paper's form.
        rho: Decay rate of both running averages.
        epsilon: Small constant for numerical stability.
        **kwargs: The other arguments of ``Optimizer`` (``weight_decay``,
            ``clipnorm``, ``use_ema``, ``name``...).

    Example:
        >>> import numpy as np
        >>> from engine.network.variable import Variable
        >>> w = Variable(np.zeros(1, "float32"), name="w", path="dense/w")
        >>> Adadelta(learning_rate=1.0, rho=0.75, epsilon=0.25).apply_gradients([(np.ones(1, "float32"), w)])
        >>> w.value  # -sqrt(0.25) / sqrt(0.25 + 0.25)
        array([-0.70710677], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def _create_slots(self, variables):
        self._accumulated_grads, self._accumulated_deltas = self._add_slots(
            variables, "accumulated_grad", "accumulated_delta_var")

    def update_step(self, gradient, variable, learning_rate):
        acc_g = self._slot(self._accumulated_grads, variable)
        acc_delta = self._slot(self._accumulated_deltas, variable)
        acc_g.value = self.rho * acc_g.value + (1 - self.rho) * np.square(gradient)
        delta = -(np.sqrt(acc_delta.value + self.epsilon) * gradient) / np.sqrt(acc_g.value + self.epsilon)
        acc_delta.value = self.rho * acc_delta.value + (1 - self.rho) * np.square(delta)
        variable.value = variable.value + variable.dtype.type(learning_rate) * delta

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}
