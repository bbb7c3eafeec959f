import pytest

from engine.training.optimizers import AdamW
from tests.engine.optimizers.oracle import COMMON_OPTIONS, assert_config_round_trip, assert_matches_keras


@pytest.mark.parametrize("kwargs", [
    {},
    {"learning_rate": 0.1, "weight_decay": 0.2},
    {"learning_rate": 0.1, "weight_decay": 0.2, "amsgrad": True},
    *COMMON_OPTIONS,
])
def test_matches_keras(kwargs):
    assert_matches_keras("AdamW", **kwargs)


def test_config_round_trip():
    clone = assert_config_round_trip("AdamW", learning_rate=0.01, weight_decay=0.03, clipnorm=1.0)
    assert (clone.weight_decay, clone.clipnorm) == (0.03, 1.0)


def test_weight_decay_is_required():
    assert AdamW().weight_decay == 0.004
    with pytest.raises(ValueError, match="Argument `weight_decay` must be a float. Received: weight_decay=None"):
        AdamW(weight_decay=None)
