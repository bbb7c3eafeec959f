"""Lion: steps of fixed size in the sign of an interpolated momentum."""

import numpy as np

from engine.training.optimizers.base import Optimizer


class Lion(Optimizer):
    """Lion (Chen et al., 2023)::

        w = w - learning_rate * sign(beta_1 * m + (1 - beta_1) * g)
        m = beta_2 * m + (1 - beta_2) * g

    Its steps are larger than Adam's: a learning rate 3-10x smaller and a
    weight decay 3-10x larger than AdamW's keep ``learning_rate * weight_decay``.

    Args:
        learning_rate: A float or a ``LearningRateSchedule``.
        beta_1: Weight of the momentum in the step's direction, in (0, 1].
        beta_2: Decay rate of the momentum.
        **kwargs: The other arguments of ``Optimizer`` (``weight_decay``,
            ``clipnorm``, ``use_ema``, ``name``...).

    Raises:
        ValueError: ``beta_1`` outside (0, 1].

    Example:
        >>> import numpy as np
        >>> from engine.network.variable import Variable
        >>> w = Variable(np.zeros(2, "float32"), name="w", path="dense/w")
        >>> Lion(learning_rate=0.1).apply_gradients([(np.array([3.0, -0.01], "float32"), w)])
        >>> w.value
        array([-0.1,  0.1], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if not 0 < beta_1 <= 1:
            raise ValueError("Argument `beta_1` of Lion must be in the (0, 1] range. Otherwise, the optimizer "
                             f"degenerates to SignSGD. Received: beta_1={beta_1}.")
        self.beta_1 = beta_1
        self.beta_2 = beta_2

    def _create_slots(self, variables):
        [self._momentums] = self._add_slots(variables, "momentum")

    def update_step(self, gradient, variable, learning_rate):
        cast = variable.dtype.type
        beta_1, beta_2 = cast(self.beta_1), cast(self.beta_2)
        m = self._slot(self._momentums, variable)
        variable.value = variable.value - cast(learning_rate) * np.sign(m.value * beta_1 + gradient * (1 - beta_1))
        m.value = m.value * beta_2 + gradient * (1 - beta_2)

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2}
