"""A layer weight: a named NumPy array that layers read and optimizers update."""

import operator

import numpy as np

from engine.autodiff import tape as _tape
from engine.autodiff import traced as _traced


class Variable:
    """A weight created by ``Layer.add_weight``.

    ``value`` is the NumPy array; ``path`` is ``"<layer name>/<weight name>"``
    (``"dense/kernel"``). A Variable converts to an array wherever NumPy
    expects one, so ``np.matmul(inputs, self.w)`` works in a custom layer.

    While a ``GradientTape`` records, NumPy calls and operators on a trainable
    Variable are traced: it becomes a leaf of the innermost recording tape (one
    leaf per tape), so the tape can differentiate with respect to it. With no
    tape recording they run on ``value`` directly.
    """

    __slots__ = ("constraint", "name", "path", "regularizer", "trainable", "value")

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

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        values = []
        for x in inputs:
            if type(x) is _traced.Traced:
                return _traced._trace_ufunc(ufunc, method, inputs, kwargs)
            values.append(x.value if isinstance(x, Variable) else x)
        if _tape._STACK.get():
            return _traced._trace_ufunc(ufunc, method, inputs, kwargs)
        if "out" in kwargs:
            kwargs["out"] = tuple(x.value if isinstance(x, Variable) else x for x in kwargs["out"])
        return getattr(ufunc, method)(*values, **kwargs) if method != "__call__" else ufunc(*values, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if _tape._STACK.get() or _traced.Traced in types:
            return _traced._trace_function(func, args, kwargs)
        return func(*map(_values, args), **{key: _values(value) for key, value in kwargs.items()})

    def __getitem__(self, key):
        if _tape._STACK.get():
            return _traced._trace_function(operator.getitem, (self, key), {})
        return self.value[key]


def _values(arg):
    """``arg`` with Variables, alone or in a list or tuple, replaced by their values."""
    if isinstance(arg, Variable):
        return arg.value
    if type(arg) is list or type(arg) is tuple:
        return type(arg)(x.value if isinstance(x, Variable) else x for x in arg)
    return arg


def _operator(fn, ufunc, reflected=False):
    """``fn(self.value, other)``; traced while a tape records."""
    if reflected:
        def op(self, other):
            if _tape._STACK.get():
                return _traced._trace_ufunc(ufunc, "__call__", (other, self), {})
            return fn(other, self.value)
    else:
        def op(self, other):
            if _tape._STACK.get():
                return _traced._trace_ufunc(ufunc, "__call__", (self, other), {})
            return fn(self.value, other)
    return op


def _unary(fn, ufunc):
    def op(self):
        if _tape._STACK.get():
            return _traced._trace_ufunc(ufunc, "__call__", (self,), {})
        return fn(self.value)
    return op


for _name, _fn, _ufunc in [("add", operator.add, np.add), ("sub", operator.sub, np.subtract),
                           ("mul", operator.mul, np.multiply), ("truediv", operator.truediv, np.divide),
                           ("matmul", operator.matmul, np.matmul), ("pow", operator.pow, np.power)]:
    setattr(Variable, f"__{_name}__", _operator(_fn, _ufunc))
    setattr(Variable, f"__r{_name}__", _operator(_fn, _ufunc, reflected=True))
for _name, _fn, _ufunc in [("neg", operator.neg, np.negative), ("pos", operator.pos, np.positive),
                           ("abs", operator.abs, np.absolute)]:
    setattr(Variable, f"__{_name}__", _unary(_fn, _ufunc))
