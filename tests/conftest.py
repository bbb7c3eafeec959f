import os

os.environ.setdefault("KERAS_BACKEND", "jax")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from engine.utils import clear_session, set_random_seed  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_names_and_seed():
    """Every test starts with automatic names at `dense` and fixed seeds (ours and NumPy's)."""
    clear_session()
    set_random_seed(1234)
    np.random.seed(1234)
    yield
