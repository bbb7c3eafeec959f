"""Call-context arguments: values a layer's call hands down to the layers it calls.

``training`` is the built-in one (``engine.network.layer_tracing`` carries it). A layer
may declare more, as in Keras 3, with ``layer._register_call_context_args("foo_mode")``
before its first call. Then, when it is called:

- its value is the one given in the call, else the one an enclosing call of a
  layer that declares it set, else the default of the layer's ``call`` (None
  when ``call`` does not take it);
- ``call`` gets it when it takes a parameter of that name and the value is not
  None; a value ``call`` does not take is not an error, only handed down;
- layers called inside (sub-layers, the layers of a model) that declare it too
  resolve it the same way, so the innermost explicit value wins. A layer that
  does not declare it neither reads it nor hides it from the layers it calls.
"""

import contextvars
import functools
import inspect

# The values of the declared arguments in the calls in progress (None outside any).
_VALUES = contextvars.ContextVar("nodeweave_call_context_args", default=None)


def register(layer, names: tuple) -> None:
    """Declares ``names`` as call-context arguments of ``layer`` (Keras'
    ``Layer._register_call_context_args``).

    Args:
        layer: a Layer not called yet.
        names: the argument names.

    Raises:
        RuntimeError: the layer was called already (its calls so far did not hand the arguments down).
        TypeError: a name that is not a string.

    Example:
        >>> from engine import Layer
        >>> layer = Layer()
        >>> register(layer, ("foo_mode",))
        >>> sorted(layer._call_context_args)
        ['foo_mode', 'training']
    """
    if layer._called:
        raise RuntimeError(
            f"Cannot add call-context args after the layer has been called. Layer {layer.name!r} "
            f"({type(layer).__name__}) was called before {list(names)} were registered: register them in "
            "__init__, or on a new layer before its first call."
        )
    strange = [name for name in names if not isinstance(name, str)]
    if strange:
        raise TypeError(f"Call-context argument names must be strings; layer {layer.name!r} received {strange}.")
    layer._context_args = layer._context_args | frozenset(names) - {"training"}


def call_with_context(layer, run, args: tuple, kwargs: dict):
    """Runs ``run(args, kwargs)``, the call of ``layer``, with its declared
    call-context arguments resolved (see the module docstring) and handed down.

    Args:
        layer: a layer with declared call-context arguments.
        run: the call template, taking ``(args, kwargs)``.
        args: the call's positional arguments.
        kwargs: its keyword arguments.

    Returns:
        What ``run`` returns.

    Example:
        >>> from engine import Layer
        >>> class Shift(Layer):
        ...     def call(self, x, foo_mode=False):
        ...         return x + (1.0 if foo_mode else 0.0)
        >>> class Outer(Layer):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.inner = Shift()
        ...         self.inner._register_call_context_args("foo_mode")
        ...     def call(self, x):
        ...         return self.inner(x)
        >>> outer = Outer()
        >>> outer._register_call_context_args("foo_mode")
        >>> float(outer(0.0, foo_mode=True)), float(outer(0.0))
        (1.0, 0.0)
    """
    outer = _VALUES.get() or {}
    parameters = _call_parameters(type(layer).call)
    kwargs = dict(kwargs)
    values = {}
    for name in layer._context_args:
        if name in kwargs:
            value = kwargs[name] if name in parameters else kwargs.pop(name)
        elif outer.get(name) is not None:
            value = outer[name]
        else:
            value = parameters[name] if name in parameters else None
        values[name] = value
        if name in parameters and value is not None:
            kwargs[name] = value
    token = _VALUES.set({**outer, **values})
    try:
        return run(args, kwargs)
    finally:
        _VALUES.reset(token)


@functools.lru_cache(maxsize=None)
def _call_parameters(call) -> dict:
    """``call``'s named parameters (not ``*args``/``**kwargs``) and their defaults (None for none)."""
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {name: None if p.default is p.empty else p.default
            for name, p in inspect.signature(call).parameters.items() if p.kind in named}
