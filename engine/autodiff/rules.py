"""Every derivative rule of the tracer, one table row per NumPy function.

A rule is the vector-Jacobian product of one NumPy function: given ``g``, the
gradient of the loss with respect to the function's result ``ans``, it returns
the gradient with respect to each argument. Rules only have to be right up to
broadcasting and dtype: the tape sums each gradient over the axes its argument
was broadcast along (or broadcasts it up, so a reduction's rule can return the
gradient in the keepdims shape) and casts it to the argument's dtype
(``tape._fit``).

- ``UFUNCS`` maps a ufunc to one function per argument, ``(g, ans, *args) ->
  grad``. The tape calls only those of traced arguments, so ``x @ W`` with a
  constant ``x`` never computes ``g @ W.T``.
- ``FUNCTIONS`` maps a NumPy function to ``(ans, *args, **kwargs) -> vjp``, run
  when the call is traced (so it can refuse an unsupported option at once);
  ``vjp(g)`` returns one gradient per positional argument (None where there is
  none; missing at the end means None), or for ``np.concatenate`` and
  ``np.stack`` one per array of their sequence. An entry may be a zero-argument
  function, evaluated only when that argument is traced (the contractions, where
  each gradient costs a product). Functions with several results (``np.split``)
  get the list of their gradients.
- ``NON_DIFFERENTIABLE`` functions run on the raw values and return plain
  arrays: masks, indices, rounding, ``*_like`` constants.

Anything else raises ``TracingError``. Ties (``maximum``, ``max``, ``clip`` at a
bound) share the gradient equally between the tied entries, as TensorFlow's
``reduce_max`` does; ``clip`` passes it to ``x`` when ``x`` equals a bound.
"""

import math
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple


class TracingError(NotImplementedError):
    """A NumPy call that automatic differentiation cannot follow.

    ``function`` names what was called (``"numpy.sort"``); ``context`` says
    where (the Layer integration passes ``"layer 'my_layer'"``); ``hint`` says
    why and what to write instead, defaulting to the missing derivative rule.

    Example:
        >>> str(TracingError("numpy.sort", context="layer 'sorter'")).split(":")[0]
        "numpy.sort cannot be traced in layer 'sorter'"
    """

    def __init__(self, function: str, context: str | None = None, hint: str | None = None):
        self.function, self.context, self.hint = function, context, hint
        where = f" in {context}" if context else ""
        hint = hint or ("it has no derivative rule. Use a supported NumPy function instead (the list is in "
                        "engine/autodiff/rules.py), or give the layer a hand-written `forward`/`backward`")
        super().__init__(f"{function} cannot be traced{where}: {hint}.")

    def with_context(self, context: str) -> "TracingError":
        """The same error, saying where it happened."""
        return TracingError(self.function, context, self.hint)


# ---------------------------------------------------------------- helpers


def _share(g, win, tie):
    """g where ``win``, half of it where tied, zero elsewhere."""
    return np.where(win, g, np.where(tie, g * 0.5, 0))


def _unreduce(g, x, axis, keepdims):
    """Puts back, as length 1, the axes a reduction of ``x`` removed, so ``g`` broadcasts against ``x``."""
    if keepdims:
        return g
    shape = [1] * np.ndim(x) if axis is None else list(np.shape(x))
    for k in () if axis is None else (axis,) if isinstance(axis, int) else axis:
        shape[k] = 1
    return g.reshape(shape)


def _count(x, ans):
    """How many entries of ``x`` went into each entry of the reduction ``ans``."""
    return np.size(x) // max(np.size(ans), 1)


def _as_matrices(g, a, b):
    """``g, a, b`` with the 1-D operands of a matmul made matrices, as NumPy does: (k,) @ B is (1, k) @ B."""
    a, b = (x if hasattr(x, "ndim") else np.asarray(x) for x in (a, b))  # a Traced stays traced (second order)
    if b.ndim == 1:
        b, g = b[:, None], g[..., None]
    if a.ndim == 1:
        a, g = a[None], g[..., None, :]
    return g, a, b


def _matmul_a(g, ans, a, b):
    g, _, b2 = _as_matrices(g, a, b)
    grad = g @ b2.swapaxes(-1, -2)
    return grad[..., 0, :] if np.ndim(a) == 1 else grad


def _matmul_b(g, ans, a, b):
    g, a2, _ = _as_matrices(g, a, b)
    grad = a2.swapaxes(-1, -2) @ g
    return grad[..., 0] if np.ndim(b) == 1 else grad


def _max(ans, x, axis=None, out=None, keepdims=False, **_):
    def vjp(g):
        hit = x == _unreduce(ans, x, axis, keepdims)
        return (_unreduce(g, x, axis, keepdims) * hit / hit.sum(axis, dtype=x.dtype, keepdims=True),)
    return vjp


def _var(ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None, **_):
    ddof = ddof if correction is None else correction
    centred = x - np.mean(x, axis, keepdims=True)
    return lambda g: (_unreduce(g, x, axis, keepdims) * 2 * centred / (_count(x, ans) - ddof),)


def _std(ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None, **_):
    ddof = ddof if correction is None else correction
    centred = x - np.mean(x, axis, keepdims=True)
    return lambda g: (_unreduce(g / ans, x, axis, keepdims) * centred / (_count(x, ans) - ddof),)


def _prod(ans, x, axis=None, dtype=None, out=None, keepdims=False, **_):
    """The product of all the other factors, by exclusive cumulative products (exact with zeros)."""
    axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim)
    kept = [k for k in range(x.ndim) if k not in axes]
    flat = np.transpose(x, kept + list(axes)).reshape([x.shape[k] for k in kept] + [-1])
    ones = np.ones_like(flat[..., :1])
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], -1), -1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], -1), -1)[..., ::-1]
    others = (left * right).reshape([x.shape[k] for k in kept + list(axes)])
    others = np.transpose(others, np.argsort(kept + list(axes)))
    return lambda g: (_unreduce(g, x, axis, keepdims) * others,)


def _cumsum(ans, x, axis=None, dtype=None, out=None):
    if axis is None:
        return lambda g: (np.cumsum(g[::-1])[::-1].reshape(np.shape(x)),)
    return lambda g: (np.flip(np.cumsum(np.flip(g, axis), axis), axis),)


def _transpose(ans, x, axes=None):
    if axes is None:
        return lambda g: (np.transpose(g),)
    return lambda g: (np.transpose(g, np.argsort(normalize_axis_tuple(axes, np.ndim(x)))),)


def _concatenate(ans, arrays, axis=0, **_):
    if axis is None:
        ends = np.cumsum([np.size(a) for a in arrays])[:-1]
        return lambda g: [p.reshape(np.shape(a)) for p, a in zip(np.split(g, ends), arrays)]
    ends = np.cumsum([np.shape(a)[axis] for a in arrays])[:-1]
    return lambda g: np.split(g, ends, axis)


def _clip(ans, x, a_min=None, a_max=None, out=None, *, min=None, max=None, **_):
    lo, hi = (a_min if a_min is not None else min), (a_max if a_max is not None else max)
    below = np.zeros(np.shape(ans), bool) if lo is None else x < lo
    above = np.zeros(np.shape(ans), bool) if hi is None else (x if lo is None else np.maximum(x, lo)) > hi
    return lambda g: (np.where(below | above, 0, g), np.where(below & ~above, g, 0), np.where(above, g, 0))


def _take(ans, x, indices, axis=None, out=None, mode="raise"):
    size = np.size(x) if axis is None else np.shape(x)[axis]
    indices = np.clip(indices, 0, size - 1) if mode == "clip" else np.mod(indices, size) if mode == "wrap" else indices

    def vjp(g):
        grad = np.zeros(np.size(x) if axis is None else np.shape(x), g.dtype)
        np.add.at(grad, (slice(None),) * normalize_axis_index(axis or 0, max(np.ndim(x), 1)) + (indices,), g)
        return (grad.reshape(np.shape(x)),)
    return vjp


def _take_along_axis(ans, x, indices, axis=-1):
    if axis is None:  # the flattened array's entries
        return _take(ans, x, indices)

    def vjp(g):
        grad = np.zeros(np.shape(x), g.dtype)
        axis_ = normalize_axis_index(axis, np.ndim(x))
        # Each entry of g goes back to x at (its own position, with indices along axis); an
        # axis of x broadcast to the result gathers its whole axis into its one entry.
        where = tuple(
            np.broadcast_to(indices, np.shape(g)) if i == axis_
            else (np.arange(n) % np.shape(x)[i]).reshape([-1 if j == i else 1 for j in range(np.ndim(g))])
            for i, n in enumerate(np.shape(g)))
        np.add.at(grad, where, g)
        return (grad,)
    return vjp


_BASIC_INDEX = {int, slice, type(None), type(Ellipsis)}


def _getitem(ans, x, key):
    def vjp(g):
        grad = np.zeros(np.shape(x), g.dtype)
        if all(type(k) in _BASIC_INDEX for k in key) if type(key) is tuple else type(key) in _BASIC_INDEX:
            grad[key] = g
        else:  # integer arrays may repeat an index: accumulate
            np.add.at(grad, key, g)
        return (grad,)
    return vjp


_GATHER_PADS = {"constant", "edge", "reflect", "symmetric", "wrap"}


def _pad(ans, x, pad_width, mode="constant", **kwargs):
    """Every supported mode copies entries of ``x``: pad their flat indices the same way and sum back."""
    if mode not in _GATHER_PADS:
        raise TracingError(f"numpy.pad with mode={mode!r}", hint=f"supported modes are {sorted(_GATHER_PADS)}")
    extra = {"constant_values": -1} if mode == "constant" else {k: v for k, v in kwargs.items() if k == "reflect_type"}
    index = np.pad(np.arange(np.size(x)).reshape(np.shape(x)), pad_width, mode, **extra)
    copied = index >= 0
    return lambda g: (np.bincount(index[copied], g[copied], np.size(x)).reshape(np.shape(x)),)


def _split(ans, x, indices_or_sections, axis=0):
    return lambda gs: (np.concatenate(gs, axis),)


def _where(ans, condition, x=None, y=None):
    return lambda g: (None, np.where(condition, g, 0), np.where(condition, 0, g))


def _tensordot(ans, a, b, axes=2):
    if isinstance(axes, int):
        sa, sb = list(range(np.ndim(a) - axes, np.ndim(a))), list(range(axes))
    else:
        sa, sb = ([axes_] if isinstance(axes_, int) else list(axes_) for axes_ in axes)
        sa, sb = [normalize_axis_index(k, np.ndim(a)) for k in sa], [normalize_axis_index(k, np.ndim(b)) for k in sb]
    fa = [k for k in range(np.ndim(a)) if k not in sa]
    fb = [k for k in range(np.ndim(b)) if k not in sb]

    def grad_a(g):  # contract g's b-part with b's free axes; what is left of b are its summed axes, sorted
        grad = np.tensordot(g, b, (list(range(len(fa), np.ndim(g))), fb))
        return np.transpose(grad, np.argsort(fa + [sa[sb.index(k)] for k in sorted(sb)]))

    def grad_b(g):
        grad = np.tensordot(a, g, (fa, list(range(len(fa)))))
        return np.transpose(grad, np.argsort([sb[sa.index(k)] for k in sorted(sa)] + fb))

    return lambda g: (lambda: grad_a(g), lambda: grad_b(g))


def _dot(ans, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _tensordot(ans, a, b, 0)
    return _tensordot(ans, a, b, ([np.ndim(a) - 1], [max(np.ndim(b) - 2, 0)]))


def _outer(ans, a, b):
    return lambda g: (lambda: (g @ np.ravel(b)).reshape(np.shape(a)), lambda: (np.ravel(a) @ g).reshape(np.shape(b)))


def _einsum_subscripts(subscripts, ndims):
    """Explicit subscripts, ``'...ij,...jk->...ik'`` on (3, 2) dims -> ``(['Aij', 'jk'], 'Aik')``."""
    subscripts = subscripts.replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    inputs = inputs.split(",")
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in subscripts]
    dims = [n - len(s.replace("...", "")) for s, n in zip(inputs, ndims)]
    ellipsis = "".join(free[:max(dims, default=0)])
    inputs = [s.replace("...", ellipsis[len(ellipsis) - n:] if n else "") for s, n in zip(inputs, dims)]
    if not arrow:
        letters = "".join(inputs)
        output = "..." + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ellipsis))
    return inputs, output.replace("...", ellipsis)


def _einsum(ans, subscripts, *operands, **kwargs):
    if not isinstance(subscripts, str):
        raise TracingError("numpy.einsum", hint="only the subscripts-string form np.einsum('ij,jk->ik', a, b) is "
                                                "supported, not the interleaved (operand, sublist) form")
    inputs, output = _einsum_subscripts(subscripts, [np.ndim(o) for o in operands])

    def grad(i, g):
        sub, shape = inputs[i], np.shape(operands[i])
        others = [s for j, s in enumerate(inputs) if j != i]
        reached = set(output).union(*others)
        unique = "".join(dict.fromkeys(sub))  # a repeated letter is a diagonal
        sizes = dict(zip(sub, shape))
        kept = "".join(c for c in unique if c in reached)
        grad = np.einsum(f"{','.join([output, *others])}->{kept}", g, *operands[:i], *operands[i + 1:], **kwargs)
        # letters summed inside operand i alone come back by broadcasting; size-1 broadcast dims are summed
        grad = np.expand_dims(grad, tuple(k for k, c in enumerate(unique) if c not in reached))
        summed = tuple(k for k, c in enumerate(unique) if sizes[c] == 1 and grad.shape[k] != 1)
        grad = grad.sum(summed, keepdims=True) if summed else grad
        grad = np.broadcast_to(grad, [sizes[c] for c in unique])
        if unique == sub:
            return grad
        full = np.zeros(shape, grad.dtype)
        np.einsum(f"{sub}->{unique}", full)[...] = grad  # a writeable view of the diagonal
        return full

    return lambda g: (None, *(lambda i=i: grad(i, g) for i in range(len(operands))))


def _same_shape(ans, x, *args, order="C", **kwargs):
    """Rule of every function that only lays the entries of ``x`` out in a new shape."""
    return lambda g: (np.reshape(g, np.shape(x), order=order),)


def _identity(ans, x, *args, **kwargs):
    return lambda g: (g,)


# ---------------------------------------------------------------- the table

UFUNCS = {
    np.add: (lambda g, ans, a, b: g, lambda g, ans, a, b: g),
    np.subtract: (lambda g, ans, a, b: g, lambda g, ans, a, b: -g),
    np.multiply: (lambda g, ans, a, b: g * b, lambda g, ans, a, b: g * a),
    np.divide: (lambda g, ans, a, b: g / b, lambda g, ans, a, b: -g * ans / b),
    np.power: (lambda g, ans, a, b: g * b * a ** (b - 1),
               lambda g, ans, a, b: g * ans * np.log(np.where(a > 0, a, 1))),  # 0 where a <= 0, as TensorFlow
    np.remainder: (lambda g, ans, a, b: g, lambda g, ans, a, b: -g * np.floor_divide(a, b)),
    np.negative: (lambda g, ans, a: -g,),
    np.positive: (lambda g, ans, a: g,),
    np.matmul: (_matmul_a, _matmul_b),
    np.maximum: (lambda g, ans, a, b: _share(g, a > b, a == b), lambda g, ans, a, b: _share(g, b > a, a == b)),
    np.minimum: (lambda g, ans, a, b: _share(g, a < b, a == b), lambda g, ans, a, b: _share(g, b < a, a == b)),
    np.logaddexp: (lambda g, ans, a, b: g * np.exp(a - ans), lambda g, ans, a, b: g * np.exp(b - ans)),
    np.absolute: (lambda g, ans, a: g * np.sign(a),),
    np.exp: (lambda g, ans, a: g * ans,),
    np.exp2: (lambda g, ans, a: g * ans * math.log(2),),
    np.expm1: (lambda g, ans, a: g * (ans + 1),),
    np.log: (lambda g, ans, a: g / a,),
    np.log2: (lambda g, ans, a: g / (a * math.log(2)),),
    np.log10: (lambda g, ans, a: g / (a * math.log(10)),),
    np.log1p: (lambda g, ans, a: g / (a + 1),),
    np.sqrt: (lambda g, ans, a: g / (ans * 2),),
    np.cbrt: (lambda g, ans, a: g / (ans * ans * 3),),
    np.square: (lambda g, ans, a: g * a * 2,),
    np.reciprocal: (lambda g, ans, a: -g * ans * ans,),
    np.sin: (lambda g, ans, a: g * np.cos(a),),
    np.cos: (lambda g, ans, a: -g * np.sin(a),),
    np.tan: (lambda g, ans, a: g * (ans * ans + 1),),
    np.arcsin: (lambda g, ans, a: g / np.sqrt(1 - a * a),),
    np.arccos: (lambda g, ans, a: -g / np.sqrt(1 - a * a),),
    np.arctan: (lambda g, ans, a: g / (a * a + 1),),
    np.sinh: (lambda g, ans, a: g * np.cosh(a),),
    np.cosh: (lambda g, ans, a: g * np.sinh(a),),
    np.tanh: (lambda g, ans, a: g * (1 - ans * ans),),
    np.arctanh: (lambda g, ans, a: g / (1 - a * a),),
}

FUNCTIONS = {
    np.sum: lambda ans, x, axis=None, dtype=None, out=None, keepdims=False, **_: lambda g: (
        _unreduce(g, x, axis, keepdims),),  # the tape broadcasts it back to x's shape
    np.mean: lambda ans, x, axis=None, dtype=None, out=None, keepdims=False, **_: lambda g: (
        _unreduce(g, x, axis, keepdims) / _count(x, ans),),
    np.max: _max,
    np.amax: _max,
    np.min: _max,  # the entries equal to the result, whichever way it was chosen
    np.amin: _max,
    np.var: _var,
    np.std: _std,
    np.prod: _prod,
    np.cumsum: _cumsum,
    np.reshape: _same_shape,
    np.ravel: _same_shape,
    np.squeeze: _same_shape,
    np.expand_dims: _same_shape,
    np.transpose: _transpose,
    np.swapaxes: lambda ans, x, axis1, axis2: lambda g: (np.swapaxes(g, axis1, axis2),),
    np.moveaxis: lambda ans, x, source, destination: lambda g: (np.moveaxis(g, destination, source),),
    np.flip: lambda ans, x, axis=None: lambda g: (np.flip(g, axis),),
    np.broadcast_to: _identity,  # the tape sums it over the broadcast axes
    np.copy: _identity,
    np.astype: _identity,  # the tape casts the gradient back to the input's dtype
    operator.getitem: _getitem,
    np.take: _take,
    np.take_along_axis: _take_along_axis,
    np.pad: _pad,
    np.concatenate: _concatenate,
    np.stack: lambda ans, arrays, axis=0, **_: lambda g: list(np.moveaxis(g, axis, 0)),
    np.split: _split,
    np.array_split: _split,
    np.where: _where,
    np.clip: _clip,
    np.einsum: _einsum,
    np.tensordot: _tensordot,
    np.dot: _dot,
    np.outer: _outer,
}

NON_DIFFERENTIABLE = {
    np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal,
    np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
    np.isnan, np.isinf, np.isfinite, np.signbit, np.sign, np.floor, np.ceil, np.trunc, np.rint, np.floor_divide,
    np.round, np.around, np.argmax, np.argmin, np.argsort, np.argwhere, np.nonzero, np.flatnonzero,
    np.count_nonzero, np.any, np.all, np.isclose, np.allclose, np.array_equal, np.searchsorted,
    np.shape, np.ndim, np.size, np.result_type, np.zeros_like, np.ones_like, np.full_like, np.empty_like,
}
