"""A model's state as one nested dict of arrays, keyed by variable path (Keras 3's state tree).

``get_state_tree`` groups the model's variables in four families (trainable,
non-trainable, the optimizer's, the metrics') and nests each family by the
parts of the variables' paths: ``"output_a/kernel"`` becomes
``tree["trainable_variables"]["output_a"]["kernel"]``. ``set_state_tree``
takes such a tree (any part of it) and assigns each leaf to the variable of
that path. A metric keeps its state in plain arrays, not Variables: its
variables are read as Variables named after the state (``loss/total``,
``loss/count``), and assigning one writes the metric's state.
"""

import numpy as np

from engine.network.variable import Variable

FAMILIES = ("trainable_variables", "non_trainable_variables", "optimizer_variables", "metrics_variables")
VALUE_FORMATS = ("backend_tensor", "numpy_array")


def metric_states(model):
    """``(path, metric, attribute)`` for each state array of the model's metrics,
    the metrics inside ``compile_metrics`` included, as Keras lists their variables."""
    states = []
    pending = list(model.metrics)
    while pending:
        metric = pending.pop(0)
        inner = getattr(metric, "metrics", None)
        if isinstance(inner, list):  # compile_metrics: a metric made of metrics
            pending[:0] = inner
            continue
        states += [(f"{metric.name}/{attribute}", metric, attribute) for attribute in metric.additive_state]
    return states


def metrics_variables(model):
    """The metrics' state as Variables (copies, read now), by path ``metric/state``."""
    return [Variable(np.array(getattr(metric, attribute)), name=attribute, trainable=False, path=path)
            for path, metric, attribute in metric_states(model)]


def family_variables(model, family):
    """The Variables of one family (see ``FAMILIES``) of ``model``."""
    if family == "optimizer_variables":
        optimizer = getattr(model, "optimizer", None)
        return [] if optimizer is None else optimizer.variables
    if family == "metrics_variables":
        return metrics_variables(model)
    return getattr(model, family)


def get_state_tree(model, value_format="backend_tensor"):
    """The nested dict of the model's variable values (see the module docstring).

    Args:
        model: a built model.
        value_format: ``"backend_tensor"`` (the arrays themselves) or
            ``"numpy_array"`` (copies).

    Raises:
        ValueError: an unknown ``value_format``, or two variables of one family
            with the same path.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(1, name="out")(x))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> tree = get_state_tree(model)
        >>> tree["trainable_variables"]["out"]["kernel"].shape, sorted(tree["optimizer_variables"]["sgd"])
        ((3, 1), ['iteration', 'learning_rate'])
    """
    if value_format not in VALUE_FORMATS:
        raise ValueError(
            f"Invalid `value_format` argument for get_state_tree of model {model.name!r}. Expected one of "
            f"{set(VALUE_FORMATS)}. Received: value_format={value_format!r}."
        )
    state = {}
    for family in FAMILIES:
        flat = {}
        for variable in family_variables(model, family):
            if variable.path in flat:
                raise ValueError(
                    f"The following variable path is found twice in the model: '{variable.path}' (in the "
                    f"{family} of model {model.name!r}). `get_state_tree()` can only be called when all variable "
                    "paths are unique. Make sure to give unique names to your layers (and other objects)."
                )
            flat[variable.path] = variable.value if value_format == "backend_tensor" else np.array(variable.value)
        state[family] = _nest(flat)
    return state


def set_state_tree(model, state_tree):
    """Assigns the values of ``state_tree`` (all of ``get_state_tree``'s families or some) to the model's variables.

    Args:
        model: a built model (compiled, for the optimizer and metrics families).
        state_tree: ``{family: nested dict of values}``.

    Raises:
        ValueError: an unknown family, or a path the family does not have.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(2,))
        >>> model = Model(x, Dense(1, name="out")(x))
        >>> set_state_tree(model, {"trainable_variables": {"out": {"bias": [0.5]}}})
        >>> model.get_layer("out").bias.value
        array([0.5], dtype=float32)
    """
    for family, nested in state_tree.items():
        if family not in FAMILIES:
            raise ValueError(
                f"Unknown variable name: {family!r} in the state tree given to model {model.name!r}. Expected "
                f"keys among {list(FAMILIES)}."
            )
        if family == "metrics_variables":
            targets = {path: (metric, attribute) for path, metric, attribute in metric_states(model)}
        else:
            targets = {variable.path: variable for variable in family_variables(model, family)}
        for path, value in _flatten(nested).items():
            if path not in targets:
                raise ValueError(
                    f"The state tree's {family} hold a value for path {path!r}, which model {model.name!r} does "
                    f"not have. Its {family} are {sorted(targets)}."
                )
            target = targets[path]
            if isinstance(target, Variable):
                target.assign(value)
            else:
                metric, attribute = target
                current = np.asarray(getattr(metric, attribute))
                setattr(metric, attribute, np.broadcast_to(np.asarray(value, current.dtype), current.shape).copy())


def _nest(flat):
    nested = {}
    for path, value in flat.items():
        *parents, leaf = path.split("/")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def _flatten(nested, prefix=""):
    flat = {}
    for key, value in nested.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}/"))
        else:
            flat[f"{prefix}{key}"] = value
    return flat
