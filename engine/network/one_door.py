"""One door per layer: a layer's ``call`` and ``forward`` take the same arguments.

Inference runs ``call`` and training runs ``forward`` on the arguments of the
same recorded call, so an argument given by position must reach the same
parameter in both. The rule, checked when a Layer class is created:
``forward``'s parameters are ``call``'s (names, order, kinds and defaults),
except that ``training`` may default differently (``False`` in ``call``,
``True`` in ``forward``); where ``call`` takes no ``training``, ``forward``
takes it after ``call``'s parameters (before a ``**kwargs``). A class that
defines ``forward`` but no ``call`` gets ``call`` from ``forward``:
``forward(...)[0]``, with ``training=False`` unless given.

The engine passes ``training``, ``mask`` and ``<argument>_mask`` (the mask it
finds for an argument, as MultiHeadAttention's ``query_mask``) by keyword, so a
call's arguments given by position from the first of these parameters on are
bound to their names when the layer is called: ``Softmax()(y, mask)`` is
``Softmax()(y, mask=mask)``, and a mask given so wins over the inputs' own.
"""

import inspect

from engine import tree
from engine.network.argument_gradients import call_parameter_names

_SELF = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)


def settle_call_and_forward(cls: type, base: type) -> None:
    """Gives ``cls`` a ``call`` derived from its ``forward`` when it has none of
    its own, and checks that its ``call`` and ``forward`` agree.

    Args:
        cls: the new subclass of ``base``.
        base: the Layer class, whose own ``call`` and ``forward`` are the
            defaults (a layer with neither gradient nor ``forward`` is traced).

    Raises:
        TypeError: ``call``'s and ``forward``'s parameters differ; the message
            names the class, both parameter lists and the ``forward`` to write.

    Example:
        >>> from engine import Layer
        >>> class Twice(Layer):
        ...     def forward(self, inputs, training=True):
        ...         return 2 * inputs, None
        >>> Twice().call(3.0)
        6.0
    """
    if cls.forward is base.forward:
        return
    if cls.call is base.call:
        cls.call = _call_from(cls.forward)
        return
    if "call" not in cls.__dict__ and "forward" not in cls.__dict__:
        return  # both inherited, checked where they were defined together
    call_parameters = _parameters(cls.call)
    forward_parameters = _parameters(cls.forward)
    if not _agree(call_parameters, forward_parameters):
        raise TypeError(
            f"Layer class {cls.__qualname__!r} defines call{_listed(call_parameters)} and "
            f"forward{_listed(forward_parameters)}, whose parameters differ: an argument given by position would "
            "reach another parameter in training than in inference. Give forward call's parameters in call's "
            "order, with the same kinds and defaults (training may default to True); where call takes no "
            f"training, forward takes it after them: def forward{_listed([_SELF, *_expected(call_parameters)])}."
        )


def _parameters(function):
    """The parameters of a method, without ``self``."""
    return list(inspect.signature(function).parameters.values())[1:]


def _listed(parameters):
    return str(inspect.Signature(parameters))


def _agree(call_parameters, forward_parameters):
    def without_training(parameters):
        return [(p.name, p.kind, repr(p.default)) for p in parameters if p.name != "training"]

    forward_names = [p.name for p in forward_parameters]
    if "training" not in forward_names or without_training(call_parameters) != without_training(forward_parameters):
        return False
    where = forward_names.index("training")
    call_names = [p.name for p in call_parameters]
    if "training" in call_names:
        return call_names.index("training") == where and call_parameters[where].kind is forward_parameters[where].kind
    return all(p.kind is p.VAR_KEYWORD for p in forward_parameters[where + 1:])


def _expected(call_parameters):
    """``call``'s parameters as ``forward`` takes them: ``training`` defaulting to True."""
    training = inspect.Parameter("training", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=True)
    parameters = [p.replace(default=True) if p.name == "training" else p for p in call_parameters]
    if "training" in (p.name for p in parameters):
        return parameters
    end = len(parameters)
    if parameters and parameters[-1].kind is inspect.Parameter.VAR_KEYWORD:
        end -= 1
    if any(p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY) for p in parameters[:end]):
        training = training.replace(kind=inspect.Parameter.KEYWORD_ONLY)
    return parameters[:end] + [training] + parameters[end:]


def _call_from(forward):
    """A ``call`` computing ``forward(...)[0]``, with ``forward``'s parameters and ``training=False`` unless given."""
    signature = inspect.signature(forward)
    if "training" in signature.parameters:
        signature = signature.replace(parameters=[
            p.replace(default=False) if p.name == "training" else p for p in signature.parameters.values()])

    def call(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        return self.forward(*bound.args[1:], **bound.kwargs)[0]

    call.__signature__ = signature
    call.__doc__ = f"``{forward.__qualname__}(...)[0]``: the outputs of the training forward pass."
    return call


def engine_keywords_by_name(layer, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``(args, kwargs)`` of a call of ``layer`` with the positional arguments from
    ``call``'s first ``training``, ``mask`` or ``<argument>_mask`` parameter on
    passed by keyword, as the engine passes those.

    Args:
        layer: the layer called.
        args: the call's positional arguments, the inputs first.
        kwargs: its keyword arguments.

    Returns:
        ``(args, kwargs)``, unchanged when no positional argument reaches those parameters.

    Raises:
        TypeError: an argument given both by position and by keyword.

    Example:
        >>> from engine import Layer
        >>> class Recurrent(Layer):
        ...     def call(self, inputs, initial_state=None, mask=None, training=False):
        ...         return inputs
        >>> engine_keywords_by_name(Recurrent(), ("x", "states", "mask"), {})
        (('x', 'states'), {'mask': 'mask'})
    """
    names = call_parameter_names(type(layer))
    start = _first_engine_keyword(names)
    if len(args) <= start:
        return args, kwargs
    named = dict(zip(names[start:], args[start:]))
    twice = sorted(set(named) & set(kwargs))
    if twice:
        raise TypeError(f"Layer {layer.name!r} ({type(layer).__name__}) got {twice} both by position and by keyword; "
                        "pass each argument once.")
    return args[:start], {**named, **kwargs}


def _first_engine_keyword(names):
    """The position of the first parameter the engine passes by keyword (past the inputs), or past the end."""
    for position, name in enumerate(names[1:], start=1):
        if name in ("training", "mask") or name.endswith("_mask") and name[: -len("_mask")] in names:
            return position
    return len(names)


def refuse_non_tensor_positionals(layer, args: tuple) -> None:
    """Checks that a call's positional arguments past the inputs are tensors (arrays,
    KerasTensors, traced values, numbers, which NumPy takes as 0-d arrays; None for
    an absent one), or structures of them: a flag, a string or another object goes
    by keyword, as in Keras, so that it is never taken for a tensor of the graph.

    Args:
        layer: the layer called.
        args: the call's positional arguments, the inputs first.

    Raises:
        ValueError: with Keras' phrase, naming the layer, the value and the keyword to write.

    Example:
        >>> from engine import Layer
        >>> class Flagged(Layer):
        ...     def call(self, x, flag):
        ...         return x
        >>> try:
        ...     refuse_non_tensor_positionals(Flagged(), (1.0, True))
        ... except ValueError as error:
        ...     print(str(error).split(". ")[-1])
        Write flag=True.
    """
    names = call_parameter_names(type(layer))
    for position, value in enumerate(args[1:], start=1):
        leaves = tree.flatten(value)
        if not all(_tensor_like(leaf) for leaf in leaves):
            name = names[position] if position < len(names) else None
            raise ValueError(
                "Only input tensors may be passed as positional arguments. The following argument value "
                f"should be passed as a keyword argument: {value!r} (of type {type(value).__name__}), argument "
                f"{position} of the call of layer {layer.name!r} ({type(layer).__name__}). Write "
                + (f"{name}={value!r}." if name else "it by the name call() gives it.")
            )


def _tensor_like(value) -> bool:
    if value is None or hasattr(value, "shape") and hasattr(value, "dtype"):
        return True
    return isinstance(value, (int, float, complex)) and not isinstance(value, bool)
