import math

import numpy as np
import pytest

from engine.network import initializers
from engine.utils import set_random_seed
from tests.layers.oracle import keras

SHAPE = (400, 500)  # fan_in 400, fan_out 500: 200,000 samples
FAN_IN, FAN_OUT = SHAPE

# name -> (kind, scale parameter) of the Keras formula for SHAPE:
# "uniform": bounds +-limit; "normal": standard deviation, truncated at 2 std of the untruncated normal.
FORMULAS = {
    "glorot_uniform": ("uniform", math.sqrt(6.0 / (FAN_IN + FAN_OUT))),
    "he_uniform": ("uniform", math.sqrt(6.0 / FAN_IN)),
    "random_uniform": ("uniform", 0.05),
    "glorot_normal": ("truncated", math.sqrt(2.0 / (FAN_IN + FAN_OUT))),
    "he_normal": ("truncated", math.sqrt(2.0 / FAN_IN)),
    "lecun_normal": ("truncated", math.sqrt(1.0 / FAN_IN)),
    "variance_scaling": ("truncated", math.sqrt(1.0 / FAN_IN)),
    "random_normal": ("normal", 0.05),
}
CLASS_OF = {
    "zeros": initializers.Zeros, "ones": initializers.Ones, "constant": initializers.Constant,
    "random_normal": initializers.RandomNormal, "random_uniform": initializers.RandomUniform,
    "glorot_uniform": initializers.GlorotUniform, "glorot_normal": initializers.GlorotNormal,
    "he_uniform": initializers.HeUniform, "he_normal": initializers.HeNormal,
    "lecun_normal": initializers.LecunNormal, "orthogonal": initializers.Orthogonal,
    "variance_scaling": initializers.VarianceScaling,
}
TRUNCATED_STD_FACTOR = 0.87962566103423978  # std of a unit normal truncated to [-2, 2]


def _check_statistics(values, kind, scale):
    assert abs(values.mean()) < 0.01 * scale * 3
    if kind == "uniform":
        # float32 samples may round to just past the bound (by under one float32 step)
        assert values.min() >= -scale * (1 + 1e-6) and values.max() <= scale * (1 + 1e-6)
        assert values.min() < -0.999 * scale and values.max() > 0.999 * scale
        assert values.std() == pytest.approx(scale / math.sqrt(3.0), rel=0.01)
    elif kind == "truncated":
        bound = 2 * scale / TRUNCATED_STD_FACTOR
        assert np.abs(values).max() <= bound * (1 + 1e-6)
        assert np.abs(values).max() > 0.99 * bound
        assert values.std() == pytest.approx(scale, rel=0.01)
    else:
        assert values.std() == pytest.approx(scale, rel=0.01)
        assert np.abs(values).max() > 4 * scale  # not truncated


@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_statistics_follow_the_keras_formula(name):
    kind, scale = FORMULAS[name]
    for initializer in (initializers.get(name), CLASS_OF[name]()):
        assert type(initializer) is CLASS_OF[name]
        values = initializer(SHAPE)
        assert values.shape == SHAPE and values.dtype == np.float32
        _check_statistics(values.astype(np.float64), kind, scale)
    # Keras' own sample has the same statistics.
    _check_statistics(np.asarray(keras.initializers.get(name)(SHAPE), np.float64), kind, scale)


@pytest.mark.parametrize("name", sorted(CLASS_OF))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_shape_and_dtype(name, dtype):
    values = initializers.get(name)((3, 4), dtype=dtype)
    assert values.shape == (3, 4) and values.dtype == np.dtype(dtype)


def test_constant_zeros_ones_match_keras():
    for ours, theirs in [(initializers.get("zeros"), keras.initializers.Zeros()),
                         (initializers.get("ones"), keras.initializers.Ones()),
                         (initializers.Constant(3.5), keras.initializers.Constant(3.5))]:
        np.testing.assert_array_equal(ours((2, 3)), np.asarray(theirs((2, 3))))


def test_arguments_of_random_normal_and_uniform():
    values = initializers.RandomNormal(mean=1.0, stddev=2.0)(SHAPE).astype(np.float64)
    assert values.mean() == pytest.approx(1.0, abs=0.02) and values.std() == pytest.approx(2.0, rel=0.01)
    values = initializers.RandomUniform(minval=2.0, maxval=3.0)(SHAPE)
    assert values.min() >= 2.0 and values.max() <= 3.0 and values.mean() == pytest.approx(2.5, abs=0.01)


@pytest.mark.parametrize("mode, n", [("fan_in", 72), ("fan_out", 144), ("fan_avg", 108)])
@pytest.mark.parametrize("distribution", ["truncated_normal", "untruncated_normal", "uniform"])
def test_variance_scaling_modes_on_a_conv_kernel(mode, n, distribution):
    shape = (3, 3, 8, 16)  # receptive field 9: fan_in 72, fan_out 144
    assert initializers.compute_fans(shape) == (72, 144)
    values = initializers.VarianceScaling(2.0, mode, distribution)((40,) + shape).astype(np.float64)
    # A leading extra axis multiplies both fans by 40.
    std = math.sqrt(2.0 / (40 * n))
    kind = {"truncated_normal": "truncated", "untruncated_normal": "normal", "uniform": "uniform"}[distribution]
    _check_statistics(values, kind, std * math.sqrt(3.0) if kind == "uniform" else std)


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (3, 3, 4, 5), (2, 3, 4, 5, 6)])
def test_compute_fans_matches_keras(shape):
    from keras.src.initializers.random_initializers import compute_fans

    assert initializers.compute_fans(shape) == compute_fans(shape)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (3, 3, 4, 5)])
def test_orthogonal(shape):
    values = initializers.get("orthogonal")(shape, dtype="float64")
    flat = values.reshape(-1, shape[-1])
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(gram, np.eye(min(flat.shape)), atol=1e-12)
    scaled = initializers.Orthogonal(gain=2.0, seed=3)(shape, dtype="float64").reshape(flat.shape)
    gram = scaled.T @ scaled if flat.shape[0] >= flat.shape[1] else scaled @ scaled.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(min(flat.shape)), atol=1e-12)
    theirs = np.asarray(keras.initializers.Orthogonal(gain=2.0)(shape), np.float64).reshape(flat.shape)
    np.testing.assert_allclose(np.linalg.svd(theirs, compute_uv=False), np.linalg.svd(scaled, compute_uv=False),
                               atol=1e-5)


@pytest.mark.parametrize("name", sorted(set(CLASS_OF) - {"zeros", "ones", "constant"}))
def test_seeded_determinism(name):
    set_random_seed(5)
    first = initializers.get(name)((6, 4))
    set_random_seed(5)
    again = initializers.get(name)((6, 4))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, initializers.get(name)((6, 4)))
    seeded = CLASS_OF[name](seed=11)
    np.testing.assert_array_equal(seeded((6, 4)), seeded((6, 4)))
    assert not np.array_equal(seeded((6, 4)), CLASS_OF[name](seed=12)((6, 4)))


@pytest.mark.parametrize("initializer", [
    initializers.Zeros(), initializers.Ones(), initializers.Constant(2.5),
    initializers.RandomNormal(1.0, 0.5, seed=1), initializers.RandomUniform(-1.0, 2.0, seed=2),
    initializers.GlorotUniform(seed=3), initializers.GlorotNormal(), initializers.HeUniform(),
    initializers.HeNormal(seed=4), initializers.LecunNormal(), initializers.Orthogonal(gain=3.0, seed=5),
    initializers.VarianceScaling(0.5, "fan_out", "uniform", seed=6),
])
def test_config_round_trip(initializer):
    config = initializers.serialize(initializer)
    assert config["class_name"] == type(initializer).__name__
    clone = initializers.get(config)
    assert type(clone) is type(initializer)
    assert initializers.serialize(clone) == config
    if config["config"].get("seed", 0) is not None:  # deterministic: the clone draws the same values
        np.testing.assert_array_equal(clone((3, 4)), initializer((3, 4)))


def test_default_configs_match_keras():
    pairs = [(initializers.RandomNormal(), keras.initializers.RandomNormal()),
             (initializers.RandomUniform(), keras.initializers.RandomUniform()),
             (initializers.Constant(1.5), keras.initializers.Constant(1.5)),
             (initializers.Orthogonal(), keras.initializers.Orthogonal())]
    for ours, theirs in pairs:
        assert ours.get_config() == theirs.get_config()


def test_errors():
    with pytest.raises(ValueError, match=r"Unknown initializer: 'glorot_unifrom' .*Did you mean 'glorot_uniform'\?"):
        initializers.get("glorot_unifrom")
    with pytest.raises(TypeError, match="Could not interpret initializer identifier 3"):
        initializers.get(3)
    with pytest.raises(ValueError, match="expects scale > 0, received scale=0"):
        initializers.VarianceScaling(scale=0)
    with pytest.raises(ValueError, match="expects mode in .*received 'fan_sum'"):
        initializers.VarianceScaling(mode="fan_sum")
    with pytest.raises(ValueError, match="expects distribution in .*received 'normal'"):
        initializers.VarianceScaling(distribution="normal")
    with pytest.raises(ValueError, match=r"Orthogonal initializer expects a shape of at least 2 dimensions, .*\(4,\)"):
        initializers.get("orthogonal")((4,))
    with pytest.raises(ValueError, match="not a built-in initializer"):
        initializers.serialize(lambda shape, dtype: np.zeros(shape, dtype))
