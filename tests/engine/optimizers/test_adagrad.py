import pytest

from tests.engine.optimizers.oracle import COMMON_OPTIONS, assert_config_round_trip, assert_matches_keras


@pytest.mark.parametrize("kwargs", [
    {},
    {"learning_rate": 0.1, "initial_accumulator_value": 0.5, "epsilon": 1e-3},
    {"learning_rate": 0.1, "initial_accumulator_value": 0.0},
    *COMMON_OPTIONS,
])
def test_matches_keras(kwargs):
    assert_matches_keras("Adagrad", **kwargs)


def test_config_round_trip():
    clone = assert_config_round_trip("Adagrad", initial_accumulator_value=0.3, epsilon=1e-4)
    assert (clone.initial_accumulator_value, clone.epsilon) == (0.3, 1e-4)
