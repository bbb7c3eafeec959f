"""Weight and activity regularizers: a penalty and its gradient, side by side."""

import numpy as np

from engine.files.serialization import deserialize, serialize as _serialize


class Regularizer:
    """``regularizer(x)`` is the penalty (a float); ``gradient(x)`` its gradient."""

    def __call__(self, x):
        raise NotImplementedError

    def gradient(self, x):
        raise NotImplementedError

    def activity_penalty(self, outputs):
        """The penalty on a layer's outputs, per sample as Keras divides it (0 for an empty batch)."""
        return self(outputs) / _batch_size(outputs)

    def activity_gradient(self, outputs):
        """The gradient of ``activity_penalty``."""
        return self.gradient(outputs) / _batch_size(outputs)

    def get_config(self):
        return {}


def _batch_size(outputs):
    return max(outputs.shape[0], 1) if np.ndim(outputs) else 1


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x**2)``.

    Example:
        >>> import numpy as np
        >>> L1L2(l1=0.1, l2=0.5)(np.array([1.0, -2.0]))
        2.8
    """

    def __init__(self, l1=0.0, l2=0.0):
        for name, value in (("l1", l1), ("l2", l2)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
                raise ValueError(f"Invalid value for argument {name}: expected a non-negative float. "
                                 f"{type(self).__name__} received {name}={value!r}.")
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        penalty = 0.0
        if self.l1:
            penalty += self.l1 * float(np.sum(np.abs(x)))
        if self.l2:
            penalty += self.l2 * float(np.sum(np.square(x)))
        return penalty

    def gradient(self, x):
        grad = np.zeros_like(x)
        if self.l1:
            grad += self.l1 * np.sign(x)
        if self.l2:
            grad += 2.0 * self.l2 * x
        return grad

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1=0.01):
        super().__init__(l1=l1)

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    def __init__(self, l2=0.01):
        super().__init__(l2=l2)

    def get_config(self):
        return {"l2": self.l2}


# Keras 3's lowercase names of the same classes: l1(0.01), l2(0.01), l1_l2(l1=..., l2=...).
l1, l2, l1_l2 = L1, L2, L1L2


def _l1_l2_by_name(l1=0.01, l2=0.01):
    """What the name ``"l1_l2"`` gives: both penalties at Keras' documented 0.01."""
    return L1L2(l1=l1, l2=l2)


_CLASSES = {"L1": L1, "L2": L2, "L1L2": L1L2, "l1_l2": _l1_l2_by_name}
_ALIASES = {"l1": "L1", "l2": "L2", "l1l2": "L1L2"}


def get(identifier):
    """Returns a regularizer from a name (``"l2"``), a config dict, an object or None."""
    if identifier is None or isinstance(identifier, Regularizer):
        return identifier
    return deserialize("regularizer", identifier, _CLASSES, _ALIASES)


def serialize(regularizer):
    return None if regularizer is None else _serialize(regularizer)
