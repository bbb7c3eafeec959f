"""clone_model: the same graph with new layers (and so fresh weights)."""

from engine.functional_config import functional_config, functional_from_config


def clone_model(model, clone_function=None):
    """Returns a copy of ``model``'s graph whose layers are ``clone_function(layer)``
    (by default a new layer from ``layer.get_config()``, with fresh weights).

    A layer shared by several calls is cloned once and stays shared; nested
    models are cloned as wholes.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> copy = clone_model(Model(x, Dense(2)(x)))
    """
    clone_function = clone_function or _clone_layer
    if not hasattr(model, "plan"):
        raise TypeError(f"clone_model expects a functional or Sequential model, received {type(model).__name__}.")
    from engine.sequential import Sequential

    if isinstance(model, Sequential):
        clone = Sequential([clone_function(layer) for layer in model.layers], name=model.name)
        if model._graph_plan is not None:
            clone.build(model.plan.inputs[0].shape)
        return clone
    originals = {layer.name: layer for layer in model.plan.layers}

    def make_layer(entry):
        original = originals[entry["name"]]
        if type(original).__name__ == "InputLayer":
            return _clone_layer(original)
        return clone_function(original)

    return functional_from_config(type(model), functional_config(model), make_layer)


def _clone_layer(layer):
    return type(layer).from_config(layer.get_config())
