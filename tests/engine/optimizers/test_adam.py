import numpy as np
import pytest

from engine.network.variable import Variable
from engine.training.optimizers import Adam
from engine.training.optimizers.base import UPDATE_CHUNK

from tests.engine.optimizers.oracle import COMMON_OPTIONS, assert_config_round_trip, assert_matches_keras


@pytest.mark.parametrize("kwargs", [
    {},
    {"learning_rate": 0.1, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-3},
    {"learning_rate": 0.1, "amsgrad": True},
    *COMMON_OPTIONS,
])
def test_matches_keras(kwargs):
    assert_matches_keras("Adam", **kwargs)


def test_config_round_trip():
    clone = assert_config_round_trip("Adam", learning_rate=0.01, beta_1=0.8, amsgrad=True, global_clipnorm=1.0)
    assert (clone.beta_1, clone.amsgrad, clone.global_clipnorm) == (0.8, True, 1.0)


class _OneAtATime(Adam):
    """Adam updating weight by weight: overriding update_step opts out of the joined update."""

    calls = 0

    def update_step(self, gradient, variable, learning_rate):
        type(self).calls += 1
        self._update_together([(gradient, variable)], learning_rate)


@pytest.mark.parametrize("amsgrad", [False, True])
def test_small_weights_updated_together_match_weight_by_weight_bit_for_bit(amsgrad):
    rng = np.random.default_rng(0)
    shapes = [((3, 4), "float32"), ((4,), "float32"), ((2, 2), "float64"), ((UPDATE_CHUNK + 5,), "float32"),
              ((1,), "float64")]
    weights = [rng.normal(size=shape).astype(dtype) for shape, dtype in shapes]
    together = [Variable(w.copy(), name=f"w{i}", path=f"d/w{i}") for i, w in enumerate(weights)]
    alone = [Variable(w.copy(), name=f"w{i}", path=f"d/w{i}") for i, w in enumerate(weights)]
    joined, separate = Adam(learning_rate=0.1, amsgrad=amsgrad), _OneAtATime(learning_rate=0.1, amsgrad=amsgrad)
    _OneAtATime.calls = 0
    for _ in range(3):
        grads = [rng.normal(size=w.shape).astype(w.dtype) for w in weights]
        joined.apply(grads, together)
        separate.apply(grads, alone)
    assert _OneAtATime.calls == 3 * len(shapes)
    for ours, reference in zip(joined.variables + together, separate.variables + alone):
        assert ours.value.dtype == reference.value.dtype and ours.value.shape == reference.value.shape
        np.testing.assert_array_equal(ours.value, reference.value)
    before = [v.value for v in together]
    joined.apply([np.ones_like(w) for w in weights], together)
    assert all(not np.shares_memory(old, new.value) for old, new in zip(before, together))  # old values kept whole
