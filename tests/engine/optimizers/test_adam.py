import pytest

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
