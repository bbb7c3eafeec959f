import numpy as np
import pytest


@pytest.fixture
def distinct_inputs():
    """``distinct_inputs(shape, dtype="float32")``: a shuffled ramp, so no window has
    ties and every max is at least 0.1 above the runner-up (well beyond the
    finite-difference step)."""
    def make(shape, dtype="float32"):
        size = int(np.prod(shape))
        return (np.random.default_rng(0).permutation(size).reshape(shape) / 10.0).astype(dtype)

    return make
