"""What the read tests share: a model saved by Keras 3 with statistics that
are not at their initial values, and the checks that our load of it is the
same model (outputs, parameter counts, summary totals)."""

import re

import keras
import numpy as np

import engine


def perturb(model, seed=0):
    """Moves every BatchNormalization's moving statistics and every other
    weight that starts constant (biases, gammas, scales) off its initial value,
    so a weight read into the wrong place changes the outputs."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        value = np.asarray(variable.value)
        if not np.issubdtype(value.dtype, np.floating):
            continue
        if variable.path.endswith("moving_variance"):
            variable.assign(rng.uniform(0.5, 1.5, value.shape).astype(value.dtype))
        elif value.size and np.all(value == value.flat[0]):
            variable.assign((value + rng.normal(0, 0.1, value.shape)).astype(value.dtype))


def save_keras(model, directory, name="model"):
    """Saves the Keras ``model`` as ``directory/name.keras`` and returns the path."""
    path = str(directory / f"{name}.keras")
    model.save(path)
    return path


def assert_same_model(keras_model, ours, inputs, rtol=1e-5):
    """Our model gives Keras' outputs on ``inputs`` (within ``rtol`` of the
    largest output), has as many parameters and prints the same summary totals."""
    expected = keras_model(inputs)
    received = ours(inputs)
    expected_flat, received_flat = keras.tree.flatten(expected), engine.tree.flatten(received)
    assert len(expected_flat) == len(received_flat)
    if isinstance(expected, dict):
        assert set(received) == set(expected)
        expected_flat = [expected[key] for key in sorted(expected)]
        received_flat = [received[key] for key in sorted(expected)]
    for want, got in zip(expected_flat, received_flat):
        want = np.asarray(want)
        assert got.shape == want.shape
        scale = max(float(np.abs(want).max()), 1e-6)
        error = float(np.abs(np.asarray(got, want.dtype) - want).max())
        assert error <= rtol * scale, f"outputs differ by {error:.3g}, {error / scale:.3g} of the largest output"
    assert ours.count_params() == keras_model.count_params()
    assert summary_totals(ours) == summary_totals(keras_model)


def summary_totals(model):
    """The total, trainable and non-trainable parameter counts ``summary()`` prints."""
    lines = []
    model.summary(print_fn=lambda line, *args, **kwargs: lines.append(line))
    text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(lines))
    return [int(re.search(rf"{kind} params: ([\d,]+)", text).group(1).replace(",", ""))
            for kind in ("Total", "Trainable", "Non-trainable")]
