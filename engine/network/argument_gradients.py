"""How ``backward`` hands back the gradients of a call's tensor arguments.

A layer is called as ``layer(inputs, *args, **kwargs)``, and tensors may sit in
any argument: attention's ``value`` and ``key``, an RNN's ``initial_state``.
``backward`` returns the gradients of ``inputs`` in its structure, which is all
most layers take. When other arguments carry tensors that take gradients, it
returns an ``ArgumentGradients`` keyed by the names of ``call``'s parameters,
each in the structure of that argument. The engine binds each call's arguments
to those names once (``engine.network.bound_arguments``) and routes the gradients by
comparing each argument's structure with its gradient's.
"""

import functools
import inspect



class ArgumentGradients(dict):
    """``backward``'s input gradients by ``call`` parameter name, each in the
    structure of that argument (``None`` for an argument without gradient).

    Return one from ``backward`` when tensors beyond the first argument take
    gradients; otherwise return the first argument's gradients as they are.

    Example:
        >>> import numpy as np
        >>> from engine import ArgumentGradients
        >>> grads = ArgumentGradients(inputs=np.ones((2, 3)), initial_state=[np.zeros((2, 4))])
        >>> sorted(grads)
        ['initial_state', 'inputs']
    """

    def __repr__(self):
        return f"ArgumentGradients({super().__repr__()})"


@functools.lru_cache(maxsize=None)
def call_parameter_names(layer_type):
    """The names of ``layer_type.call``'s positional parameters, in order: what ArgumentGradients is keyed by.

    Example:
        >>> from layers import MultiHeadAttention
        >>> call_parameter_names(MultiHeadAttention)[:3]
        ('query', 'value', 'key')
    """
    parameters = list(inspect.signature(layer_type.call).parameters.values())[1:]  # without self
    return tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def first_argument_name(layer):
    """The name of ``layer.call``'s first parameter (``inputs`` for most layers)."""
    return first_argument_name_of(type(layer))


def first_argument_name_of(layer_type):
    """The name of ``layer_type.call``'s first parameter (``inputs`` for most layers).

    Example:
        >>> from layers import Dense, MultiHeadAttention
        >>> first_argument_name_of(Dense), first_argument_name_of(MultiHeadAttention)
        ('inputs', 'query')
    """
    names = call_parameter_names(layer_type)
    return names[0] if names else "inputs"
