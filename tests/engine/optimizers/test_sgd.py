import pytest

from engine.training.optimizers import SGD
from tests.engine.optimizers.oracle import COMMON_OPTIONS, assert_config_round_trip, assert_matches_keras


@pytest.mark.parametrize("kwargs", [
    {},
    {"learning_rate": 0.1, "momentum": 0.9},
    {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True},
    {"learning_rate": 0.1, "nesterov": True},
    *COMMON_OPTIONS,
    {"learning_rate": 0.05, "momentum": 0.5, "weight_decay": 0.1, "clipnorm": 2.5},
])
def test_matches_keras(kwargs):
    assert_matches_keras("SGD", **kwargs)


def test_config_round_trip():
    clone = assert_config_round_trip("SGD", learning_rate=0.2, momentum=0.8, nesterov=True, clipvalue=1.0)
    assert (clone.momentum, clone.nesterov, clone.learning_rate) == (0.8, True, 0.2)


@pytest.mark.parametrize("momentum", [-0.1, 1.5, "0.9"])
def test_bad_momentum(momentum):
    with pytest.raises(ValueError, match=r"`momentum` must be a float between \[0, 1\]. Received: momentum="):
        SGD(momentum=momentum)
