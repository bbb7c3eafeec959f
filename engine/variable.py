"""A layer weight: a named NumPy array that layers read and optimizers update."""

import numpy as np


class Variable:
    """A weight created by ``Layer.add_weight``.

    ``value`` is the NumPy array; ``path`` is ``"<layer name>/<weight name>"``
    (``"dense/kernel"``). A Variable converts to an array wherever NumPy
    expects one, so ``np.matmul(inputs, self.w)`` works in a custom layer.
    """

    __slots__ = ("value", "name", "path", "trainable", "regularizer", "constraint")

    def __init__(self, value, name, path, trainable=True, regularizer=None, constraint=None):
        self.value = value
        self.name = name
        self.path = path
        self.trainable = trainable
        self.regularizer = regularizer
        self.constraint = constraint

    @property
    def shape(self):
        return self.value.shape

    @property
    def dtype(self):
        return self.value.dtype

    def numpy(self):
        return self.value

    def assign(self, value):
        """Replaces the value, keeping shape and dtype."""
        value = np.asarray(value)
        if value.shape != self.value.shape:
            raise ValueError(
                f"Cannot assign a value of shape {value.shape} to variable {self.path!r} "
                f"of shape {self.value.shape}."
            )
        self.value = value.astype(self.value.dtype, copy=True)

    def __array__(self, dtype=None, copy=None):
        if dtype is None or np.dtype(dtype) == self.value.dtype:
            return self.value
        return self.value.astype(dtype)

    def __repr__(self):
        return f"<Variable path={self.path}, shape={self.value.shape}, dtype={self.value.dtype.name}>"

    def __add__(self, other):
        return self.value + other

    def __radd__(self, other):
        return other + self.value

    def __sub__(self, other):
        return self.value - other

    def __rsub__(self, other):
        return other - self.value

    def __mul__(self, other):
        return self.value * other

    def __rmul__(self, other):
        return other * self.value

    def __truediv__(self, other):
        return self.value / other

    def __matmul__(self, other):
        return self.value @ other

    def __rmatmul__(self, other):
        return other @ self.value

    def __neg__(self):
        return -self.value

    def __getitem__(self, key):
        return self.value[key]
