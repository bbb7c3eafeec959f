"""Adam: gradient steps scaled by running estimates of the gradient's first
and second moments."""

import numpy as np

from engine.training.optimizers.base import (UPDATE_CHUNK, Optimizer, joined_pair, scratch, take_joined,
                                             update_chunks)


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2014), in Keras' form. At step ``t`` (from 1)::

        m = m + (g - m) * (1 - beta_1)
        v = v + (g**2 - v) * (1 - beta_2)
        alpha = learning_rate * sqrt(1 - beta_2**t) / (1 - beta_1**t)
        w = w - alpha * m / (sqrt(v) + epsilon)

    With ``amsgrad=True`` the largest ``v`` seen so far replaces ``v`` in the last line.

    Args:
        learning_rate: A float or a ``LearningRateSchedule``.
        beta_1: Decay rate of the first-moment estimate.
        beta_2: Decay rate of the second-moment estimate.
        epsilon: Small constant for numerical stability.
        amsgrad: Whether to apply the AMSGrad variant.
        **kwargs: The other arguments of ``Optimizer`` (``weight_decay``,
            ``clipnorm``, ``use_ema``, ``name``...).

    Example:
        >>> import numpy as np
        >>> from engine.network.variable import Variable
        >>> w = Variable(np.zeros(2, "float32"), name="w", path="dense/w")
        >>> Adam(learning_rate=0.1).apply_gradients([(np.array([1.0, -3.0], "float32"), w)])
        >>> np.round(w.value, 4)
        array([-0.1,  0.1], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.amsgrad = amsgrad

    def _create_slots(self, variables):
        self._momentums, self._velocities = self._add_slots(variables, "momentum", "velocity")
        self._velocity_hats = self._add_slots(variables, "velocity_hat")[0] if self.amsgrad else []

    def update_step(self, gradient, variable, learning_rate):
        self._update_together([(gradient, variable)], learning_rate)

    def _update_steps(self, grads, variables, learning_rate):
        """Weights below ``UPDATE_CHUNK`` elements are updated together, one group per
        dtype, as one run of the update over their values laid end to end: a small
        model's dozens of weights take one pass of a dozen NumPy calls instead of a
        pass each (the digits CNN's 12 weights: 0.28 to 0.15 ms a step). A subclass that
        overrides ``update_step`` gets one call per weight, as the base class makes."""
        if type(self).update_step is not Adam.update_step:
            return super()._update_steps(grads, variables, learning_rate)
        small = {}
        for grad, variable in zip(grads, variables):
            if variable.value.size < UPDATE_CHUNK:
                small.setdefault(variable.dtype, []).append((grad, variable))
            else:
                self._update_together([(grad, variable)], learning_rate)
        for group in small.values():
            self._update_together(group, learning_rate)

    def _update_together(self, pairs, learning_rate):
        """Updates the ``(gradient, variable)`` pairs, all of one dtype, and their slots
        from one array per quantity (the variables' own flat values when there is one)."""
        dtype = pairs[0][1].dtype
        cast = dtype.type
        t = cast(self.iterations + 1)
        alpha = cast(learning_rate) * np.sqrt(1 - cast(self.beta_2) ** t) / (1 - cast(self.beta_1) ** t)
        variables = [variable for _, variable in pairs]
        columns = [self._momentums, self._velocities] + ([self._velocity_hats] if self.amsgrad else [])
        rows = [variables] + [[self._slot(column, variable) for variable in variables] for column in columns]
        (w, new_w), (m, new_m), (v, new_v) = [joined_pair(row) for row in rows[:3]]
        v_hat, new_v_hat = joined_pair(rows[3]) if self.amsgrad else (None, None)
        g = np.concatenate([grad.reshape(-1) for grad, _ in pairs], dtype=dtype) if len(pairs) > 1 else \
            pairs[0][0].reshape(-1)
        buffers = scratch(w.size, dtype, 2)
        for part in update_chunks(w.size):
            step, root = buffers[:, :part.stop - part.start]
            np.subtract(g[part], m[part], out=step)  # m += (g - m) * (1 - beta_1)
            step *= 1 - self.beta_1
            np.add(m[part], step, out=new_m[part])
            np.square(g[part], out=step)  # v += (g**2 - v) * (1 - beta_2)
            step -= v[part]
            step *= 1 - self.beta_2
            np.add(v[part], step, out=new_v[part])
            if v_hat is not None:
                np.maximum(v_hat[part], new_v[part], out=new_v_hat[part])
            np.sqrt((new_v if v_hat is None else new_v_hat)[part], out=root)  # w -= m * alpha / (sqrt(v) + epsilon)
            root += self.epsilon
            np.multiply(new_m[part], alpha, out=step)
            step /= root
            np.subtract(w[part], step, out=new_w[part])
        news = [new_w, new_m, new_v] + ([new_v_hat] if self.amsgrad else [])
        for row, new in zip(rows, news):
            take_joined(row, new)

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                "amsgrad": self.amsgrad}
