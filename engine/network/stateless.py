"""``Layer.stateless_call``: a call on given variable values that leaves the layer as it was.

Keras 3 runs the call in a ``StatelessScope``, mapping each variable to a value.
Here the values are assigned to the variables for the call and the variables'
own values put back after it, so the call itself runs as any other; what the
call changed in the non-trainable variables (moving statistics, seed-generator
states) is returned instead of kept.
"""

import numpy as np


def stateless_call(layer, trainable_values, non_trainable_values, args: tuple, kwargs: dict, return_losses=False):
    """Calls ``layer`` with its variables holding the given values; returns
    ``(outputs, non-trainable values after the call)`` and, with
    ``return_losses``, the call's losses too. The layer's variables keep their values.

    Args:
        layer: a built layer.
        trainable_values: one value per ``layer.trainable_variables``, in that order.
        non_trainable_values: one value per ``layer.non_trainable_variables``, in that order.
        args: the call's positional arguments.
        kwargs: its keyword arguments.
        return_losses: whether to return the call's losses (``layer.losses``) as well.

    Raises:
        ValueError: an unbuilt layer, or value lists of other lengths (Keras' phrases).

    Example:
        >>> from layers import Dense
        >>> layer = Dense(1, kernel_initializer="ones")
        >>> _ = layer(np.ones((1, 2), "float32"))
        >>> outputs, _ = stateless_call(layer, [np.full((2, 1), 3.0), np.zeros(1)], [], (np.ones((1, 2)),), {})
        >>> outputs.tolist(), layer.kernel.numpy().ravel().tolist()
        ([[6.0]], [1.0, 1.0])
    """
    name = type(layer).__name__
    if not layer.built:
        raise ValueError(f"To call stateless_call, {name} must be built (i.e. its variables must have been already "
                         f"created). You can build it by calling it on some data. Layer: {layer.name!r}.")
    trainable, non_trainable = layer.trainable_variables, layer.non_trainable_variables
    for argument, given, wanted in (("trainable_variables", trainable_values, trainable),
                                    ("non_trainable_variables", non_trainable_values, non_trainable)):
        if len(given) != len(wanted):
            raise ValueError(f"Argument `{argument}` must be a list of tensors corresponding 1:1 to "
                             f"{name}().{argument}. Received list with length {len(given)}, but expected "
                             f"{len(wanted)} variables.")
    variables = trainable + non_trainable
    values = [np.array(value) for value in [*trainable_values, *non_trainable_values]]
    kept = [np.array(variable) for variable in variables]
    for variable, value in zip(variables, values):
        variable.assign(value)
    try:
        outputs = layer(*args, **kwargs)
        after = [np.array(variable) for variable in non_trainable]
        losses = list(layer.losses)
    finally:
        for variable, value in zip(variables, kept):
            variable.assign(value)
    return (outputs, after, losses) if return_losses else (outputs, after)
