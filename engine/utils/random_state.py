"""The global random state every draw of nodeweave's starts from (initializers, dropout, shuffles)."""

import numpy as np

_generator = np.random.default_rng()


def set_random_seed(seed: int) -> None:
    """Seeds every random draw nodeweave makes (initializers, dropout, ...).

    Args:
        seed: the seed of the global generator.

    Example:
        >>> from engine.utils import set_random_seed
        >>> set_random_seed(1337)
    """
    global _generator
    _generator = np.random.default_rng(seed)


def random_generator(seed=None) -> np.random.Generator:
    """Returns a generator for ``seed``, or the global one when ``seed`` is None.

    Args:
        seed: an int for a generator of its own, or None for the global one.

    Example:
        >>> from engine.utils import random_generator
        >>> int(random_generator(0).integers(10)) == int(random_generator(0).integers(10))
        True
    """
    if seed is None:
        return _generator
    return np.random.default_rng(seed)
