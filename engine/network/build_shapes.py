"""What ``build`` receives on a layer's first call, as in Keras 3.

A ``build`` with one parameter gets the shape of the call's first argument (a
shape tuple, or shapes in the argument's structure). A ``build`` with several
parameters names them after ``call``'s arguments with a ``_shape`` suffix
(``build(self, query_shape, value_shape)`` for ``call(self, query, value)``)
and gets each argument's shape by name, None for an argument not given.
"""

import functools
import inspect

from engine import tree

_NAMED = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


@functools.lru_cache(maxsize=None)
def build_parameters(cls) -> tuple:
    """The names of the parameters of ``cls.build`` past ``self`` (not ``*args``/``**kwargs``)."""
    parameters = list(inspect.signature(cls.build).parameters.values())[1:]
    return tuple(p.name for p in parameters if p.kind in _NAMED)


def shapes_by_name(layer, args: tuple, kwargs: dict) -> dict | None:
    """The keyword arguments of ``layer.build`` for a call on ``args`` and
    ``kwargs``, or None when ``build`` takes one shape (then it gets the first
    argument's, as always).

    Args:
        layer: the layer about to be built.
        args: the call's positional arguments, the inputs first.
        kwargs: its keyword arguments.

    Returns:
        ``{"<argument>_shape": shape or None}`` for each parameter of ``build``, or None.

    Raises:
        ValueError: a parameter of ``build`` without the ``_shape`` suffix, or
            named after no argument of ``call`` (Keras' phrases).

    Example:
        >>> import numpy as np
        >>> from engine import Layer
        >>> class Pair(Layer):
        ...     def build(self, b_shape, a_shape):
        ...         pass
        ...     def call(self, a, b=None):
        ...         return a
        >>> shapes_by_name(Pair(), (np.ones((2, 3)),), {})
        {'b_shape': None, 'a_shape': (2, 3)}
    """
    names = build_parameters(type(layer))
    if len(names) <= 1:
        return None
    call_signature = inspect.signature(type(layer).call)
    call_names = list(call_signature.parameters)[1:]
    preamble = (f"For a `build()` method with more than one argument, all arguments should have a `_shape` suffix "
                f"and match an argument from `call()`. E.g. `build(self, foo_shape, bar_shape)` For layer "
                f"'{type(layer).__name__}', ")
    for name in names:
        if not name.endswith("_shape"):
            raise ValueError(f"{preamble}Received `build()` argument `{name}`, which does not end in `_shape`.")
        if name[: -len("_shape")] not in call_names:
            raise ValueError(f"{preamble}Received `build()` argument `{name}`, but `call()` does not have argument "
                             f"`{name[: -len('_shape')]}`. Its arguments: {call_names}.")
    bound = call_signature.bind_partial(layer, *args, **kwargs).arguments
    return {name: _shapes(bound.get(name[: -len("_shape")])) for name in names}


def _shapes(value):
    """The shape of a tensor, shapes in the structure of a nested argument, None for None."""
    if value is None:
        return None
    if hasattr(value, "shape"):
        return tuple(value.shape)
    return tree.map_structure(lambda x: None if x is None else tuple(x.shape), value)
