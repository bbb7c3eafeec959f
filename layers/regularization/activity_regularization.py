"""ActivityRegularization: the identity, with an L1/L2 penalty on its output."""

from engine.training.regularizers import L1L2
from layers.core.identity import Identity


class ActivityRegularization(Identity):
    """Returns its input unchanged; in training, ``l1 * sum(|x|) + l2 * sum(x**2)``
    divided by the batch size is added to the loss (the layer's
    ``activity_regularizer``, which the execution plan applies).

    Args:
        l1: non-negative L1 factor.
        l2: non-negative L2 factor.

    Example:
        >>> import numpy as np
        >>> ActivityRegularization(l2=0.01)(np.ones((2, 3))).shape
        (2, 3)
    """

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=L1L2(l1=l1, l2=l2), **kwargs)
        self.l1 = l1
        self.l2 = l2

    def get_config(self):
        config = super().get_config()
        del config["activity_regularizer"]
        config.update(l1=self.l1, l2=self.l2)
        return config
