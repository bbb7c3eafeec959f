"""How ``backward`` hands back the gradients of a call's tensor arguments.

A layer is called as ``layer(inputs, *args, **kwargs)``, and tensors may sit in
any argument: attention's ``value`` and ``key``, an RNN's ``initial_state``.
``backward`` returns the gradients of ``inputs`` in its structure, which is all
most layers take. When other arguments carry tensors that take gradients, it
returns an ``ArgumentGradients`` keyed by the names of ``call``'s parameters,
each in the structure of that argument. The engine binds each call's arguments
to those names, so gradients are routed by structure, never by counting.
"""

import functools
import inspect

from engine import tree


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
def _positional_names(layer_type):
    parameters = list(inspect.signature(layer_type.call).parameters.values())[1:]  # without self
    return tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def argument_names(layer, num_positional):
    """The names of ``layer.call``'s parameters that ``num_positional`` positional arguments bind to."""
    names = _positional_names(type(layer))
    return names[:num_positional] + tuple(f"argument {i}" for i in range(len(names), num_positional))


def first_argument_name(layer):
    """The name of ``layer.call``'s first parameter (``inputs`` for most layers)."""
    names = _positional_names(type(layer))
    return names[0] if names else "inputs"


def by_argument(layer, args, kwargs):
    """The call's arguments as ``{parameter name: value}``, in the flattened order of ``(args, kwargs)``."""
    named = dict(zip(argument_names(layer, len(args)), args))
    named.update(sorted(kwargs.items()))
    return named


def route_input_gradients(layer, grad_inputs, args, kwargs, is_tensor):
    """One gradient (``None`` where none) per tensor among ``args`` and
    ``kwargs``, in their flattened order (the order of a Node's
    ``input_tensors``), given what ``layer.backward`` returned."""
    named = by_argument(layer, args, kwargs)
    if isinstance(grad_inputs, ArgumentGradients):
        unknown = sorted(set(grad_inputs) - set(named))
        if unknown:
            raise ValueError(
                f"backward() of layer {layer.name!r} ({type(layer).__name__}) returned gradients for "
                f"{unknown}, which this call did not receive. Its arguments were {list(named)}; key "
                "ArgumentGradients by the names of call()'s parameters."
            )
        by_name = grad_inputs
    else:
        by_name = {first_argument_name(layer): grad_inputs}
    routed = []
    for name, value in named.items():
        routed.extend(_argument_gradients(layer, name, value, by_name.get(name), is_tensor))
    return routed


def _argument_gradients(layer, name, value, grad, is_tensor):
    """The gradients of the tensors in one argument, given its gradient structure."""
    leaves = tree.flatten(value)
    tensor_flags = [is_tensor(leaf) for leaf in leaves]
    count = sum(tensor_flags)
    if grad is None:
        return [None] * count
    grads = tree.flatten(grad)
    if len(grads) == count:
        return grads
    if len(grads) == len(leaves):
        return [g for g, flag in zip(grads, tensor_flags) if flag]
    raise ValueError(
        f"backward() of layer {layer.name!r} ({type(layer).__name__}) returned {len(grads)} gradients for "
        f"its argument {name!r}, which holds {count} tensors. Return one per tensor, in the structure of "
        f"{name!r} (None for a tensor without gradient); for tensors in other arguments, return "
        "ArgumentGradients(name=gradients, ...) keyed by call()'s parameter names."
    )
