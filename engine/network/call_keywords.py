"""The keywords a layer's ``call`` accepts, checked when the layer is called.

A keyword that ``call`` does not take would otherwise be recorded on a Node by a
symbolic call (whose output shapes need not run ``call``) and fail only when the
model runs. ``mask=None`` is accepted by every layer and dropped where ``call``
takes no mask: it asks for no mask, and Keras writes ``mask: null`` in the call
arguments of its configs.
"""

import functools
import inspect

# Handled by the call template for every layer (passed on only where call() takes it).
_TEMPLATE_KEYWORDS = frozenset({"training"})


@functools.lru_cache(maxsize=None)
def _accepted_keywords(call):
    """The keywords ``call`` (a function taking ``self``, then the inputs) accepts besides
    the inputs, or None when it takes ``**kwargs``."""
    parameters = list(inspect.signature(call).parameters.values())[2:]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    keyword_kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(p.name for p in parameters if p.kind in keyword_kinds)


def checked_call_keywords(layer, kwargs: dict) -> dict:
    """``kwargs`` as ``layer``'s call takes them: without a ``mask=None`` that ``call``
    does not accept; a TypeError naming the layer, the keyword and the accepted ones
    for any other keyword ``call`` does not accept.

    Example:
        >>> from layers import Dense
        >>> checked_call_keywords(Dense(2), {"mask": None, "training": True})
        {'training': True}
    """
    if not kwargs:
        return kwargs
    accepted = _accepted_keywords(type(layer).call)
    if accepted is None:
        return kwargs
    if "mask" in kwargs and kwargs["mask"] is None and "mask" not in accepted:
        kwargs = {key: value for key, value in kwargs.items() if key != "mask"}
    unexpected = sorted(set(kwargs) - accepted - _TEMPLATE_KEYWORDS)
    if unexpected:
        names = ", ".join(repr(name) for name in unexpected)
        allowed = sorted(accepted | _TEMPLATE_KEYWORDS)
        raise TypeError(
            f"Layer {layer.name!r} ({type(layer).__name__}) got an unexpected keyword argument"
            f"{'s' if len(unexpected) > 1 else ''} {names} in its call. Its call() accepts: {', '.join(allowed)}"
            + (" (and mask=None, which is ignored)" if "mask" not in accepted else "")
            + ". Pass other values to the layer's constructor, or remove them from the call."
        )
    return kwargs


@functools.lru_cache(maxsize=None)
def call_parameters(cls) -> frozenset:
    """The names of the parameters of ``cls.call`` (looked up once per class).

    Example:
        >>> from layers import Dense
        >>> sorted(call_parameters(Dense))
        ['inputs', 'self', 'training']
    """
    return frozenset(inspect.signature(cls.call).parameters)


@functools.lru_cache(maxsize=None)
def mask_parameters(cls) -> frozenset:
    """The names of ``cls.call``'s parameters ending in ``_mask`` (``query_mask``...), looked up once per class.

    Example:
        >>> from layers import MultiHeadAttention
        >>> sorted(mask_parameters(MultiHeadAttention))
        ['attention_mask', 'key_mask', 'query_mask', 'use_causal_mask', 'value_mask']
    """
    return frozenset(name for name in call_parameters(cls) if name.endswith("_mask"))
