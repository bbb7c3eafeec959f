"""Global random state: one seed makes weights and dropout masks reproducible."""

import numpy as np

_generator = np.random.default_rng()


def set_random_seed(seed: int) -> None:
    """Seeds every random draw nodeweave makes (initializers, dropout, ...).

    Example:
        >>> from engine.utils import set_random_seed
        >>> set_random_seed(1337)
    """
    global _generator
    _generator = np.random.default_rng(seed)


def random_generator(seed=None) -> np.random.Generator:
    """Returns a generator for ``seed``, or the global one when ``seed`` is None."""
    if seed is None:
        return _generator
    return np.random.default_rng(seed)


def clear_session() -> None:
    """Resets automatic layer names (``dense``, ``dense_1``, ...) as Keras does."""
    from engine.naming import reset_names

    reset_names()
