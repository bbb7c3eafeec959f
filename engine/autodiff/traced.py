"""The traced array: an ndarray recorded on a tape, so that plain NumPy code differentiates.

A ``Traced`` is what a custom layer's ``call`` receives while a ``GradientTape``
records. NumPy hands every call on it to ``__array_ufunc__`` or
``__array_function__`` (NEP 13, NEP 18); those run the real NumPy function on
the raw values, so results keep NumPy's own dtypes (a Python scalar never turns
float32 into float64), and record one step on the tape with the function's
derivative rule from ``rules.py``.

A traced value is immutable: in-place operators return a new ``Traced`` (of the
left operand's shape and dtype, as NumPy's in-place operators keep them). While
its tape records (inside the tape's ``with`` block), everything that would turn
it back into a plain array or a Python number, and so silently lose its
gradient, raises ``TracingError`` saying what to write instead; once the block
has ended, ``np.asarray``, ``float`` and ``.numpy()`` give its value.

Values nest, one level per tape: while two tapes record, a value of the inner
tape holds the outer tape's value of the same step (a ``Traced`` of a
``Traced``), so each tape differentiates what it watches, and a gradient the
inner tape computes while the outer one records is itself traced on the outer
one (second derivatives). A call is recorded on the innermost tape among its
arguments (the tape entered last); values of outer tapes are constants at that
level and record themselves on their own tapes as the call runs on them.
"""

import operator

import numpy as np

from engine.autodiff import active
from engine.autodiff.rules import FUNCTIONS, NON_DIFFERENTIABLE, UFUNCS, TracingError

# keyword arguments of a ufunc that leave its derivative unchanged
_UFUNC_OPTIONS = frozenset({"dtype", "casting", "order"})
# functions whose first argument is a sequence of arrays, each of which may be traced
_TAKES_A_SEQUENCE = frozenset({np.concatenate, np.stack})

_VARIABLE_TYPES = ()  # (Variable,): lent by engine.network.variable, which imports this module


def lend_variable_type(cls):
    """Makes instances of ``cls`` (engine.network.variable's Variable) read as their value here, and watched on tapes.

    Args:
        cls: the Variable class, which calls this when it is defined.

    Example:
        >>> from engine import Variable
        >>> import engine.autodiff.traced as traced
        >>> traced._VARIABLE_TYPES == (Variable,)
        True
    """
    global _VARIABLE_TYPES
    _VARIABLE_TYPES = (cls,)


class Traced:
    """An ndarray on a ``GradientTape``: the value of one recorded step.

    ``value`` is the array (a read-only view); ``shape``, ``dtype``, indexing,
    operators and the NumPy functions listed in ``engine/autodiff/rules.py``
    work as on an ndarray and are recorded. Comparisons return plain boolean
    arrays. Make one with ``GradientTape.watch``.

    Example:
        >>> import numpy as np
        >>> from engine.autodiff import GradientTape
        >>> with GradientTape() as tape:
        ...     x = tape.watch(np.array([1.0, 2.0], "float32"))
        ...     y = np.sum(x * x)
        >>> tape.gradient(y, x)
        array([2., 4.], dtype=float32)
    """

    __slots__ = ("_slot", "_tape", "_value")

    def __init__(self, value, tape, slot: int):
        self._value, self._tape, self._slot = value, tape, slot

    @property
    def value(self):
        """The array, as a read-only view; reading it takes no gradient along (on any tape)."""
        value = self._value
        while type(value) is Traced:
            value = value._value
        if type(value) is not np.ndarray:
            return value
        view = value.view()
        view.setflags(write=False)
        return view

    def numpy(self):
        """The value as a NumPy array (a NumPy scalar for a 0-d value), without its gradient, as ``tf.Tensor.numpy``.

        Example:
            >>> from engine.autodiff import GradientTape
            >>> with GradientTape() as tape:
            ...     x = tape.watch(np.array([1.0, 2.0], "float32"))
            ...     loss = np.sum(x * x)
            >>> loss.numpy()
            np.float32(5.0)
        """
        return np.array(self.value)[()]

    shape = property(lambda self: np.shape(self._value))
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: np.ndim(self._value))
    size = property(lambda self: np.size(self._value))
    T = property(lambda self: _trace_function(np.transpose, (self,), {}))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _trace_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _trace_function(func, args, kwargs)

    def __len__(self) -> int:
        return len(self._value)

    def __iter__(self):
        return (self[i] for i in range(len(self._value)))

    def __getitem__(self, key):
        return _trace_function(operator.getitem, (self, key), {})

    @property
    def strides(self):
        raise TracingError("ndarray.strides", hint=(
            "stride tricks (np.lib.stride_tricks.as_strided, sliding windows) view memory directly, so a traced "
            "array has no strides. Write the computation with indexing, reshape and einsum, or give the layer a "
            "hand-written `forward`/`backward`"))

    def __setitem__(self, key, value):
        raise TracingError("item assignment (x[...] = value)", hint=(
            "a traced array cannot change in place. Build a new array instead: np.where(mask, value, x) to replace "
            "entries, or np.concatenate / np.stack of the pieces"))

    def __array__(self, dtype=None, copy=None):
        if not _recorded(self):  # its tape's block has ended: a plain value now (metrics, logs)
            return np.asarray(self._value, dtype)
        raise TracingError("numpy.asarray", hint=(
            "converting a traced array to a plain ndarray (np.asarray, np.array, or a function NumPy cannot dispatch) "
            "would silently drop its gradient. Keep using NumPy functions on it, build arrays from traced pieces with "
            "np.stack or np.concatenate, or read `x.value` for the numbers without a gradient"))

    def _to_number(self, convert):
        if not _recorded(self):  # its tape's block has ended: a plain value now
            return convert(self._value)
        raise TracingError("converting a traced array to a Python number (float(), int(), bool(), `if x:`)", hint=(
            "the number would carry no gradient, and a branch on it would not be differentiable. Write "
            "`float(x.value)` to read the number without a gradient, and np.where(condition, a, b) to choose "
            "values with one"))

    def __float__(self):
        return self._to_number(float)

    def __int__(self):
        return self._to_number(int)

    def __bool__(self):
        return self._to_number(bool)

    def __index__(self):
        return self._to_number(operator.index)

    def __complex__(self):
        return self._to_number(complex)

    def __repr__(self) -> str:
        return f"Traced({self.value!r})"

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


def _recorded(x) -> bool:
    """Whether ``x``'s tape records in this context: it is live and inside its ``with`` block."""
    tape = x._tape
    return tape._ops is not None and any(t is tape for t in active.TAPES.get())


def _ufunc_operator(ufunc, reflected=False):
    if reflected:
        return lambda self, other: _trace_ufunc(ufunc, "__call__", (other, self), {})
    return lambda self, other: _trace_ufunc(ufunc, "__call__", (self, other), {})


def _in_place_operator(ufunc):
    """``x op= y``: a new Traced, bound to ``x``'s name; like NumPy's in-place operators it keeps x's shape and dtype."""
    def op(self, other):
        result = _trace_ufunc(ufunc, "__call__", (self, other), {})
        if np.shape(result) != self.shape:
            raise ValueError(f"non-broadcastable output operand with shape {self.shape} doesn't match the broadcast "
                             f"shape {np.shape(result)}")
        return result if result.dtype == self.dtype else _trace_function(np.astype, (result, self.dtype), {})
    return op


def _method(func, name):
    def method(self, *args, **kwargs):
        return _trace_function(func, (self, *args), kwargs)
    method.__name__ = name
    method.__doc__ = f"``np.{func.__name__}(x, ...)``, recorded on the tape."
    return method


for _name, _ufunc in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("truediv", np.divide),
                      ("floordiv", np.floor_divide), ("mod", np.remainder), ("pow", np.power), ("matmul", np.matmul)]:
    setattr(Traced, f"__{_name}__", _ufunc_operator(_ufunc))
    setattr(Traced, f"__r{_name}__", _ufunc_operator(_ufunc, reflected=True))
    setattr(Traced, f"__i{_name}__", _in_place_operator(_ufunc))
for _name, _ufunc in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                      ("eq", np.equal), ("ne", np.not_equal)]:
    setattr(Traced, f"__{_name}__", _ufunc_operator(_ufunc))
for _name, _ufunc in [("neg", np.negative), ("pos", np.positive), ("abs", np.absolute)]:
    setattr(Traced, f"__{_name}__", lambda self, ufunc=_ufunc: _trace_ufunc(ufunc, "__call__", (self,), {}))
for _name, _func in [("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min), ("var", np.var),
                     ("std", np.std), ("prod", np.prod), ("cumsum", np.cumsum), ("squeeze", np.squeeze),
                     ("swapaxes", np.swapaxes), ("dot", np.dot), ("take", np.take),
                     ("flatten", np.ravel), ("ravel", np.ravel), ("copy", np.copy), ("astype", np.astype),
                     ("argmax", np.argmax), ("argmin", np.argmin)]:
    setattr(Traced, _name, _method(_func, _name))
Traced.__hash__ = None  # like ndarray: == is elementwise


def _reshape(self, *shape, order="C"):
    return _trace_function(np.reshape, (self, shape[0] if len(shape) == 1 else shape), {"order": order})


def _transpose(self, *axes):
    return _trace_function(np.transpose, (self, axes[0] if len(axes) == 1 else axes or None), {})


def _clip(self, min=None, max=None):
    return _trace_function(np.clip, (self, min, max), {})


Traced.reshape, Traced.transpose, Traced.clip = _reshape, _transpose, _clip


# ---------------------------------------------------------------- dispatch


class _Deeper(Exception):
    """An argument is traced on a tape inside the call's tape: the call is resolved again on that tape."""

    def __init__(self, tape):
        super().__init__()
        self.tape = tape


def _resolve(x, tape, name):
    """``(value, slot on the tape or None, the call's tape)`` of one argument of a call on ``tape``.

    Raises ``_Deeper`` when ``x`` belongs to a tape inside ``tape``.
    """
    kind = type(x)
    if kind is Traced:
        if x._tape._ops is None:  # its tape was released by gradient(): a constant now
            return x._value, None, tape
        if tape is None or x._tape is tape:
            return x._value, x._slot, x._tape
        if x._tape._level < tape._level:  # a value of an outer tape: a constant here, recorded on its own tape
            return x, None, tape
        raise _Deeper(x._tape)
    if kind is np.ndarray or kind is int or kind is float or not isinstance(x, _VARIABLE_TYPES):
        return x, None, tape
    leaf = _variable_leaf(x)
    return (x.value, None, tape) if leaf is None else _resolve(leaf, tape, name)


def _variable_leaf(variable):
    """The leaf of ``variable`` on the innermost recording tape that watches it, or None (a constant)."""
    for tape in reversed(active.TAPES.get()):
        leaf = tape._variable_leaf(variable)
        if leaf is not None:
            return leaf
    return None


def _function_name(func) -> str:
    if isinstance(func, str):
        return func
    if isinstance(func, np.ufunc):
        return f"numpy.{func.__name__}"
    module = func.__module__ or "numpy"
    return f"{'numpy' if module.startswith('numpy._') else module}.{func.__name__}"


def _keywords(func, kwargs):
    """Raw values of keyword arguments; a traced one would get no gradient, so that is refused."""
    for key, value in kwargs.items():
        if type(value) is Traced and value._tape._ops is not None:
            raise TracingError(_function_name(func), hint=(
                f"its keyword argument {key}= is traced, and gradients only flow through positional arguments; "
                f"pass it positionally"))
        if isinstance(value, (tuple, Traced)) or isinstance(value, _VARIABLE_TYPES):
            return {key: _plain(value) for key, value in kwargs.items()}
    return kwargs


def untraced(x):
    """The array of a Traced value (no gradient taken along); anything else as it is.

    Example:
        >>> untraced(3.0)
        3.0
    """
    return x.value if isinstance(x, Traced) else x


def _plain(x):
    if type(x) is tuple:
        return tuple(_plain(item) for item in x)
    return x.value if isinstance(x, Traced) or isinstance(x, _VARIABLE_TYPES) else x


def _refuse_options(func, kwargs, allowed=None):
    """Refuses the keyword arguments that change what to differentiate: out=, where=, and for a ufunc all but
    ``allowed``."""
    for key, value in kwargs.items():
        if key == "out" and any(v is not None for v in (value if type(value) is tuple else (value,))):
            raise TracingError(_function_name(func), hint=(
                "it would write the result into an existing array (out=, or an in-place operator such as += on a "
                "plain ndarray); write `x = x + y` instead of `x += y`"))
        if (key == "where" and value is not True) or (allowed is not None and key not in allowed | {"out"}):
            raise TracingError(_function_name(func), hint=f"its keyword argument {key}= is not supported on "
                                                          f"traced arrays")


def _innermost(resolve, args, func):
    """``resolve(args, tape, func)`` on the innermost tape among the arguments: tried with the first tape met,
    again on a tape inside it when an argument belongs to one."""
    tape = None
    while True:
        try:
            return resolve(args, tape, func)
        except _Deeper as deeper:
            tape = deeper.tape


def _ufunc_arguments(inputs, tape, ufunc):
    values, slots = [], []
    for x in inputs:
        if type(x) is Traced and (x._tape is tape or tape is None and x._tape._ops is not None):
            tape = x._tape
            values.append(x._value)
            slots.append(x._slot)
            continue
        value, slot, tape = _resolve(x, tape, ufunc)
        values.append(value)
        slots.append(slot)
    return tape, values, slots


def _trace_ufunc(ufunc, method, inputs, kwargs):
    """Runs ``ufunc`` on the values of ``inputs`` and records it when any of them is traced."""
    tape, values, slots = _innermost(_ufunc_arguments, inputs, ufunc)
    if tape is None:
        return getattr(ufunc, method)(*values, **_keywords(ufunc, kwargs))
    if method != "__call__":
        raise TracingError(f"numpy.{ufunc.__name__}.{method}", hint=(
            "ufunc methods (reduce, accumulate, outer, at, reduceat) have no derivative rule. Use np.sum / np.prod "
            "/ np.max for reduce, broadcasting (a[:, None] * b) for outer, or give the layer a hand-written "
            "`forward`/`backward`"))
    if kwargs:
        _refuse_options(ufunc, kwargs, _UFUNC_OPTIONS)
    if ufunc in NON_DIFFERENTIABLE:
        return ufunc(*values, **kwargs)
    rule = UFUNCS.get(ufunc)
    if rule is None:
        raise TracingError(f"numpy.{ufunc.__name__}")
    ans = ufunc(*values, **kwargs) if kwargs else ufunc(*values)
    if ans.dtype.kind != "f":
        return ans
    return tape._record(ans, slots, rule, (ans, *values), ufunc)  # the tape calls rule[i](g, ans, *values)


def _trace_function(func, args, kwargs):
    """Runs the NumPy function ``func`` on raw values and records it when any argument is traced.

    Positional arguments may be traced, and so may the arrays in the sequence
    that ``np.concatenate`` and ``np.stack`` take.
    """
    tape, values, slots = _innermost(_function_arguments, args, func)
    kwargs = _keywords(func, kwargs) if kwargs else kwargs
    if tape is None or func in NON_DIFFERENTIABLE:
        return func(*values, **kwargs)
    rule = FUNCTIONS.get(func)
    if rule is None:
        raise TracingError(_function_name(func))
    if "out" in kwargs or "where" in kwargs:
        _refuse_options(func, kwargs)
    ans = func(*values, **kwargs)
    if type(ans) is list or type(ans) is tuple:  # several results (np.split)
        if not any(_dtype(a).kind == "f" for a in ans):
            return ans
        return tape._record_many(ans, slots, rule(ans, *values, **kwargs), func)
    if ans.dtype.kind != "f":
        return ans
    return tape._record(ans, slots, rule(ans, *values, **kwargs), None, func)


def _dtype(x):
    return x.dtype if type(x) is Traced else np.result_type(x)


def _function_arguments(args, tape, func):
    values, slots = [], []
    sequence = func in _TAKES_A_SEQUENCE
    for arg in args:
        if type(arg) is Traced and (arg._tape is tape or tape is None and arg._tape._ops is not None):
            tape = arg._tape
            values.append(arg._value)
            slots.append(arg._slot)
        elif sequence and type(arg) in (list, tuple):
            items = []
            for x in arg:
                value, slot, tape = _resolve(x, tape, func)
                items.append(value)
                slots.append(slot)
            values.append(items)
        else:
            value, slot, tape = _resolve(arg, tape, func)
            values.append(value)
            slots.append(slot)
    return tape, values, slots

