"""Central finite differences, the oracle every derivative rule is checked against."""

import numpy as np

from engine.autodiff import GradientTape, Traced


def plain(result):
    """A function's result as plain arrays (a list for several results)."""
    if isinstance(result, (list, tuple)):
        return [plain(r) for r in result]
    return result.value if isinstance(result, Traced) else np.asarray(result)


def numeric_gradients(fn, arrays, weights, eps=1e-6):
    """d sum(fn(*arrays) * weights) / d arrays by central differences."""
    grads = []
    for i, array in enumerate(arrays):
        grad = np.zeros_like(array)
        for index in np.ndindex(array.shape):
            shifted = []
            for sign in (1, -1):
                moved = [a.copy() for a in arrays]
                moved[i][index] += sign * eps
                shifted.append(np.sum(plain(fn(*moved)) * weights))
            grad[index] = (shifted[0] - shifted[1]) / (2 * eps)
        grads.append(grad)
    return grads


def traced_gradients(fn, arrays, seed=0):
    """(result, gradients of sum(result * weights), weights) through a GradientTape."""
    with GradientTape() as tape:
        xs = [tape.watch(a) for a in arrays]
        out = fn(*xs)
    weights = np.random.default_rng(seed).normal(size=np.shape(plain(out))).astype(plain(out).dtype)
    return out, tape.gradient(out, xs, output_gradients=weights), weights


def check_gradients(fn, *arrays, rtol=1e-5, atol=1e-6):
    """Asserts that the tape's gradients of ``fn`` match central differences, in float64."""
    arrays = [np.asarray(a, np.float64) for a in arrays]
    _, grads, weights = traced_gradients(fn, arrays)
    for analytic, numeric in zip(grads, numeric_gradients(fn, arrays, weights)):
        assert analytic is not None
        assert analytic.shape == numeric.shape and analytic.dtype == np.float64
        np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=atol)
