"""``keras.ops.numpy`` functions that are more than one NumPy call under Keras' signature.

Several take Python builtins' names (``sum``, ``max``, ``round``...), as in
Keras; the module itself uses ``np.`` and ``builtins.`` only. Each computes
with NumPy functions the tracer differentiates (engine/autodiff/
rules.py), so the differentiable ones train: ``tile``, ``repeat`` and ``sort``
gather with ``np.take``; ``tril``, ``triu`` mask with ``np.where``.
"""

import builtins

import numpy as np

from engine.autodiff import untraced
from engine.network.keras_tensor import KerasTensor


def elementwise(ufunc, name, arity):
    """``ufunc`` under Keras' signature: ``name(x)`` or ``name(x1, x2)``."""
    if arity == 1:
        def function(x):
            return ufunc(x)
    else:
        def function(x1, x2):
            return ufunc(x1, x2)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``np.{ufunc.__name__}`` of the arguments, elementwise."
    return function


def mean(x, axis=None, keepdims=False):
    """The mean over ``axis`` (all axes when None); integers give float32."""
    return np.mean(x, axis=axis, keepdims=keepdims)


def sum(x, axis=None, keepdims=False):  # noqa: A001 (Keras' name)
    """The sum over ``axis`` (all axes when None)."""
    return np.sum(x, axis=axis, keepdims=keepdims)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    """The largest entry over ``axis``, at least ``initial`` when given."""
    return np.max(x, axis=axis, keepdims=keepdims, **({} if initial is None else {"initial": initial}))


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    """The smallest entry over ``axis``, at most ``initial`` when given."""
    return np.min(x, axis=axis, keepdims=keepdims, **({} if initial is None else {"initial": initial}))


def prod(x, axis=None, keepdims=False, dtype=None):
    """The product over ``axis``."""
    return np.prod(x, axis=axis, keepdims=keepdims, dtype=dtype)


def var(x, axis=None, keepdims=False):
    """The (biased) variance over ``axis``."""
    return np.var(x, axis=axis, keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    """The (biased) standard deviation over ``axis``."""
    return np.std(x, axis=axis, keepdims=keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    """Whether any entry over ``axis`` is true."""
    return np.any(x, axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    """Whether every entry over ``axis`` is true."""
    return np.all(x, axis=axis, keepdims=keepdims)


def argmax(x, axis=None, keepdims=False):
    """The index of the largest entry over ``axis`` (of the flattened array when None)."""
    return np.argmax(x, axis=axis, keepdims=keepdims)


def argmin(x, axis=None, keepdims=False):
    """The index of the smallest entry over ``axis`` (of the flattened array when None)."""
    return np.argmin(x, axis=axis, keepdims=keepdims)


def count_nonzero(x, axis=None):
    """How many entries over ``axis`` are not zero."""
    return np.count_nonzero(x, axis=axis)


def cumsum(x, axis=None, dtype=None):
    """Cumulative sums along ``axis`` (of the flattened array when None)."""
    return np.cumsum(x, axis=axis, dtype=dtype)


def matmul(x1, x2):
    """The matrix product, batched over leading axes."""
    return np.matmul(x1, x2)


def tensordot(x1, x2, axes=2):
    """Sums the products over ``axes`` (a count of trailing/leading axes, or two lists)."""
    return np.tensordot(x1, x2, axes)


def einsum(subscripts, *operands, **kwargs):
    """Einstein summation, ``einsum("ij,jk->ik", a, b)``."""
    return np.einsum(subscripts, *operands, **kwargs)


def dot(x1, x2):
    """The dot product (matrix product for 2-D arguments)."""
    return np.dot(x1, x2)


def outer(x1, x2):
    """The outer product of the flattened arguments."""
    return np.outer(x1, x2)


def transpose(x, axes=None):
    """``x`` with its axes permuted (reversed when ``axes`` is None)."""
    return np.transpose(x, axes)


def reshape(x, newshape):
    """``x`` in the shape ``newshape`` (one entry may be -1)."""
    return np.reshape(x, newshape)


def ravel(x):
    """``x`` flattened."""
    return np.ravel(x)


def expand_dims(x, axis):
    """``x`` with new axes of length 1 at ``axis``."""
    return np.expand_dims(x, axis)


def squeeze(x, axis=None):
    """``x`` without its axes of length 1 (those of ``axis``, or all)."""
    return np.squeeze(x, axis)


def swapaxes(x, axis1, axis2):
    """``x`` with two axes exchanged."""
    return np.swapaxes(x, axis1, axis2)


def moveaxis(x, source, destination):
    """``x`` with axes moved from ``source`` to ``destination``."""
    return np.moveaxis(x, source, destination)


def flip(x, axis=None):
    """``x`` reversed along ``axis`` (all axes when None)."""
    return np.flip(x, axis)


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape``."""
    return np.broadcast_to(x, shape)


def concatenate(xs, axis=0):
    """The arrays ``xs`` joined along ``axis``."""
    return np.concatenate(list(xs), axis=axis)


def stack(x, axis=0):
    """The arrays ``x`` stacked along a new ``axis``."""
    return np.stack(list(x), axis=axis)


def hstack(xs):
    """The arrays ``xs`` joined along axis 1 (axis 0 for 1-D arrays)."""
    return np.concatenate(list(xs), axis=1 if np.ndim(xs[0]) > 1 else 0)


def vstack(xs):
    """The arrays ``xs`` joined along axis 0, 1-D arrays as rows."""
    return np.concatenate([np.reshape(x, (1, -1)) if np.ndim(x) == 1 else x for x in xs], axis=0)


def split(x, indices_or_sections, axis=0):
    """``x`` cut along ``axis`` into equal sections, or at the given indices."""
    return list(np.split(x, indices_or_sections, axis))


def pad(x, pad_width, mode="constant", constant_values=None):
    """``x`` padded by ``pad_width`` (``[(before, after)]`` per axis)."""
    if constant_values is not None and mode != "constant":
        raise ValueError(f"ops.pad takes constant_values only with mode='constant', received mode={mode!r}.")
    return np.pad(x, pad_width, mode, **({} if constant_values is None else {"constant_values": constant_values}))


def clip(x, x_min, x_max):
    """``x`` with entries below ``x_min`` raised to it and above ``x_max`` lowered to it."""
    return np.clip(x, x_min, x_max)


def where(condition, x1=None, x2=None):
    """``x1`` where ``condition`` holds, else ``x2``; with neither, the indices of the true entries."""
    if x1 is None and x2 is None:
        return np.nonzero(condition)
    if x1 is None or x2 is None:
        raise ValueError("ops.where expects both x1 and x2, or neither (to get the indices of the true entries); "
                         f"received x1={x1!r} and x2={x2!r}.")
    return np.where(condition, x1, x2)


def round(x, decimals=0):  # noqa: A001
    """``x`` rounded to ``decimals`` (halves to even)."""
    return np.round(x, decimals)


def take(x, indices, axis=None):
    """The entries of ``x`` at ``indices`` along ``axis`` (of the flattened array when None)."""
    return np.take(x, np.asarray(indices), axis=axis)


def take_along_axis(x, indices, axis=None):
    """The entries of ``x`` at ``indices``, matched along ``axis``."""
    return np.take_along_axis(x, np.asarray(indices), axis=axis)


def tile(x, repeats):
    """``x`` repeated ``repeats`` times along each axis (``np.tile``)."""
    repeats = (repeats,) if np.ndim(repeats) == 0 else tuple(repeats)
    rank = builtins.max(np.ndim(x), len(repeats))
    x = np.reshape(x, (1,) * (rank - np.ndim(x)) + np.shape(x))
    for axis, count in enumerate((1,) * (rank - len(repeats)) + repeats):
        if count != 1:
            x = np.take(x, np.tile(np.arange(np.shape(x)[axis]), count), axis=axis)
    return x


def repeat(x, repeats, axis=None):
    """Each entry of ``x`` repeated ``repeats`` times along ``axis`` (of the flattened array when None)."""
    if axis is None:
        x, axis = np.ravel(x), 0
    return np.take(x, np.repeat(np.arange(np.shape(x)[axis]), repeats), axis=axis)


def sort(x, axis=-1):
    """``x`` sorted along ``axis``."""
    return np.take_along_axis(x, np.argsort(untraced(x), axis=axis, kind="stable"), axis=axis)


def argsort(x, axis=-1):
    """The indices that sort ``x`` along ``axis`` (stable)."""
    return np.argsort(x, axis=axis, kind="stable")


def tril(x, k=0):
    """``x`` with the entries above the ``k``-th diagonal zeroed."""
    rows, columns = np.shape(x)[-2:]
    return np.where(np.tri(rows, columns, k, bool), x, 0)


def triu(x, k=0):
    """``x`` with the entries below the ``k``-th diagonal zeroed."""
    rows, columns = np.shape(x)[-2:]
    return np.where(np.tri(rows, columns, k - 1, bool), 0, x)


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in ``[start, stop)``; int32 for integers, float32 for floats."""
    return np.arange(start, stop, 1 if step is None else step, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    return np.linspace(start, stop, num, endpoint, retstep, dtype, axis)


def zeros(shape, dtype=None):
    """An array of zeros (float32 by default)."""
    return np.zeros(shape, dtype or "float32")


def ones(shape, dtype=None):
    """An array of ones (float32 by default)."""
    return np.ones(shape, dtype or "float32")


def full(shape, fill_value, dtype=None):
    """An array of ``fill_value`` (float32 by default)."""
    return np.full(shape, fill_value, dtype or "float32")


def eye(N, M=None, k=0, dtype=None):  # noqa: N803 (Keras' names)
    """An ``N`` by ``M`` array with ones on the ``k``-th diagonal (float32 by default)."""
    return np.eye(N, M, k, dtype or "float32")


def zeros_like(x, dtype=None):
    """Zeros of the shape (and dtype) of ``x``."""
    return np.zeros_like(x, dtype=dtype)


def ones_like(x, dtype=None):
    """Ones of the shape (and dtype) of ``x``."""
    return np.ones_like(x, dtype=dtype)


def full_like(x, fill_value, dtype=None):
    """``fill_value`` in the shape (and dtype) of ``x``."""
    return np.full_like(x, fill_value, dtype=dtype)


def size(x):
    """The number of entries of ``x`` (None when a KerasTensor's shape has an unknown size)."""
    shape = np.shape(x) if not isinstance(x, KerasTensor) else x.shape
    return None if None in shape else int(np.prod(shape, dtype=np.int64))


def ndim(x):
    """The number of axes of ``x``."""
    return len(x.shape) if isinstance(x, KerasTensor) else np.ndim(x)
