import pytest

from tests.engine.optimizers.oracle import COMMON_OPTIONS, assert_config_round_trip, assert_matches_keras


@pytest.mark.parametrize("kwargs", [
    {},
    {"learning_rate": 0.1, "beta_1": 0.8, "beta_2": 0.9, "epsilon": 1e-3},
    *COMMON_OPTIONS,
])
def test_matches_keras(kwargs):
    assert_matches_keras("Adamax", **kwargs)


def test_config_round_trip():
    clone = assert_config_round_trip("Adamax", beta_1=0.8, beta_2=0.9)
    assert (clone.beta_1, clone.beta_2) == (0.8, 0.9)
