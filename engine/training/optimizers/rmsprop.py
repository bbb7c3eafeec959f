"""RMSprop: gradient steps divided by a running root mean square of the gradients."""

import numpy as np

from engine.training.optimizers.base import Optimizer, flat_pair, scratch, take_new, update_chunks


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
        >>> from engine.network.variable import Variable
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
        slots = [self._velocities] + ([self._average_gradients] if self.centered else []) \
            + ([self._momentums] if self.momentum > 0 else [])
        pairs = {v: flat_pair(v) for v in [variable] + [self._slot(column, variable) for column in slots]}
        found = iter(list(pairs.values()))
        (w, new_w), (v, new_v) = next(found), next(found)
        a, new_a = next(found) if self.centered else (None, None)
        s, new_s = next(found) if self.momentum > 0 else (None, None)
        g = gradient.reshape(-1)
        buffers = scratch(w.size, w.dtype, 2)
        for part in update_chunks(w.size):
            step, root = buffers[:, :part.stop - part.start]
            np.multiply(v[part], self.rho, out=new_v[part])  # v = rho * v + (1 - rho) * g**2
            np.square(g[part], out=step)
            step *= 1 - self.rho
            new_v[part] += step
            if a is None:  # root = sqrt(v + epsilon)
                np.add(new_v[part], self.epsilon, out=root)
            else:  # a = rho * a + (1 - rho) * g; root = sqrt(v - a**2 + epsilon)
                np.multiply(a[part], self.rho, out=new_a[part])
                np.multiply(g[part], 1 - self.rho, out=step)
                new_a[part] += step
                np.square(new_a[part], out=step)
                np.subtract(new_v[part], step, out=root)
                root += self.epsilon
            np.sqrt(root, out=root)
            np.multiply(g[part], learning_rate, out=step)  # step = learning_rate * g / root
            step /= root
            if s is not None:  # s = momentum * s + step; step = s
                np.multiply(s[part], self.momentum, out=new_s[part])
                new_s[part] += step
                step = new_s[part]
            np.subtract(w[part], step, out=new_w[part])
        take_new(pairs)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                "centered": self.centered}
