import numpy as np
import pytest

from engine.training import regularizers
from tests.layers.oracle import keras


def _weights(dtype="float32"):
    # Away from 0, where |x| has its kink.
    x = np.random.default_rng(0).normal(size=(4, 5))
    return (np.sign(x) * (np.abs(x) + 0.1)).astype(dtype)


CASES = [
    (regularizers.L1(0.1), keras.regularizers.L1(0.1)),
    (regularizers.L2(0.2), keras.regularizers.L2(0.2)),
    (regularizers.L1L2(l1=0.1, l2=0.2), keras.regularizers.L1L2(l1=0.1, l2=0.2)),
    (regularizers.L1L2(l2=0.3), keras.regularizers.L1L2(l2=0.3)),
    (regularizers.get("l1"), keras.regularizers.get("l1")),
    (regularizers.get("l2"), keras.regularizers.get("l2")),
    # Keras documents "l1_l2" as l1=0.01, l2=0.01 (Keras 3.15's get("l1_l2") itself fails).
    (regularizers.get("l1_l2"), keras.regularizers.L1L2(l1=0.01, l2=0.01)),
]


@pytest.mark.parametrize("ours, theirs", CASES)
def test_value_matches_keras(ours, theirs):
    x = _weights()
    assert ours(x) == pytest.approx(float(theirs(x)), rel=1e-6)


@pytest.mark.parametrize("ours, theirs", CASES)
def test_gradient_matches_central_differences(ours, theirs):
    x = _weights("float64")
    grad = ours.gradient(x)
    numeric = np.empty_like(x)
    h = 1e-6
    for index in np.ndindex(x.shape):
        upper, lower = x.copy(), x.copy()
        upper[index] += h
        lower[index] -= h
        numeric[index] = (ours(upper) - ours(lower)) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-9)
    assert ours.gradient(x.astype("float32")).dtype == np.float32


def test_defaults_and_names():
    assert regularizers.get("l1").get_config() == {"l1": 0.01}
    assert regularizers.get("l2").get_config() == {"l2": 0.01}
    assert regularizers.get("l1_l2").get_config() == {"l1": 0.01, "l2": 0.01}
    assert regularizers.L1L2().get_config() == {"l1": 0.0, "l2": 0.0}
    assert regularizers.get(None) is None
    l2 = regularizers.L2(0.5)
    assert regularizers.get(l2) is l2
    assert regularizers.L1L2(l1=0.5)(np.array([1.0, -2.0])) == pytest.approx(1.5)


@pytest.mark.parametrize("regularizer", [regularizers.L1(0.3), regularizers.L2(0.4),
                                         regularizers.L1L2(0.1, 0.2), regularizers.get("l1_l2")])
def test_config_round_trip(regularizer):
    config = regularizers.serialize(regularizer)
    clone = regularizers.get(config)
    assert type(clone) is type(regularizer)
    assert regularizers.serialize(clone) == config
    x = _weights()
    assert clone(x) == regularizer(x)
    assert regularizers.serialize(None) is None


def test_errors():
    with pytest.raises(ValueError, match=r"Invalid value for argument l1: expected a non-negative float\. "
                                         r"L1 received l1=-0\.1"):
        regularizers.L1(-0.1)
    with pytest.raises(ValueError, match="Invalid value for argument l2: .* L1L2 received l2='a'"):
        regularizers.L1L2(l2="a")
    with pytest.raises(ValueError, match="Invalid value for argument l2: .* L2 received l2=nan"):
        regularizers.L2(float("nan"))
    with pytest.raises(ValueError, match=r"Unknown regularizer: 'l1_l3' .*Did you mean 'l1_l2'\?"):
        regularizers.get("l1_l3")
    with pytest.raises(TypeError, match="Could not interpret regularizer identifier"):
        regularizers.get(0.1)
