"""Stochastic gradient descent, optionally with (Nesterov) momentum."""

import numbers

import numpy as np

from engine.training.optimizers.base import Optimizer, flat_pair, scratch, take_new, update_chunks


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
        >>> from engine.network.variable import Variable
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
        momentum = [self._slot(self._momentums, variable)] if self.momentum != 0 else []
        pairs = {v: flat_pair(v) for v in [variable] + momentum}
        (w, new_w), (m, new_m) = list(pairs.values()) + [(None, None)] * (not momentum)
        g = gradient.reshape(-1)
        buffers = scratch(w.size, w.dtype, 2)
        for part in update_chunks(w.size):
            step, ahead = buffers[:, :part.stop - part.start]
            np.multiply(g[part], learning_rate, out=step)
            if m is None:  # w -= g * learning_rate
                np.subtract(w[part], step, out=new_w[part])
                continue
            np.multiply(m[part], self.momentum, out=new_m[part])  # m = m * momentum - g * learning_rate
            new_m[part] -= step
            if self.nesterov:  # w += m * momentum - g * learning_rate
                np.multiply(new_m[part], self.momentum, out=ahead)
                ahead -= step
                np.add(w[part], ahead, out=new_w[part])
            else:  # w += m
                np.add(w[part], new_m[part], out=new_w[part])
        take_new(pairs)

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}
