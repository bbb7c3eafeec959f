import numpy as np
import pytest

from tests.engine.optimizers.oracle import COMMON_OPTIONS, assert_config_round_trip, assert_matches_keras


@pytest.mark.parametrize("kwargs", [
    {},
    {"learning_rate": 0.1, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-3},
    *COMMON_OPTIONS,
])
def test_matches_keras(kwargs):
    assert_matches_keras("Nadam", **kwargs)


def test_momentum_product_is_shared_state_in_first_weight_dtype():
    ours, _ = assert_matches_keras("Nadam", learning_rate=0.1)
    product = ours.variables[-1]
    assert product.path == "nadam/u_product" and product.value.dtype == np.float32
    mu = [0.9 * (1 - 0.5 * 0.96**t) for t in range(1, 6)]
    np.testing.assert_allclose(product.value, np.prod(mu), rtol=1e-6)


def test_config_round_trip():
    clone = assert_config_round_trip("Nadam", beta_1=0.8, epsilon=1e-5)
    assert (clone.beta_1, clone.epsilon) == (0.8, 1e-5)
