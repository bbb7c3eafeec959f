"""Keras 3 as the oracle of the metric tests: the same batches, the same results."""

import keras
import numpy as np


def assert_matches_keras(ours, theirs, batches, rtol=1e-6, atol=1e-7):
    """Feeds ``(y_true, y_pred, sample_weight)`` batches to both metrics and
    compares the results after each one; then checks that ``reset_state``
    makes ours start afresh."""
    for y_true, y_pred, sample_weight in batches:
        ours.update_state(y_true, y_pred, sample_weight=sample_weight)
        theirs.update_state(y_true, y_pred, sample_weight=sample_weight)
        received, expected = ours.result(), np.asarray(theirs.result())
        if expected.ndim == 0:
            assert isinstance(received, float)
        np.testing.assert_allclose(received, expected, rtol=rtol, atol=atol)
    first = ours.result()
    ours.reset_state()
    assert np.all(np.asarray(ours.result()) == 0.0)
    for y_true, y_pred, sample_weight in batches:
        ours.update_state(y_true, y_pred, sample_weight=sample_weight)
    np.testing.assert_array_equal(ours.result(), first)


__all__ = ["assert_matches_keras", "keras"]
