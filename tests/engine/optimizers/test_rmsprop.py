import pytest

from tests.engine.optimizers.oracle import COMMON_OPTIONS, assert_config_round_trip, assert_matches_keras


@pytest.mark.parametrize("kwargs", [
    {},
    {"learning_rate": 0.05, "rho": 0.8},
    {"learning_rate": 0.05, "momentum": 0.9},
    {"learning_rate": 0.05, "centered": True},
    {"learning_rate": 0.05, "momentum": 0.5, "centered": True, "epsilon": 1e-3},
    *COMMON_OPTIONS,
])
def test_matches_keras(kwargs):
    assert_matches_keras("RMSprop", **kwargs)


def test_config_round_trip():
    clone = assert_config_round_trip("RMSprop", rho=0.8, momentum=0.5, centered=True)
    assert (clone.rho, clone.momentum, clone.centered) == (0.8, 0.5, True)
