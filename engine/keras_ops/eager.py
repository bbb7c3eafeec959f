"""Running one ``keras.ops`` function on arrays or traced values, with Keras' dtypes.

NumPy and Keras (JAX backend) agree on values but not on every dtype: Keras
computes Python numbers and lists as float32 and int32 and never promotes to
64 bits on its own, where NumPy makes float64 and int64. So a float64 result
none of whose array arguments was float64 becomes float32, and an int64 result
none of whose array arguments was int64 becomes int32 (NumPy's own float64
arrays stay float64, which gradient checks need). A function given an explicit
``dtype`` keeps it.
"""

import inspect

import numpy as np

from engine import tree
from engine.autodiff import Traced, untraced

_NARROWED = {np.dtype("float64"): np.dtype("float32"), np.dtype("int64"): np.dtype("int32")}
_AXIS_ARGUMENTS = ("axis", "axes")


def bind(row, args, kwargs) -> inspect.BoundArguments:
    """The call's arguments bound to the parameters of ``row``'s function, with
    ``axis`` lists made tuples (Keras takes both, NumPy only tuples).

    Raises:
        TypeError: arguments the function does not take, naming it.
    """
    signature = inspect.signature(row.implementation)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise TypeError(f"ops.{row.name}{signature}: {error}.") from None
    for name in _AXIS_ARGUMENTS:
        if isinstance(bound.arguments.get(name), list):
            bound.arguments[name] = tuple(bound.arguments[name])
    return bound


def evaluate(row, bound: inspect.BoundArguments):
    """``row``'s function on concrete arguments (arrays, numbers, traced values):
    differentiable rows compute on traced values as they are, the others on their
    plain arrays; results follow Keras' dtypes (see the module docstring)."""
    args, kwargs = bound.args, bound.kwargs
    if not row.differentiable:
        args, kwargs = tree.map_structure(untraced, (args, kwargs))
    result = row.implementation(*args, **kwargs)
    if not row.returns_arrays:
        return result
    if bound.arguments.get("dtype") is not None:
        return tree.map_structure(_as_array, result)
    strong = {np.dtype(leaf.dtype) for leaf in tree.flatten((args, kwargs)) if _is_array(leaf)}
    return tree.map_structure(lambda out: _keras_dtype(out, strong), result)


def _is_array(value):
    return isinstance(value, (np.ndarray, np.generic, Traced))


def _as_array(value):
    return value if isinstance(value, Traced) else np.asarray(value)


def _keras_dtype(out, strong_dtypes):
    """``out`` with a 64-bit dtype narrowed when no array argument had that dtype."""
    out = _as_array(out)
    narrow = _NARROWED.get(out.dtype)
    if narrow is None or out.dtype in strong_dtypes:
        return out
    return np.astype(out, narrow)


def keras_dtype(value):
    """``value`` as Keras' ``convert_to_tensor`` makes it: Python floats and
    lists of them float32, Python ints int32; arrays keep their dtype.

    Example:
        >>> keras_dtype(1.0).dtype, keras_dtype([1, 2]).dtype
        (dtype('float32'), dtype('int32'))
    """
    if _is_array(value):
        return _as_array(value)
    return _keras_dtype(np.asarray(value), set())
