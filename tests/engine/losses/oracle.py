"""The two oracles of the loss tests: Keras 3 for values, central finite
differences in float64 for gradients."""

import keras
import numpy as np


def assert_matches_keras(ours, theirs, y_true, y_pred, sample_weight=None, rtol=1e-6, atol=1e-7):
    """Our loss and the Keras loss give the same value (or values), shape and dtype."""
    expected = np.asarray(theirs(y_true, y_pred, sample_weight=sample_weight))
    received = ours(y_true, y_pred, sample_weight)
    assert np.shape(received) == expected.shape
    assert received.dtype == expected.dtype
    np.testing.assert_allclose(received, expected, rtol=rtol, atol=atol)


def assert_gradient_matches_finite_differences(loss, y_true, y_pred, sample_weight=None, epsilon=1e-6,
                                               tolerance=1e-7):
    """``loss.gradient`` equals ``(L(p + h) - L(p - h)) / 2h`` element by element,
    where ``L`` is the reduced loss (summed, for ``reduction="none"``): the
    error norm relative to the gradient's norm, or absolute below norm 1."""
    y_pred = np.array(y_pred, dtype=np.float64)
    analytic = loss.gradient(y_true, y_pred, sample_weight)
    assert analytic.shape == y_pred.shape and analytic.dtype == np.float64
    numeric = np.empty_like(y_pred)
    flat, flat_numeric = y_pred.reshape(-1), numeric.reshape(-1)
    for index, saved in enumerate(flat.copy()):
        flat[index] = saved + epsilon
        upper = float(np.sum(loss(y_true, y_pred, sample_weight)))
        flat[index] = saved - epsilon
        lower = float(np.sum(loss(y_true, y_pred, sample_weight)))
        flat[index] = saved
        flat_numeric[index] = (upper - lower) / (2 * epsilon)
    error = np.linalg.norm(analytic - numeric) / max(np.linalg.norm(analytic), np.linalg.norm(numeric), 1.0)
    assert error < tolerance, f"{loss.name}: relative error {error:.2e}\nanalytic\n{analytic}\nnumeric\n{numeric}"


__all__ = ["assert_matches_keras", "assert_gradient_matches_finite_differences", "keras"]
