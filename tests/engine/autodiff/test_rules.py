"""Every derivative rule against central finite differences (float64), and float32 kept end to end."""

import numpy as np
import pytest

from engine.autodiff import GradientTape, Traced
from engine.autodiff.rules import FUNCTIONS, UFUNCS
from tests.engine.autodiff.gradcheck import check_gradients, plain, traced_gradients

_rng = np.random.default_rng(7)


def normal(*shape):
    return _rng.normal(size=shape)


def positive(*shape):
    return _rng.uniform(0.5, 2.0, size=shape)


def unit(*shape):
    return _rng.uniform(-0.8, 0.8, size=shape)


def _softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _log_softmax(x):
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


# (id, function of the traced arguments, arguments); every argument is traced
CASES = [
    # arithmetic, broadcasting both ways, reflected operators and Python scalars
    ("add_broadcast", lambda a, b: a + b, [normal(3, 4), normal(4)]),
    ("add_scalar_reflected", lambda a: 2.5 + a, [normal(3)]),
    ("subtract_broadcast", lambda a, b: a - b, [normal(3, 1), normal(1, 4)]),
    ("subtract_reflected", lambda a: 1 - a, [normal(3)]),
    ("multiply_broadcast", lambda a, b: a * b, [normal(2, 3), normal(2, 1)]),
    ("divide", lambda a, b: a / b, [normal(2, 3), positive(3)]),
    ("true_divide_reflected", lambda a: 1 / a, [positive(4)]),
    ("np.true_divide", lambda a, b: np.true_divide(a, b), [normal(3), positive(3)]),
    ("power_both", lambda a, b: a ** b, [positive(3, 2), normal(2)]),
    ("power_int_exponent", lambda a: a ** 3, [normal(4)]),
    ("power_base_scalar", lambda a: 2.0 ** a, [normal(4)]),
    ("power_sqrt", lambda a: np.power(a, 0.5), [positive(4)]),
    ("negative", lambda a: -a, [normal(3)]),
    ("positive", lambda a: +a, [normal(3)]),
    ("abs", lambda a: abs(a), [positive(3) * np.array([1, -1, 1])]),
    ("np.abs", lambda a: np.abs(a), [positive(3) * np.array([-1, 1, -1])]),
    ("remainder", lambda a, b: a % b, [np.array([0.3, 1.4, -0.7]), np.array([1.0, 1.0, 1.0])]),
    ("sign_zero_gradient", lambda a: a * 2 + np.sign(a), [normal(3)]),
    # elementwise
    *[(f"np.{f.__name__}", f, [x]) for f, x in [
        (np.exp, normal(3)), (np.exp2, normal(3)), (np.expm1, normal(3)), (np.log, positive(3)),
        (np.log2, positive(3)), (np.log10, positive(3)), (np.log1p, positive(3)), (np.sqrt, positive(3)),
        (np.cbrt, positive(3)), (np.square, normal(3)), (np.reciprocal, positive(3)), (np.sin, normal(3)),
        (np.cos, normal(3)), (np.tan, unit(3)), (np.arcsin, unit(3)), (np.arccos, unit(3)), (np.arctan, normal(3)),
        (np.sinh, normal(3)), (np.cosh, normal(3)), (np.tanh, normal(3)), (np.arctanh, unit(3))]],
    ("maximum", lambda a, b: np.maximum(a, b), [normal(2, 3), normal(3)]),
    ("minimum", lambda a, b: np.minimum(a, b), [normal(2, 3), normal(2, 1)]),
    ("relu", lambda a: np.maximum(a, 0), [normal(5)]),
    ("logaddexp", lambda a, b: np.logaddexp(a, b), [normal(3), normal(3)]),
    ("softplus", lambda a: np.logaddexp(0, a), [normal(4)]),
    ("where", lambda a, b: np.where(a > 0, a, b * 2), [normal(3, 2), normal(2)]),
    ("leaky_relu_where", lambda a: np.where(a > 0, a, 0.01 * a), [normal(5)]),
    ("clip_constants", lambda a: np.clip(a, -0.5, 0.5), [normal(6)]),
    ("clip_traced_bounds", lambda a, lo, hi: np.clip(a, lo, hi), [normal(6), np.full(6, -0.3), np.full(6, 0.4)]),
    ("clip_method_one_bound", lambda a: a.clip(0.1), [normal(6)]),
    # matmul: 1-D operands, batched, broadcast
    ("matmul_2d", lambda a, b: a @ b, [normal(3, 4), normal(4, 2)]),
    ("matmul_1d_2d", lambda a, b: np.matmul(a, b), [normal(4), normal(4, 2)]),
    ("matmul_2d_1d", lambda a, b: a @ b, [normal(3, 4), normal(4)]),
    ("matmul_1d_1d", lambda a, b: a @ b, [normal(4), normal(4)]),
    ("matmul_batched", lambda a, b: a @ b, [normal(2, 3, 4), normal(2, 4, 5)]),
    ("matmul_broadcast", lambda a, b: a @ b, [normal(2, 1, 3, 4), normal(3, 4, 2)]),
    ("matmul_batched_1d", lambda a, b: a @ b, [normal(2, 3, 4), normal(4)]),
    ("matmul_1d_batched", lambda a, b: a @ b, [normal(3), normal(2, 3, 4)]),
    # reductions: axis None / int / negative / tuple, keepdims
    *[(f"{f.__name__}_{axis}_{keepdims}", lambda a, f=f, axis=axis, keepdims=keepdims: f(a, axis=axis,
                                                                                          keepdims=keepdims),
       [normal(2, 3, 4)])
      for f in (np.sum, np.mean, np.max, np.min, np.var, np.std, np.prod)
      for axis, keepdims in [(None, False), (None, True), (1, False), (-1, True), ((0, 2), False), ((-1, 0), True)]],
    ("amax", lambda a: np.amax(a, axis=0), [normal(3, 2)]),
    ("amin", lambda a: np.amin(a), [normal(3, 2)]),
    ("var_ddof", lambda a: np.var(a, axis=0, ddof=1), [normal(4, 3)]),
    ("std_method_ddof", lambda a: a.std(1, ddof=1), [normal(3, 4)]),
    ("prod_with_a_zero", lambda a: np.prod(a * np.array([1.0, 0.0, 1.0, 1.0]), axis=-1), [normal(3, 4)]),
    ("cumsum_flat", lambda a: np.cumsum(a), [normal(2, 3)]),
    ("cumsum_axis", lambda a: a.cumsum(axis=-1), [normal(2, 3)]),
    ("methods", lambda a: a.sum(0) + a.mean(axis=0) + a.max(0) * a.min(0) + a.var(0) + a.prod(0), [normal(3, 2)]),
    # shapes
    ("reshape", lambda a: np.reshape(a, (3, 4)) * np.arange(12.0).reshape(3, 4), [normal(2, 6)]),
    ("reshape_method_varargs", lambda a: a.reshape(4, -1), [normal(2, 6)]),
    ("reshape_order_F", lambda a: np.reshape(a, (3, 4), order="F"), [normal(2, 6)]),
    ("transpose", lambda a: np.transpose(a), [normal(2, 3, 4)]),
    ("transpose_axes", lambda a: np.transpose(a, (1, -1, 0)), [normal(2, 3, 4)]),
    ("transpose_method", lambda a: a.transpose(2, 0, 1) + a.T.transpose((2, 0, 1)), [normal(2, 3, 2)]),
    ("swapaxes", lambda a: np.swapaxes(a, 0, -1) + a.swapaxes(2, 0), [normal(2, 3, 2)]),
    ("moveaxis", lambda a: np.moveaxis(a, 0, -1), [normal(2, 3, 4)]),
    ("expand_dims", lambda a: np.expand_dims(a, (0, -1)), [normal(2, 3)]),
    ("squeeze", lambda a: np.squeeze(a) + a.squeeze(axis=0).sum(), [normal(1, 3, 1)]),
    ("broadcast_to", lambda a: np.broadcast_to(a, (2, 3, 4)), [normal(3, 1)]),
    ("ravel_flatten", lambda a: np.ravel(a) + a.flatten() + a.ravel(), [normal(2, 3)]),
    ("flip", lambda a: np.flip(a, 1) * np.arange(3.0), [normal(2, 3)]),
    ("copy", lambda a: np.copy(a) * a.copy(), [normal(3)]),
    # indexing
    ("slice", lambda a: a[1:, ::2], [normal(3, 4)]),
    ("ellipsis_none_int", lambda a: a[..., None, 0], [normal(2, 3, 4)]),
    ("negative_index", lambda a: a[-1] * a[:, -2].sum(), [normal(3, 4)]),
    ("repeated_integer_indices", lambda a: a[[0, 0, 2, 0]], [normal(3, 2)]),
    ("integer_array_2d_index", lambda a: a[np.array([[0, 1], [1, 1]])], [normal(3, 2)]),
    ("tuple_of_integer_arrays", lambda a: a[[0, 1, 1], [2, 0, 2]], [normal(3, 4)]),
    ("boolean_mask", lambda a: a[np.array([True, False, True])], [normal(3, 2)]),
    ("self_mask", lambda a: a[a > 0] * 3, [normal(8)]),
    ("iteration", lambda a: sum(row * (i + 1) for i, row in enumerate(a)), [normal(3, 2)]),
    # joining and splitting
    ("concatenate_axis0", lambda a, b: np.concatenate([a, b]), [normal(2, 3), normal(1, 3)]),
    ("concatenate_axis_neg", lambda a, b: np.concatenate((a, b * 2), axis=-1), [normal(2, 3), normal(2, 1)]),
    ("concatenate_none", lambda a, b: np.concatenate([a, b], axis=None), [normal(2, 3), normal(4)]),
    ("concatenate_with_constant", lambda a: np.concatenate([a, np.ones((1, 3))]), [normal(2, 3)]),
    ("stack", lambda a, b: np.stack([a, b]), [normal(2, 3), normal(2, 3)]),
    ("stack_last_axis", lambda a, b: np.stack((a, b), axis=-1), [normal(2, 3), normal(2, 3)]),
    ("split_one_piece_unused", lambda a: np.concatenate([p * (i + 1) for i, p in enumerate(np.split(a, [1, 3], axis=1))
                                                         if i != 1], axis=1), [normal(2, 4)]),
    ("array_split", lambda a: np.array_split(a, 3)[0] * 2 + np.array_split(a, 3)[2], [normal(5)]),
    # contractions
    *[(f"einsum_{s}", lambda *ops, s=s: np.einsum(s, *ops), [normal(*shape) for shape in shapes]) for s, shapes in [
        ("ij,jk->ik", [(3, 4), (4, 2)]), ("ij->", [(3, 4)]), ("ij->j", [(3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
        ("i,i->", [(4,), (4,)]), ("i,j->ij", [(3,), (2,)]), ("ij", [(2, 3)]), ("ba", [(2, 3)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]),
        ("...ij,...jk", [(1, 3, 4), (2, 4, 2)]), ("i...->...", [(3, 2, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("bii->bi", [(2, 3, 3)]), ("ij,ij->i", [(3, 4), (1, 4)])]],
    ("dot_1d_1d", lambda a, b: np.dot(a, b), [normal(4), normal(4)]),
    ("dot_2d_2d", lambda a, b: np.dot(a, b), [normal(3, 4), normal(4, 2)]),
    ("dot_2d_1d", lambda a, b: a.dot(b), [normal(3, 4), normal(4)]),
    ("dot_3d_3d", lambda a, b: np.dot(a, b), [normal(2, 3, 4), normal(2, 4, 3)]),
    ("dot_0d", lambda a, b: np.dot(a, b), [np.array(1.5), normal(3)]),
    ("tensordot_1", lambda a, b: np.tensordot(a, b, 1), [normal(2, 3), normal(3, 4)]),
    ("tensordot_2", lambda a, b: np.tensordot(a, b), [normal(2, 3, 4), normal(3, 4, 2)]),
    ("tensordot_pairs", lambda a, b: np.tensordot(a, b, ([1, 0], [0, 2])), [normal(3, 4, 2), normal(4, 5, 3)]),
    ("tensordot_0", lambda a, b: np.tensordot(a, b, 0), [normal(2), normal(3)]),
    ("outer", lambda a, b: np.outer(a, b), [normal(2, 2), normal(3)]),
    # padding and gathering
    ("pad_constant", lambda a: np.pad(a, ((1, 2), (0, 1))), [normal(2, 3)]),
    ("pad_constant_value", lambda a: np.pad(a, 1, constant_values=5.0), [normal(2, 3)]),
    *[(f"pad_{mode}", lambda a, mode=mode: np.pad(a, ((2, 1), (1, 2)), mode=mode), [normal(3, 4)])
      for mode in ("edge", "reflect", "symmetric", "wrap")],
    ("take_embedding", lambda a: np.take(a, np.array([[1, 1], [0, 3]]), axis=0), [normal(4, 3)]),
    ("take_flat", lambda a: np.take(a, [5, 5, 0]), [normal(2, 3)]),
    ("take_axis_1_method", lambda a: a.take([2, 0, 2], axis=-1), [normal(2, 3)]),
    ("take_along_axis_repeats", lambda a: np.take_along_axis(a, np.array([[2, 2], [0, 1]]), axis=1), [normal(2, 3)]),
    ("take_along_axis_broadcast", lambda a: np.take_along_axis(a, np.array([[[1], [0]]]), axis=1), [normal(3, 2, 4)]),
    ("take_along_axis_flat", lambda a: np.take_along_axis(a, np.array([4, 4, 1]), axis=None), [normal(2, 3)]),
    # compositions
    ("softmax", _softmax, [normal(3, 5)]),
    ("log_softmax", _log_softmax, [normal(3, 5)]),
    ("log_softmax_large_logits", _log_softmax, [normal(2, 4) * 30 + 500]),
    ("astype", lambda a: a.astype(a.dtype) * 2 + a.astype("float64"), [normal(3)]),
    ("in_place_operators", lambda a: _in_place(a), [normal(3)]),
]


def _in_place(a):
    b = a * 1  # on a plain ndarray (the finite differences) += would change a itself
    b += 1
    b *= a
    b **= 2
    b /= 3
    b -= a
    b @= np.eye(3)
    return b


def test_every_case_id_is_unique():
    ids = [case[0] for case in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(("fn", "arrays"), [pytest.param(fn, arrays, id=name) for name, fn, arrays in CASES])
def test_gradient_matches_central_differences(fn, arrays):
    tol = {"rtol": 1e-4, "atol": 1e-5} if any(np.abs(a).max() > 100 for a in arrays) else {}
    check_gradients(fn, *arrays, **tol)


@pytest.mark.parametrize(("fn", "arrays"), [pytest.param(fn, arrays, id=name) for name, fn, arrays in CASES])
def test_float32_in_float32_out_and_float32_gradients(fn, arrays):
    arrays32 = [a.astype("float32") for a in arrays]
    out, grads, _ = traced_gradients(fn, arrays32)
    out = out if isinstance(out, Traced) else out[0]
    expected = plain(fn(*arrays32))
    assert out.dtype == (expected if isinstance(expected, np.ndarray) else expected[0]).dtype  # NumPy's own
    assert all(g.dtype == np.float32 and g.shape == a.shape for g, a in zip(grads, arrays32))
    _, grads64, _ = traced_gradients(fn, [a.astype("float64") for a in arrays32])
    for g, g64 in zip(grads, grads64):
        np.testing.assert_allclose(g, g64, rtol=2e-3, atol=2e-3 * max(1.0, np.abs(g64).max()))


def test_the_required_rules_are_all_in_the_tables():
    required_ufuncs = [np.matmul, np.add, np.subtract, np.multiply, np.divide, np.true_divide, np.power, np.negative,
                       np.positive, np.exp, np.log, np.log1p, np.expm1, np.sqrt, np.square, np.reciprocal, np.tanh,
                       np.sin, np.cos, np.abs, np.maximum, np.minimum]
    required_functions = [np.where, np.clip, np.sum, np.mean, np.max, np.min, np.var, np.std, np.prod, np.reshape,
                          np.transpose, np.swapaxes, np.moveaxis, np.expand_dims, np.squeeze, np.broadcast_to,
                          np.ravel, np.concatenate, np.stack, np.split, np.array_split, np.einsum, np.dot,
                          np.tensordot, np.outer, np.pad, np.take, np.take_along_axis]
    assert [f for f in required_ufuncs if f not in UFUNCS] == []
    assert [f for f in required_functions if f not in FUNCTIONS] == []


def test_ties_share_the_gradient_equally():
    with GradientTape() as tape:
        a, b = tape.watch(np.array([1.0, 2.0, 3.0])), tape.watch(np.array([1.0, 0.0, 5.0]))
        top = np.maximum(a, b)
    ga, gb = tape.gradient(top, [a, b])
    np.testing.assert_array_equal(ga, [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(gb, [0.5, 0.0, 1.0])
    with GradientTape() as tape:
        a, b = tape.watch(np.array([1.0, 2.0])), tape.watch(np.array([1.0, 0.0]))
        low = np.minimum(a, b)
    np.testing.assert_array_equal(tape.gradient(low, a), [0.5, 0.0])
    with GradientTape() as tape:
        x = tape.watch(np.array([1.0, 3.0, 3.0]))
        peak = np.max(x)
    np.testing.assert_array_equal(tape.gradient(peak, x), [0.0, 0.5, 0.5])


def test_power_gradient_with_respect_to_the_exponent_is_zero_where_the_base_is_not_positive():
    with GradientTape() as tape:
        a, b = tape.watch(np.array([0.0, -2.0, 2.0])), tape.watch(np.array([2.0, 2.0, 2.0]))
        y = a ** b
    ga, gb = tape.gradient(y, [a, b])
    np.testing.assert_allclose(ga, [0.0, -4.0, 4.0])
    np.testing.assert_allclose(gb, [0.0, 0.0, 4.0 * np.log(2.0)])
