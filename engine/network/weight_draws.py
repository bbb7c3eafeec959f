"""Weights drawn on first use, the same whatever the order of first use.

``Layer.add_weight`` gives a built-in initializer's weight a ``PendingDraw``
instead of its values: the Variable knows its shape and dtype, and draws the
values the first time they are read (``value``, ``numpy()``, ``get_weights``,
training, saving). Building a graph then draws nothing, and a weight that is
assigned before it is read (a load, ``set_weights``) is never drawn.

So that a seed still gives the same weights for the same architecture, whatever
the order in which they are first read, each weight drawn from the global
generator (an initializer without a ``seed``) takes one 64-bit number from that
generator when it is created, and draws its values, when first read, from a
generator seeded with that number. The global generator advances once per
weight at creation, so ``engine.utils.set_random_seed`` followed by the same
building code gives the same numbers, and the same weights. An initializer
with a ``seed`` draws from that seed, as when it is called.
"""

import numpy as np

from engine.network import initializers
from engine.utils import random_generator

_BUILT_IN = frozenset(vars(initializers)[name] for name in (
    "Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform", "VarianceScaling", "GlorotUniform",
    "GlorotNormal", "HeUniform", "HeNormal", "LecunNormal", "Orthogonal"))


_RANDOM = initializers.RandomInitializer


class PendingDraw:
    """The initial value of a weight, drawn when ``draw`` is called.

    Args:
        initializer: a built-in initializer.
        shape: the weight's shape, a tuple.
        dtype: its NumPy dtype.
        place: None to call ``initializer``; or an int, the seed of the
            generator that ``initializer.sample`` draws from (see the module docstring).

    Example:
        >>> import numpy as np
        >>> from engine.network.initializers import Ones
        >>> PendingDraw(Ones(), (2,), np.dtype("float32"), None).draw()
        array([1., 1.], dtype=float32)
    """

    __slots__ = ("initializer", "shape", "dtype", "place")

    def __init__(self, initializer, shape, dtype, place):
        self.initializer, self.shape, self.dtype, self.place = initializer, shape, dtype, place

    def draw(self):
        """The initial value: a new array of ``shape`` and ``dtype``."""
        return draw(self.initializer, self.shape, self.dtype, self.place)


def draw(initializer, shape, dtype, place):
    """A weight's initial value, as ``PendingDraw(initializer, shape, dtype, place).draw()``.

    Example:
        >>> import numpy as np
        >>> from engine.network.initializers import GlorotUniform
        >>> a = draw(GlorotUniform(), (2, 2), np.dtype("float32"), 7)
        >>> bool((a == draw(GlorotUniform(), (2, 2), np.dtype("float32"), 7)).all())
        True
    """
    if place is None:
        return np.asarray(initializer(shape, dtype=dtype), dtype=dtype)
    return np.asarray(initializer.sample(np.random.default_rng(place), shape, dtype), dtype=dtype)


def pending_draw(initializer, shape, dtype):
    """How to draw a weight's values later, or None when they must be drawn now
    (an initializer that is not built in may read any state at the time it is called).

    Args:
        initializer: what ``initializers.get`` returned.
        shape: the weight's shape, a tuple of ints.
        dtype: its dtype name.

    Returns:
        A ``PendingDraw``, or None.

    Example:
        >>> from engine.network.initializers import GlorotUniform
        >>> pending_draw(GlorotUniform(), (3, 2), "float32").draw().shape
        (3, 2)
        >>> pending_draw(lambda shape, dtype: None, (3, 2), "float32") is None
        True
    """
    if type(initializer) not in _BUILT_IN:
        return None
    place = None
    if isinstance(initializer, initializers.RandomInitializer) and initializer.seed is None:
        place = _next_place()
    return PendingDraw(initializer, shape, np.dtype(dtype), place)


def drawn_later(initializer):
    """Whether a weight's values from ``initializer`` wait for first use, and the seed of their draw:
    ``(later, place)``, where ``place`` is as ``PendingDraw``'s (``pending_draw`` without the object).

    Example:
        >>> from engine.network.initializers import Zeros
        >>> drawn_later(Zeros()), drawn_later(lambda shape, dtype: None)
        ((True, None), (False, None))
    """
    if type(initializer) not in _BUILT_IN:
        return False, None
    if isinstance(initializer, _RANDOM) and initializer.seed is None:
        return True, _next_place()
    return True, None


def _next_place():
    """A 64-bit number from the global generator: the seed of one weight's draw."""
    return random_generator().bit_generator.random_raw()
