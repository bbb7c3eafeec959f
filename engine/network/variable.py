"""A layer weight: a named NumPy array that layers read and optimizers update."""

import operator

import numpy as np

from engine.autodiff import active
from engine.autodiff import traced as _traced
from engine.network.naming import unique_name
from engine.network.weight_draws import PendingDraw, draw


class Variable:
    """A weight: a named NumPy array that layers read and optimizers update.

    Made as in Keras 3, from an initializer and a shape or from a value, or by
    ``Layer.add_weight``. ``value`` is the NumPy array; ``path`` is
    ``"<layer name>/<weight name>"`` for a layer's weight (``"dense/kernel"``),
    else the name. A Variable converts to an array wherever NumPy expects one,
    so ``np.matmul(inputs, self.w)`` works in a custom layer.

    While a ``GradientTape`` records, NumPy calls and operators on a trainable
    Variable are traced: it becomes a leaf of the innermost recording tape (one
    leaf per tape), so the tape can differentiate with respect to it. With no
    tape recording they run on ``value`` directly.

    Args:
        initializer: an initializer (name, object or ``fn(shape, dtype)``),
            which needs ``shape``; or the initial value (array-like).
        shape: the shape, for an initializer.
        dtype: the dtype; by default float32 for an initializer, else the
            value's (float32 and int32 for Python numbers, as Keras).
        trainable: whether training updates it.
        name: the name (no ``/`` unless a ``path`` is given); by default ``variable``, ``variable_1``...
        regularizer: a ``Regularizer`` whose penalty training adds.
        constraint: a ``Constraint`` applied after each update.
        path: the path; by default the name.

    Example:
        >>> import numpy as np
        >>> v = Variable("ones", shape=(2,), name="counts")
        >>> v.assign_add(np.array([1.0, 2.0]))
        array([2., 3.], dtype=float32)
        >>> Variable(np.zeros((2, 3))).shape
        (2, 3)
    """

    # A pending value (engine.network.weight_draws) is kept in slots, not in an object of its own: a deep graph then
    # holds fewer objects for the garbage collector. ``_pending`` is its initializer, None once drawn.
    __slots__ = ("_dtype", "_made_trainable", "_pending", "_place", "_shape", "_value", "constraint", "name", "path",
                 "regularizer", "trainable")

    def __init__(self, initializer, shape=None, dtype=None, trainable=True, name=None, regularizer=None,
                 constraint=None, *, path=None):
        name = unique_name("variable") if name is None else name
        if not isinstance(name, str) or ("/" in name and path is None):  # a layer's weight passes its path
            raise ValueError(f"Argument `name` must be a string and cannot contain character `/`. Received: "
                             f"name={name!r}. Name the variable without '/'; its path may hold one (path=...).")
        if isinstance(initializer, PendingDraw):  # a layer's weight, drawn on first use (engine.network.weight_draws)
            self._value, self._pending = None, initializer.initializer
            self._shape, self._dtype, self._place = initializer.shape, initializer.dtype, initializer.place
        else:
            self._value, self._pending = _initial_value(initializer, shape, dtype, name), None
        self.name = name
        self.path = name if path is None else path
        self.trainable = bool(trainable)
        # Whether it was made trainable: freezing its layer sets ``trainable`` (as Keras), unfreezing restores it.
        self._made_trainable = self.trainable
        self.regularizer = regularizer
        self.constraint = constraint

    @classmethod
    def drawn_on_first_use(cls, initializer, shape, dtype, place, name, path, trainable=True, regularizer=None,
                           constraint=None):
        """A layer's weight whose values are drawn on first use, as ``Variable(PendingDraw(initializer, shape,
        dtype, place), ...)`` (see ``engine.network.weight_draws``), made without the checks a user's call needs.

        Args:
            initializer: a built-in initializer.
            shape: the shape, a tuple of ints.
            dtype: the NumPy dtype.
            place: the seed of the draw, or None to call ``initializer``.
            name: the weight's name.
            path: ``"<layer name>/<name>"``.
            trainable: as for the constructor.
            regularizer: as for the constructor.
            constraint: as for the constructor.

        Example:
            >>> import numpy as np
            >>> from engine.network.initializers import Ones
            >>> v = Variable.drawn_on_first_use(Ones(), (2,), np.dtype("float32"), None, name="w", path="l/w")
            >>> v.shape, v.numpy()
            ((2,), array([1., 1.], dtype=float32))
        """
        variable = _new(cls)
        variable._value, variable._pending, variable._shape, variable._dtype = None, initializer, shape, dtype
        variable._place, variable.name, variable.path = place, name, path
        variable.trainable = variable._made_trainable = trainable is True or bool(trainable)
        variable.regularizer, variable.constraint = regularizer, constraint
        return variable

    @property
    def value(self):
        """The NumPy array; a layer's weight draws it on first use (``engine.network.weight_draws``)."""
        value = self._value
        if value is None:
            value = self._value = draw(self._pending, self._shape, self._dtype, self._place)
            self._pending = None
        return value

    @value.setter
    def value(self, value):
        self._value, self._pending = value, None

    @property
    def shape(self):
        """The value's shape (known before a pending value is drawn)."""
        return self._shape if self._value is None else self._value.shape

    @property
    def dtype(self):
        """The value's NumPy dtype (known before a pending value is drawn)."""
        return self._dtype if self._value is None else self._value.dtype

    def numpy(self):
        """The value, the NumPy array itself (not a copy), as Keras' ``Variable.numpy()``.

        Example:
            >>> Variable("zeros", shape=(2,)).numpy()
            array([0., 0.], dtype=float32)
        """
        return self.value

    def assign(self, value):
        """Replaces the value, keeping shape and dtype; returns the new value.

        Args:
            value: array-like of the variable's shape; cast to its dtype and copied.

        Raises:
            ValueError: a value of another shape.

        Example:
            >>> v = Variable("zeros", shape=(2,))
            >>> v.assign([1, 2])
            array([1., 2.], dtype=float32)
        """
        value = np.asarray(value)
        if value.shape != self.shape:
            self._refuse(value)
        self.value = value.astype(self.dtype, copy=True)
        return self.value

    def assign_loaded(self, array):
        """Takes ``array``, read from a file into memory of its own, as the value:
        as it is when it already has the variable's dtype and shape in C order
        (a load then touches each weight once), else cast and copied by ``assign``.

        Args:
            array: a NumPy array nothing else refers to.

        Raises:
            ValueError: an array of another shape.

        Example:
            >>> import numpy as np
            >>> v = Variable("zeros", shape=(2,))
            >>> read = np.array([1.0, 2.0], dtype="float32")
            >>> v.assign_loaded(read) is read
            True
        """
        if array.dtype == self.dtype and array.shape == self.shape and array.flags.c_contiguous:
            self.value = array
            return array
        return self.assign(array)

    def assign_add(self, value):
        """Adds ``value`` (broadcast to the variable's shape) to the value; returns the new value.

        Args:
            value: array-like that broadcasts to the variable's shape.

        Example:
            >>> Variable("ones", shape=(2,)).assign_add(1.0)
            array([2., 2.], dtype=float32)
        """
        return self.assign(self.value + self._broadcastable(value))

    def assign_sub(self, value):
        """Subtracts ``value`` (broadcast to the variable's shape) from the value; returns the new value.

        Args:
            value: array-like that broadcasts to the variable's shape.

        Example:
            >>> Variable("ones", shape=(2,)).assign_sub([0.5, 1.0])
            array([0.5, 0. ], dtype=float32)
        """
        return self.assign(self.value - self._broadcastable(value))

    def _broadcastable(self, value):
        value = np.asarray(value)
        try:
            if np.broadcast_shapes(value.shape, self.value.shape) == self.value.shape:
                return value
        except ValueError:
            pass
        self._refuse(value)

    def _refuse(self, value):
        raise ValueError(
            f"Cannot assign a value of shape {value.shape} to variable {self.path!r} of shape "
            f"{self.shape}: the shape of the target variable and the shape of the target value in "
            "`variable.assign(value)` must match."
        )

    def __array__(self, dtype=None, copy=None):
        if dtype is None or np.dtype(dtype) == self.value.dtype:
            return self.value
        return self.value.astype(dtype)

    def __repr__(self):
        return f"<Variable path={self.path}, shape={self.shape}, dtype={self.dtype.name}>"

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        values = []
        for x in inputs:
            if type(x) is _traced.Traced:
                return _traced._trace_ufunc(ufunc, method, inputs, kwargs)
            values.append(x.value if isinstance(x, Variable) else x)
        if active.TAPES.get():
            return _traced._trace_ufunc(ufunc, method, inputs, kwargs)
        if "out" in kwargs:
            kwargs["out"] = tuple(x.value if isinstance(x, Variable) else x for x in kwargs["out"])
        return getattr(ufunc, method)(*values, **kwargs) if method != "__call__" else ufunc(*values, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if active.TAPES.get() or _traced.Traced in types:
            return _traced._trace_function(func, args, kwargs)
        return func(*map(_values, args), **{key: _values(value) for key, value in kwargs.items()})

    def __getitem__(self, key):
        if active.TAPES.get():
            return _traced._trace_function(operator.getitem, (self, key), {})
        return self.value[key]


_new = object.__new__


def _initial_value(initializer, shape, dtype, name):
    """The first value of variable ``name``: from an initializer and a fully defined
    shape, or from an array-like value (cast to ``dtype`` when given)."""
    from engine.network import initializers

    if isinstance(initializer, str):
        initializer = initializers.get(initializer)
    if callable(initializer) and not isinstance(initializer, Variable):
        if shape is None:
            raise ValueError(f"When creating a Variable from an initializer, the `shape` argument should be "
                             f"specified. Received: initializer={initializer!r} and shape=None for variable "
                             f"{name!r}.")
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if any(d is None or not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
            raise ValueError(f"Shapes used to initialize variables must be fully-defined (no `None` dimensions). "
                             f"Received: shape={shape} for variable path='{name}'.")
        return np.asarray(initializer(shape, dtype=dtype or "float32"))
    value = np.asarray(initializer)
    if value.dtype.kind not in "biuf":
        raise ValueError(f"Variable {name!r} needs a numeric value or an initializer, received {initializer!r} "
                         f"(dtype {value.dtype}).")
    if dtype is not None:
        return value.astype(dtype)
    if not isinstance(initializer, (np.ndarray, np.generic)):  # Python numbers: Keras' float32 and int32
        return value.astype({"f": "float32", "i": "int32"}.get(value.dtype.kind, value.dtype))
    return value


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
            if active.TAPES.get():
                return _traced._trace_ufunc(ufunc, "__call__", (other, self), {})
            return fn(other, self.value)
    else:
        def op(self, other):
            if active.TAPES.get():
                return _traced._trace_ufunc(ufunc, "__call__", (self, other), {})
            return fn(self.value, other)
    return op


def _unary(fn, ufunc):
    def op(self):
        if active.TAPES.get():
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


_traced.lend_variable_type(Variable)  # engine.autodiff.traced reads a Variable as its value
