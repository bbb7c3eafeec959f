"""What a layer holds besides the weights it made: its sub-layers, the states of
its seed generators, and the lock that keeps new state out once it is built.

Keras 3 tracks the same things through its ``Tracker``; here they are read from
the layer's attributes when asked for (``engine.network.module``), and this module adds:

- ``StateLock`` (Keras' ``layer._tracker``): locked when the call template has
  built the layer, so that ``add_weight`` inside ``call`` fails at once instead
  of making a new weight at every call; ``unlock()`` lets a layer grow on purpose;
- ``seed_states``: the ``state`` Variables of the seed generators a layer and its
  sub-layers hold (Keras lists them in ``variables``, not in ``weights``);
- ``held_metrics``: the metrics a layer and its sub-layers hold (Keras' ``Layer.metrics``);
- ``untrack_variable``: drops a weight from its layer (Keras' ``_untrack_variable``);
- ``names_made_in_build``: the attributes a layer class's ``build`` assigns, so
  that asking an unbuilt layer for one of them explains that build makes it.
"""

import functools
import inspect

import numpy as np

from engine.network.variable import Variable


class StateLock:
    """Whether a layer may add state (weights); Keras' ``layer._tracker``.

    A view of the layer's flag ``_state_locked`` (a layer keeps a bool, not an
    object, so that a deep graph holds fewer objects for the garbage collector).

    Args:
        layer: the layer whose state it locks.

    Example:
        >>> from engine.network.layer import Layer
        >>> lock = StateLock(Layer())
        >>> lock.lock(); lock.locked
        True
        >>> lock.unlock(); lock.locked
        False
    """

    __slots__ = ("_layer",)

    def __init__(self, layer):
        self._layer = layer

    @property
    def locked(self) -> bool:
        """Whether the layer refuses new state."""
        return self._layer._state_locked

    def lock(self) -> None:
        """Refuses new state from now on."""
        self._layer._state_locked = True

    def unlock(self) -> None:
        """Accepts new state again (a layer that grows after build on purpose)."""
        self._layer._state_locked = False


def refuse_new_state(layer, what: str) -> None:
    """Raises when ``layer`` is built and locked: its state is made in ``__init__`` or ``build``.

    Args:
        layer: the layer asked to add state.
        what: what it was asked to add, for the message (``"weight 'w'"``).

    Raises:
        ValueError: with Keras' phrase ("cannot add new elements of state").
    """
    if getattr(layer, "_state_locked", False):
        raise ValueError(
            f"You cannot add new elements of state (variables or sub-layers) to a layer that is already built. "
            f"Layer {layer.name!r} ({type(layer).__name__}) was asked for {what} after its build: create all state "
            "in __init__() or in build(), or call layer._tracker.unlock() first to grow the layer on purpose."
        )


def is_seed_generator(value) -> bool:
    """Whether ``value`` is a seed generator: a ``state`` variable and ``next()``, as Keras' ``SeedGenerator`` has."""
    return hasattr(value, "state") and callable(getattr(value, "next", None)) and not isinstance(value, type)


def seed_states(layer) -> list:
    """The ``state`` of each seed generator (with a seed) held by ``layer`` or its
    sub-layers, alone or in lists, tuples and dicts, each once.

    Example:
        >>> from engine import Layer
        >>> from engine.keras_random import SeedGenerator
        >>> layer = Layer()
        >>> layer.seeds = [SeedGenerator(1), SeedGenerator(2)]
        >>> [state.numpy().tolist() for state in seed_states(layer)]
        [[1, 0], [2, 0]]
    """
    states = [generator.state for generator in _held(layer, is_seed_generator)]
    return [state for state in states if state is not None]


def _held(layer, wanted) -> list:
    """The values for which ``wanted(value)`` holds, in the attributes of ``layer`` and its
    sub-layers, alone or in lists, tuples and dicts, each once."""
    found, seen = [], set()
    for module in [layer, *layer._submodules()]:
        for value in module.__dict__.values():
            items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else (value,)
            for item in items:
                if wanted(item) and id(item) not in seen:
                    seen.add(id(item))
                    found.append(item)
    return found


def held_metrics(layer) -> list:
    """The metrics (``engine.training.metrics.Metric``: state and ``result()``) held by ``layer`` and its sub-layers.

    Example:
        >>> from engine import Layer
        >>> from engine.training.metrics import Mean
        >>> layer = Layer()
        >>> layer.tracked = Mean(name="tracked")
        >>> [metric.name for metric in held_metrics(layer)]
        ['tracked']
    """
    return _held(layer, lambda value: hasattr(value, "additive_state") and callable(getattr(value, "result", None))
                 and not isinstance(value, type))


def metric_variables(metrics) -> list:
    """The state of ``metrics`` as Variables named ``metric/state`` (copies, read now), as Keras lists them.

    Example:
        >>> from engine.training.metrics import Mean
        >>> [v.path for v in metric_variables([Mean(name="m")])]
        ['m/total', 'm/count']
    """
    return [Variable(np.array(getattr(metric, attribute)), name=attribute, trainable=False,
                     path=f"{metric.name}/{attribute}") for metric in metrics for attribute in metric.additive_state]


def untrack_variable(layer, variable) -> None:
    """Drops ``variable`` from ``layer``'s weights (Keras' ``_untrack_variable``).

    Returns None, so that ``self.w = self._untrack_variable(self.w)`` clears the attribute too.

    Raises:
        ValueError: the variable is not one of the layer's own.

    Example:
        >>> from engine import Layer
        >>> layer = Layer()
        >>> layer.w = layer.add_weight(shape=(2,))
        >>> layer.w = untrack_variable(layer, layer.w)
        >>> layer.weights
        []
    """
    own = layer._tracked("_variables")
    for index, held in enumerate(own):
        if held is variable:
            del own[index]
            return None
    if any(held is variable for held in layer.__dict__.values()):
        return None  # held in an attribute only: the caller clears or deletes it
    raise ValueError(f"Layer {layer.name!r} ({type(layer).__name__}) does not hold variable "
                     f"{getattr(variable, 'path', variable)!r}, so it cannot untrack it. Its weights: "
                     f"{[v.path for v in layer.weights]}")


@functools.lru_cache(maxsize=None)
def names_made_in_build(cls) -> frozenset:
    """The attribute names the ``build`` methods of ``cls`` and its bases use
    (read from their code), the names an unbuilt layer may lack until built.

    Example:
        >>> from layers import Dense
        >>> "kernel" in names_made_in_build(Dense), "units_" in names_made_in_build(Dense)
        (True, False)
    """
    names = set()
    for klass in cls.__mro__:
        build = klass.__dict__.get("build")
        code = getattr(inspect.unwrap(build), "__code__", None) if build is not None else None
        if code is not None:
            names.update(code.co_names)
    return frozenset(names)
