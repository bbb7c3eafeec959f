"""RMSprop: gradient steps divided by a running root mean square of the gradients."""

import numpy as np

from engine.optimizers.base import Optimizer


class RMSprop(Optimizer):
    """RMSprop (Hinton, 2012), in Keras' form::

        v = rho * v + (1 - rho) * g**2
        step = learning_rate * g / sqrt(v + epsilon)
        w = w - step

    ``centered=True`` also tracks ``a = rho * a + (1 - rho) * g`` and divides by
    ``sqrt(v - a**2 + epsilon)`` instead. With ``momentum`` the steps accumulate,
    ``s = momentum * s + step`` and ``w = w - s``.

    Args:
        learning_rate: A float or a ``LearningRateSchedule``.
        rho: Decay rate of the squared-gradient average.
        momentum: Momentum of the steps; 0 disables it.
        epsilon: Small constant for numerical stability.
        centered: Whether to normalise by the estimated gradient variance.
        **kwargs: The other arguments of ``Optimizer`` (``weight_decay``,
            ``clipnorm``, ``use_ema``, ``name``...).

    Example:
        >>> import numpy as np
        >>> from engine.variable import Variable
        >>> w = Variable(np.zeros(1, "float32"), name="w", path="dense/w")
        >>> RMSprop(learning_rate=0.1, rho=0.75).apply_gradients([(np.ones(1, "float32"), w)])
        >>> np.round(w.value, 4)
        array([-0.2], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered

    def _create_slots(self, variables):
        [self._velocities] = self._add_slots(variables, "velocity")
        self._momentums = self._add_slots(variables, "momentum")[0] if self.momentum > 0 else []
        self._average_gradients = self._add_slots(variables, "average_gradient")[0] if self.centered else []

    def update_step(self, gradient, variable, learning_rate):
        v = self._slot(self._velocities, variable)
        v.value = self.rho * v.value + (1 - self.rho) * np.square(gradient)
        if self.centered:
            a = self._slot(self._average_gradients, variable)
            a.value = self.rho * a.value + (1 - self.rho) * gradient
            denominator = v.value - np.square(a.value) + self.epsilon
        else:
            denominator = v.value + self.epsilon
        step = learning_rate * gradient / np.sqrt(denominator)
        if self.momentum > 0:
            s = self._slot(self._momentums, variable)
            s.value = self.momentum * s.value + step
            step = s.value
        variable.value = variable.value - step

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                "centered": self.centered}
