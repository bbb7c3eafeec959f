import numpy as np
import pytest

from engine.training import constraints
from tests.layers.oracle import keras


def _weights(shape=(4, 5)):
    rng = np.random.default_rng(0)
    # Columns and rows of very different norms, so that some exceed max_value and some do not.
    return (rng.normal(size=shape) * rng.uniform(0.1, 3.0, size=shape[-1])).astype("float32")


@pytest.mark.parametrize("ours, theirs", [
    (constraints.MaxNorm(), keras.constraints.MaxNorm()),
    (constraints.MaxNorm(max_value=1.5, axis=1), keras.constraints.MaxNorm(max_value=1.5, axis=1)),
    (constraints.NonNeg(), keras.constraints.NonNeg()),
    (constraints.UnitNorm(), keras.constraints.UnitNorm()),
    (constraints.UnitNorm(axis=1), keras.constraints.UnitNorm(axis=1)),
    (constraints.get("max_norm"), keras.constraints.get("max_norm")),
    (constraints.get("non_neg"), keras.constraints.get("non_neg")),
    (constraints.get("unit_norm"), keras.constraints.get("unit_norm")),
])
def test_matches_keras(ours, theirs):
    w = _weights()
    received = ours(w)
    assert received.dtype == np.float32
    np.testing.assert_allclose(received, np.asarray(theirs(w)), atol=1e-6, rtol=1e-6)


def test_properties():
    w = _weights().astype("float64")
    norms = np.linalg.norm(constraints.MaxNorm(1.0)(w), axis=0)
    assert norms.max() <= 1.0 + 1e-6
    small = w / (10 * np.linalg.norm(w, axis=0))  # every column already within the bound
    np.testing.assert_allclose(constraints.MaxNorm(1.0)(small), small, rtol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(constraints.UnitNorm()(w), axis=0), 1.0, rtol=1e-6)
    assert (constraints.NonNeg()(w) >= 0).all()


@pytest.mark.parametrize("name", ["MaxNorm", "UnitNorm"])
def test_axis_list_for_conv_kernels(name):
    # Keras' documented use for a Conv2D kernel (rows, cols, in, out): axis=[0, 1, 2].
    w = _weights((3, 3, 2, 4))
    ours = getattr(constraints, name)(axis=[0, 1, 2])
    theirs = getattr(keras.constraints, name)(axis=[0, 1, 2])
    np.testing.assert_allclose(ours(w), np.asarray(theirs(w)), atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("constraint", [constraints.MaxNorm(3, axis=1), constraints.NonNeg(), constraints.UnitNorm(1)])
def test_config_round_trip(constraint):
    config = constraints.serialize(constraint)
    clone = constraints.get(config)
    assert type(clone) is type(constraint)
    assert constraints.serialize(clone) == config
    assert constraint.get_config() == getattr(keras.constraints, type(constraint).__name__)(
        **constraint.get_config()).get_config()
    assert constraints.serialize(None) is None and constraints.get(None) is None


def test_errors():
    with pytest.raises(ValueError, match=r"Unknown constraint: 'max_nrom' .*Did you mean 'max_norm'\?"):
        constraints.get("max_nrom")
    with pytest.raises(TypeError, match="Could not interpret constraint identifier"):
        constraints.get(2)
