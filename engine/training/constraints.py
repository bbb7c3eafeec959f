"""Weight constraints: projections applied to a weight after each optimizer update."""

import numpy as np

from engine.files.serialization import deserialize, serialize as _serialize

EPSILON = 1e-7


class Constraint:
    """``constraint(w)`` returns the projected weight."""

    def __call__(self, w):
        return w

    def get_config(self):
        return {}


class MaxNorm(Constraint):
    """Rescales slices along ``axis`` whose L2 norm exceeds ``max_value``."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, _axis(axis)

    def __call__(self, w):
        norms = np.sqrt(np.sum(np.square(w), axis=self.axis, keepdims=True))
        return w * (np.clip(norms, 0, self.max_value) / (EPSILON + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Sets negative weights to zero."""

    def __call__(self, w):
        return w * (w >= 0.0)


class UnitNorm(Constraint):
    """Scales slices along ``axis`` to unit L2 norm."""

    def __init__(self, axis=0):
        self.axis = _axis(axis)

    def __call__(self, w):
        return w / (EPSILON + np.sqrt(np.sum(np.square(w), axis=self.axis, keepdims=True)))

    def get_config(self):
        return {"axis": self.axis}


def _axis(axis):
    """NumPy takes several axes as a tuple; Keras documents lists (``axis=[0, 1, 2]`` for conv kernels)."""
    return tuple(axis) if isinstance(axis, list) else axis


_CLASSES = {"MaxNorm": MaxNorm, "NonNeg": NonNeg, "UnitNorm": UnitNorm}
_ALIASES = {"max_norm": "MaxNorm", "non_neg": "NonNeg", "unit_norm": "UnitNorm"}


def get(identifier):
    """Returns a constraint from a name (``"max_norm"``), a config dict, an object or None."""
    if identifier is None or isinstance(identifier, Constraint):
        return identifier
    return deserialize("constraint", identifier, _CLASSES, _ALIASES)


def serialize(constraint):
    return None if constraint is None else _serialize(constraint)
