"""Stochastic gradient descent, optionally with (Nesterov) momentum."""

import numbers

from engine.optimizers.base import Optimizer


class SGD(Optimizer):
    """Gradient descent: ``w -= learning_rate * g``.

    With ``momentum`` a velocity is kept, ``m = momentum * m - learning_rate * g``,
    and ``w += m``; with ``nesterov=True`` the step looks ahead,
    ``w += momentum * m - learning_rate * g``.

    Args:
        learning_rate: A float or a ``LearningRateSchedule``.
        momentum: A float in ``[0, 1]``; 0 is plain gradient descent.
        nesterov: Whether to use Nesterov momentum.
        **kwargs: The other arguments of ``Optimizer`` (``weight_decay``,
            ``clipnorm``, ``use_ema``, ``name``...).

    Example:
        >>> import numpy as np
        >>> from engine.variable import Variable
        >>> w = Variable(np.ones(2, "float32"), name="w", path="dense/w")
        >>> SGD(learning_rate=0.1, momentum=0.9).apply_gradients([(np.ones(2, "float32"), w)])
        >>> w.value
        array([0.9, 0.9], dtype=float32)
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if isinstance(momentum, bool) or not isinstance(momentum, numbers.Real) or not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be a float between [0, 1]. Received: momentum={momentum!r}")
        self.momentum = momentum
        self.nesterov = nesterov

    def _create_slots(self, variables):
        self._momentums = self._add_slots(variables, "momentum")[0] if self.momentum != 0 else []

    def update_step(self, gradient, variable, learning_rate):
        if self.momentum == 0:
            variable.value = variable.value - gradient * learning_rate
            return
        m = self._slot(self._momentums, variable)
        m.value = m.value * self.momentum - gradient * learning_rate
        if self.nesterov:
            variable.value = variable.value + (m.value * self.momentum - gradient * learning_rate)
        else:
            variable.value = variable.value + m.value

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}
