"""AdamW: Adam with decoupled weight decay."""

from engine.training.optimizers.adam import Adam


class AdamW(Adam):
    """Adam whose weights first shrink by ``w * weight_decay * learning_rate``
    each step (Loshchilov & Hutter, 2019). Arguments are Adam's, with
    ``weight_decay`` required (0.004 by default).

    Args:
        learning_rate: A float or a ``LearningRateSchedule``.
        weight_decay: The decoupled decay rate (not None).
        beta_1: Decay rate of the first-moment estimate.
        beta_2: Decay rate of the second-moment estimate.
        epsilon: Small constant for numerical stability.
        amsgrad: Whether to apply the AMSGrad variant.
        **kwargs: The other arguments of ``Optimizer`` (``clipnorm``,
            ``use_ema``, ``name``...).

    Raises:
        ValueError: ``weight_decay=None``.

    Example:
        >>> import numpy as np
        >>> from engine.network.variable import Variable
        >>> w = Variable(np.ones(2, "float32"), name="w", path="dense/w")
        >>> AdamW(learning_rate=0.1, weight_decay=0.5).apply_gradients([(np.zeros(2, "float32"), w)])
        >>> w.value
        array([0.95, 0.95], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, **kwargs):
        if weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: weight_decay=None")
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=amsgrad, **kwargs)
