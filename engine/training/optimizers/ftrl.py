"""FTRL: Follow The Regularized Leader, for shallow models with wide sparse inputs."""

import numpy as np

from engine.training.optimizers.base import Optimizer


class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., 2013), in Keras' form, with
    ``p = -learning_rate_power``::

        g_s = g + 2 * l2_shrinkage_regularization_strength * w
        n_new = n + g**2                      # n starts at initial_accumulator_value
        z = z + g_s - (n_new**p - n**p) / learning_rate * w
        q = n_new**p / learning_rate + 2 * (l2_regularization_strength + beta / (2 * learning_rate))
        w = (clip(z, -l1, l1) - z) / q        # l1 = l1_regularization_strength
        n = n_new

    Args:
        learning_rate: A float or a ``LearningRateSchedule``.
        learning_rate_power: How the per-coordinate rate falls as ``n`` grows
            (<= 0; 0 keeps it fixed).
        initial_accumulator_value: Starting value of ``n`` (>= 0).
        l1_regularization_strength: L1 strength (>= 0); it zeroes small weights.
        l2_regularization_strength: L2 stabilization strength (>= 0).
        l2_shrinkage_regularization_strength: L2 magnitude penalty added to
            the gradient (>= 0).
        beta: The paper's beta.
        **kwargs: The other arguments of ``Optimizer`` (``weight_decay``,
            ``clipnorm``, ``use_ema``, ``name``...).

    Raises:
        ValueError: a positive ``learning_rate_power`` or a negative
            accumulator value or regularization strength.

    Example:
        >>> import numpy as np
        >>> from engine.network.variable import Variable
        >>> w = Variable(np.zeros(2, "float32"), name="w", path="dense/w")
        >>> Ftrl(learning_rate=1.0, initial_accumulator_value=0.0, l1_regularization_strength=0.5).apply_gradients(
        ...     [(np.array([2.0, 0.25], "float32"), w)])
        >>> w.value  # (0.5 - 2) / sqrt(4); the small gradient stays under l1
        array([-0.75,  0.  ], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if learning_rate_power > 0.0:
            raise ValueError("Ftrl: `learning_rate_power` needs to be negative or zero. "
                             f"Received: learning_rate_power={learning_rate_power}.")
        non_negative = {"initial_accumulator_value": initial_accumulator_value,
                        "l1_regularization_strength": l1_regularization_strength,
                        "l2_regularization_strength": l2_regularization_strength,
                        "l2_shrinkage_regularization_strength": l2_shrinkage_regularization_strength}
        for key, value in non_negative.items():
            if value < 0.0:
                raise ValueError(f"Ftrl: `{key}` needs to be positive or zero. Received: {key}={value}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    def _create_slots(self, variables):
        self._accumulators, self._linears = self._add_slots(
            variables, "accumulator", "linear", initial_value=(self.initial_accumulator_value, 0.0))

    def update_step(self, gradient, variable, learning_rate):
        lr = variable.dtype.type(learning_rate)
        power = -self.learning_rate_power
        accumulator, linear = self._slot(self._accumulators, variable), self._slot(self._linears, variable)
        l2 = self.l2_regularization_strength + self.beta / (2.0 * lr)
        shrunk = gradient + 2 * self.l2_shrinkage_regularization_strength * variable.value
        new_accumulator = accumulator.value + np.square(gradient)
        sigma = (np.power(new_accumulator, power) - np.power(accumulator.value, power)) / lr
        linear.value = linear.value + (shrunk - sigma * variable.value)
        quadratic = np.power(new_accumulator, power) / lr + 2 * l2
        l1 = self.l1_regularization_strength
        variable.value = (np.clip(linear.value, -l1, l1) - linear.value) / quadratic
        accumulator.value = new_accumulator

    def get_config(self):
        return {**super().get_config(), "learning_rate_power": self.learning_rate_power,
                "initial_accumulator_value": self.initial_accumulator_value,
                "l1_regularization_strength": self.l1_regularization_strength,
                "l2_regularization_strength": self.l2_regularization_strength,
                "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
                "beta": self.beta}
