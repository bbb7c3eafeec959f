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


def assert_fit_step_matches_keras(loss, keras_loss, y_true, activation=None, rtol=1e-5, atol=1e-6):
    """One SGD ``fit`` step of a Dense model compiled with ``loss`` leaves the
    same weights (and reports the same loss) as Keras' twin compiled with ``keras_loss``."""
    from engine import Input, Model
    from layers import Dense

    x = np.linspace(-1, 1, 4 * len(y_true), dtype="float32").reshape(len(y_true), 4)
    units = np.shape(y_true)[-1] if np.ndim(y_true) > 1 else 3
    inputs, keras_inputs = Input((4,)), keras.Input((4,))
    ours = Model(inputs, Dense(units, activation=activation)(inputs))
    theirs = keras.Model(keras_inputs, keras.layers.Dense(units, activation=activation)(keras_inputs))
    theirs.set_weights(ours.get_weights())
    ours.compile(optimizer="sgd", loss=loss)
    theirs.compile(optimizer=keras.optimizers.SGD(), loss=keras_loss)
    history = ours.fit(x, y_true, batch_size=len(y_true), epochs=1, verbose=0).history["loss"]
    keras_history = theirs.fit(x, y_true, batch_size=len(y_true), epochs=1, verbose=0).history["loss"]
    np.testing.assert_allclose(history, keras_history, rtol=rtol, atol=atol)
    for received, expected in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(received, expected, rtol=rtol, atol=atol)


__all__ = ["assert_matches_keras", "assert_gradient_matches_finite_differences", "assert_fit_step_matches_keras",
           "keras"]
