"""Where each weight of a model sits: ``{path: Variable}``, the keys of its weight files."""

from engine.network.module import Module


def weight_paths(model):
    """``{path: Variable}`` for every weight of ``model``, each once.

    In a functional model a weight's path starts with the name of its layer,
    prefixed by the names of the nested models it sits in
    (``encoder/dense/kernel``). Below a layer (and everywhere in a subclassed
    model, which has no graph to name its layers by) weights are found where
    they sit, as Keras matches them: attribute names and list positions down to
    the weight's name (``block/d1/kernel``, ``blocks/0/kernel``), the same in
    every instance of the class whatever names its sub-layers were given.

    Args:
        model: a layer or a model (functional, Sequential or subclassed).

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> inner = Model(x, Dense(2, name="dense")(x), name="encoder")
        >>> sorted(weight_paths(Model(x, inner(x))))
        ['encoder/dense/bias', 'encoder/dense/kernel']
    """
    if graph_layers(model) is None:
        return _attribute_paths(model)
    paths, seen = {}, set()
    stack = [("", model)]
    while stack:
        prefix, current = stack.pop()
        sub_models = []
        for layer in graph_layers(current):
            if graph_layers(layer) is not None and layer is not current:
                sub_models.append((f"{prefix}{layer.name}/", layer))
                continue
            for path, variable in _attribute_paths(layer).items():
                if id(variable) not in seen:
                    seen.add(id(variable))
                    paths[f"{prefix}{layer.name}/{path}"] = variable
        stack.extend(reversed(sub_models))
    return paths


def _attribute_paths(module):
    paths, seen = {}, set()
    stack = [("", module)]
    while stack:
        prefix, current = stack.pop()
        graph = graph_layers(current) is not None
        if graph:
            found = {prefix + name: variable for name, variable in weight_paths(current).items()}
        else:
            found = {prefix + variable.name: variable for variable in current._own_variables()}
        for path, variable in found.items():
            if id(variable) not in seen:
                seen.add(id(variable))
                paths[path] = variable
        if graph:
            continue
        children = []
        for attribute, value in current.__dict__.items():
            if isinstance(value, Module):
                children.append((f"{prefix}{attribute}/", value))
            elif isinstance(value, (list, tuple)):
                children += [(f"{prefix}{attribute}/{index}/", item) for index, item in enumerate(value)
                             if isinstance(item, Module)]
        stack.extend(reversed(children))
    return paths


def graph_layers(model):
    """The layers of a model with a graph (functional or Sequential), without
    building a Sequential whose input shape is unknown; None for a layer or a
    subclassed model.

    Args:
        model: a layer or a model.

    Example:
        >>> from engine import Input, Sequential
        >>> from layers import Dense
        >>> [layer.name for layer in graph_layers(Sequential([Dense(2, name="d")]))], graph_layers(Dense(2))
        (['d'], None)
    """
    if not hasattr(type(model), "plan"):
        return None
    functional = model._graph_model()  # engine.network.functional.functional_of, which imports this module
    return list(model._stack) if functional is None else functional.plan.layers
