import numpy as np
import pytest

from engine.utils import random_generator, set_random_seed
from layers.core.seed_generator import SeedGenerator


def test_a_seed_gives_an_own_generator_seeded_once():
    a, b = SeedGenerator(3), SeedGenerator(3)
    first = a.generator.random(4)
    np.testing.assert_array_equal(first, b.generator.random(4))
    assert not np.array_equal(first, a.generator.random(4))
    assert a.generator is a.generator


def test_no_seed_follows_the_global_generator_at_draw_time():
    unseeded = SeedGenerator()
    set_random_seed(11)
    assert unseeded.generator is random_generator()
    first = unseeded.generator.random(4)
    set_random_seed(11)
    np.testing.assert_array_equal(unseeded.generator.random(4), first)


def test_bad_seed():
    with pytest.raises(ValueError, match=r"Expected `seed` to be an integer or None. Received: seed=1.5"):
        SeedGenerator(1.5)
    with pytest.raises(ValueError, match="Received: seed=True"):
        SeedGenerator(True)
