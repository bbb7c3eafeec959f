"""Adagrad: per-coordinate steps shrinking with the sum of past squared gradients."""

import numpy as np

from engine.training.optimizers.base import Optimizer


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011)::

        acc = acc + g**2                      # acc starts at initial_accumulator_value
        w = w - learning_rate * g / sqrt(acc + epsilon)

    Args:
        learning_rate: A float or a ``LearningRateSchedule``.
        initial_accumulator_value: Starting value of the accumulators.
        epsilon: Small constant for numerical stability.
        **kwargs: The other arguments of ``Optimizer`` (``weight_decay``,
            ``clipnorm``, ``use_ema``, ``name``...).

    Example:
        >>> import numpy as np
        >>> from engine.network.variable import Variable
        >>> w = Variable(np.zeros(1, "float32"), name="w", path="dense/w")
        >>> Adagrad(learning_rate=0.5, initial_accumulator_value=3.0).apply_gradients([(np.ones(1, "float32"), w)])
        >>> np.round(w.value, 4)
        array([-0.25], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def _create_slots(self, variables):
        [self._accumulators] = self._add_slots(variables, "accumulator", initial_value=self.initial_accumulator_value)

    def update_step(self, gradient, variable, learning_rate):
        acc = self._slot(self._accumulators, variable)
        acc.value = acc.value + np.square(gradient)
        variable.value = variable.value - learning_rate * gradient / np.sqrt(acc.value + self.epsilon)

    def get_config(self):
        return {**super().get_config(), "initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}
