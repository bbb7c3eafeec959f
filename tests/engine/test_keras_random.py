"""keras.random on NumPy: each draw against Keras' (shape, dtype, distribution), and seeding."""

import numpy as np
import pytest

from engine import keras_random as random
from engine.autodiff import GradientTape
from engine.utils import set_random_seed
from layers import Dropout
from tests.layers.oracle import keras

N = 20_000

# name, (our call, Keras' call) on the same arguments, checks of the draws (a sample of N)
DRAWS = {
    "normal": (lambda m, seed: m.normal((N,), mean=2.0, stddev=3.0, seed=seed), dict(mean=2.0, std=3.0)),
    "uniform": (lambda m, seed: m.uniform((N,), minval=-1.0, maxval=3.0, seed=seed),
                dict(mean=1.0, std=4 / 12 ** 0.5, low=-1.0, high=3.0)),
    "truncated_normal": (lambda m, seed: m.truncated_normal((N,), mean=1.0, stddev=2.0, seed=seed),
                         dict(mean=1.0, std=2.0 * 0.87962566, low=-3.0, high=5.0)),
    "randint": (lambda m, seed: m.randint((N,), 3, 7, seed=seed), dict(mean=4.5, std=1.25 ** 0.5, low=3, high=6)),
    "gamma": (lambda m, seed: m.gamma((N,), alpha=3.0, seed=seed), dict(mean=3.0, std=3.0 ** 0.5, low=0.0)),
    "beta": (lambda m, seed: m.beta((N,), alpha=2.0, beta=5.0, seed=seed),
             dict(mean=2 / 7, std=(10 / (49 * 8)) ** 0.5, low=0.0, high=1.0)),
    "binomial": (lambda m, seed: m.binomial((N,), counts=10, probabilities=0.3, seed=seed),
                 dict(mean=3.0, std=2.1 ** 0.5, low=0.0, high=10.0)),
    "categorical": (lambda m, seed: m.categorical(np.log([[0.2, 0.5, 0.3]]), N, seed=seed)[0],
                    dict(mean=1.1, std=0.49 ** 0.5, low=0, high=2)),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_draws_match_keras_in_shape_dtype_and_distribution(name):
    draw, expected = DRAWS[name]
    ours, theirs = draw(random, 1), np.asarray(draw(keras.random, 1))
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    for sample in (ours, theirs):  # both follow the distribution Keras documents
        assert abs(sample.mean() - expected["mean"]) < 0.05 * expected["std"] * 2
        assert abs(sample.std() - expected["std"]) < 0.05 * expected["std"]
        assert sample.min() >= expected.get("low", -np.inf) and sample.max() <= expected.get("high", np.inf)


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_an_integer_seed_repeats_and_a_seed_generator_advances(name):
    draw = DRAWS[name][0]
    np.testing.assert_array_equal(draw(random, 5), draw(random, 5))
    first, second = random.SeedGenerator(5), random.SeedGenerator(5)
    a, b = draw(random, first), draw(random, first)
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(draw(random, second), a)  # same seed: same sequence
    np.testing.assert_array_equal(draw(random, second), b)


def test_no_seed_draws_from_the_global_generator_set_random_seed_seeds():
    set_random_seed(11)
    a = random.normal((4,))
    b = random.uniform((4,), seed=random.SeedGenerator())  # a SeedGenerator without a seed: the global one too
    set_random_seed(11)
    np.testing.assert_array_equal(random.normal((4,)), a)
    np.testing.assert_array_equal(random.uniform((4,)), b)


def test_dtypes_follow_keras_defaults_and_requests():
    assert random.normal((2,)).dtype == np.float32 and random.randint((2,), 0, 3).dtype == np.int32
    assert random.normal((2,), dtype="float64").dtype == np.float64
    assert random.randint((2,), 0, 3, dtype="int64").dtype == np.int64
    assert random.normal(3, seed=1).shape == (3,)


def test_dropout_drops_the_rate_scales_the_rest_and_follows_noise_shape():
    x = np.ones((200, 50), "float32")
    y = random.dropout(x, 0.3, seed=2)
    assert y.dtype == np.float32 and set(np.unique(y)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((y == 0).mean() - 0.3) < 0.02
    ours, theirs = random.dropout(x, 0.3, noise_shape=(None, 1), seed=2), np.asarray(
        keras.random.dropout(x, 0.3, noise_shape=(200, 1), seed=2))
    for sample in (ours, theirs):  # whole rows dropped together
        assert (sample.min(axis=1) == sample.max(axis=1)).all()
    np.testing.assert_array_equal(random.dropout(x, 0.0), x)
    np.testing.assert_array_equal(random.dropout(x, 1.0), np.zeros_like(x))
    with pytest.raises(ValueError, match=r"Expected a float value between 0 and 1. Received: rate=1.5"):
        random.dropout(x, 1.5)


def test_dropout_of_a_traced_input_trains_through_the_mask():
    x = np.arange(1.0, 9.0, dtype="float32").reshape(2, 4)
    with GradientTape() as tape:
        xs = tape.watch(x)
        y = random.dropout(xs, 0.5, seed=3)
        loss = np.sum(y * y)
    mask = random.dropout(np.ones_like(x), 0.5, seed=3)
    np.testing.assert_allclose(tape.gradient(loss, xs), 2 * x * mask * mask)


def test_shuffle_keeps_each_slice_whole_and_every_element():
    x = np.arange(40).reshape(10, 4)
    y = random.shuffle(x, seed=4)
    assert not np.array_equal(x, y)
    assert sorted(map(tuple, y)) == sorted(map(tuple, x))
    z = random.shuffle(x, axis=1, seed=4)
    assert sorted(map(tuple, z.T)) == sorted(map(tuple, x.T))


def test_categorical_draws_each_row_from_its_own_logits():
    logits = np.log([[0.9, 0.1, 1e-9], [1e-9, 1e-9, 1.0]])
    samples = random.categorical(logits, 500, seed=6)
    assert samples.shape == (2, 500) and samples.dtype == np.int32
    assert (samples[1] == 2).all() and abs((samples[0] == 0).mean() - 0.9) < 0.05
    with pytest.raises(ValueError, match=r"2-D tensor with shape \[batch_size, num_classes\]"):
        random.categorical(np.zeros(3), 2)


def test_bad_seeds_are_refused_with_what_was_received():
    with pytest.raises(ValueError, match=r"`seed` must be an integer, a `keras.random.SeedGenerator` instance or None. "
                                         r"Received: seed='1'"):
        random.normal((2,), seed="1")
    with pytest.raises(ValueError, match=r"Expected `seed` to be an integer or None. Received: seed=1.5"):
        random.SeedGenerator(1.5)


def test_layers_draw_from_the_same_seed_generator():
    layer = Dropout(0.5, seed=9)
    assert isinstance(layer.seed_generator, random.SeedGenerator)
    first = layer(np.ones((4, 8), "float32"), training=True)
    np.testing.assert_array_equal(first, random.dropout(np.ones((4, 8), "float32"), 0.5, seed=9))
