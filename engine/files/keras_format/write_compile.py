"""A compiled model's compile arguments and optimizer state, as Keras 3 writes them.

``compile_config`` names the optimizer, losses and metrics with their Keras
modules (``keras.optimizers``, ``keras.losses``, ``keras.metrics``, learning
rate schedules in ``keras.optimizers.schedules``); a loss or metric given as
one of our functions is written by its name, which Keras resolves to its own
function. The optimizer's variables go to ``optimizer/vars/0..n`` of the weight
file: the iteration count, the learning rate, then each trainable weight's
slots, weight by weight in the order of Keras' ``model.trainable_variables``.
"""

import warnings

import numpy as np

_DEFAULT_REDUCTION = "sum_over_batch_size"


class _NotInKeras(Exception):
    """A compile argument Keras has no equivalent for."""


def keras_compile_config(model) -> dict | None:
    """Keras' ``compile_config`` for ``model``, or None when it is not compiled
    or when an argument has no Keras equivalent (a function of the user's own:
    then a warning names it and the file is written uncompiled).

    Args:
        model: a model, compiled or not.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(2)(x))
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> keras_compile_config(model)["optimizer"]["module"]
        'keras.optimizers'
    """
    config = getattr(model, "_compile_config", None)
    if config is None:
        return None
    try:
        return {
            "optimizer": _keras_object(config["optimizer"], "keras.optimizers"),
            "loss": _structure(config["loss"], "keras.losses"),
            "loss_weights": config["loss_weights"],
            "metrics": _structure(config["metrics"], "keras.metrics"),
            "weighted_metrics": _structure(config["weighted_metrics"], "keras.metrics"),
        }
    except _NotInKeras as error:
        warnings.warn(f"Model {model.name!r} is written to the .keras file uncompiled: {error}", stacklevel=3)
        return None


def optimizer_state(model, trainable_in_keras_order: list) -> tuple[str, list] | None:
    """``(optimizer name, [arrays])`` for the ``optimizer/vars`` group, or None
    when the model is not compiled. An optimizer not built yet (before the
    first update) has only its iteration count and learning rate, which Keras
    writes too.

    The slots follow the order of the weights the optimizer was built on,
    Keras' order of ``model.trainable_variables`` (``trainable_in_keras_order``)
    when it reads them back. When the two differ (Keras orders the layers of a
    branching graph by depth), a twin optimizer built on Keras' order names
    each slot's place, and the slot of the same name (the weight's path and
    the slot's kind) fills it.

    Args:
        model: a model, compiled or not.
        trainable_in_keras_order: the model's trainable Variables in the order
            of Keras' ``model.trainable_variables``.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(2)(x))
        >>> model.compile(optimizer="adam", loss="mse")
        >>> model.fit(np.ones((2, 3)), np.ones((2, 2)), verbose=0)  # doctest: +ELLIPSIS
        <...History...>
        >>> name, arrays = optimizer_state(model, model.trainable_weights)
        >>> name, len(arrays)  # iterations, learning rate, two moments per weight
        ('adam', 6)
    """
    optimizer = getattr(model, "optimizer", None)
    if getattr(model, "_compile_config", None) is None or optimizer is None:
        return None
    variables = keras_ordered_variables(optimizer, trainable_in_keras_order) if optimizer.built \
        else optimizer.variables
    if variables is None:
        warnings.warn(
            f"The state of optimizer {optimizer.name!r} is not written to the Keras file of model "
            f"{model.name!r}: its slots cannot be matched to Keras' order of the weights (the trainable "
            "weights changed since the optimizer was built, or two weights share a path). Keras will start "
            "training with fresh moments; save as .nw to keep them.", stacklevel=3)
        return None
    return optimizer.name, [np.array(variable.value) for variable in variables]


def keras_ordered_variables(optimizer, trainable_in_keras_order: list) -> list | None:
    """The variables of the built ``optimizer`` in the order a Keras optimizer
    built on ``trainable_in_keras_order`` keeps them (its ``optimizer/vars/0..n``),
    or None when its slots cannot be matched to that order.

    Keras orders the slots weight by weight in the order of Keras'
    ``model.trainable_variables``, which is not always the order ours was built
    on (Keras orders the layers of a branching graph by depth). A twin
    optimizer built on Keras' order names each slot's place, and the slot of
    the same name (the weight's path and the slot's kind) fills it. Writing
    takes the values in this order; reading assigns ``optimizer/vars/i`` to
    the i-th variable.

    Args:
        optimizer: a built optimizer.
        trainable_in_keras_order: the Variables it updates, in the order of
            Keras' ``model.trainable_variables``.

    Example:
        >>> import numpy as np
        >>> from engine.training.optimizers import SGD
        >>> from engine.network.variable import Variable
        >>> a = Variable(np.zeros(2, "float32"), name="kernel", path="a/kernel")
        >>> b = Variable(np.zeros(3, "float32"), name="kernel", path="b/kernel")
        >>> optimizer = SGD(momentum=0.9)
        >>> optimizer.build([a, b])
        >>> [v.name for v in keras_ordered_variables(optimizer, [b, a])]
        ['iteration', 'learning_rate', 'b_kernel_momentum', 'a_kernel_momentum']
    """
    variables = optimizer.variables
    if [id(v) for v in optimizer._trainable_variables] == [id(v) for v in trainable_in_keras_order]:
        return variables
    twin = type(optimizer).from_config(optimizer.get_config())
    head = len(twin.variables)
    twin.build(trainable_in_keras_order)
    slots = {variable.name: variable for variable in variables[head:]}
    matched = [slots.get(variable.name) for variable in twin.variables[head:]]
    if len(slots) != len(variables) - head or len(matched) != len(slots) or None in matched:
        return None
    return variables[:head] + matched


def _structure(value, module):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return [_structure(v, module) for v in value]
    if isinstance(value, dict) and "class_name" not in value:
        return {k: _structure(v, module) for k, v in value.items()}
    return _keras_object(value, module)


def _keras_object(value, module):
    class_name, config = value["class_name"], dict(value["config"])
    if class_name in ("LossFunctionWrapper", "MeanMetricWrapper"):
        location = str(config.get("fn"))
        if not location.startswith("engine.") or config.get("reduction", _DEFAULT_REDUCTION) != _DEFAULT_REDUCTION:
            raise _NotInKeras(f"{class_name} of {location!r} is not one of Keras' own functions.")
        return location.rsplit(":", 1)[-1]
    if isinstance(config.get("learning_rate"), dict):
        config["learning_rate"] = _keras_object(config["learning_rate"], "keras.optimizers.schedules")
    return {"module": module, "class_name": class_name, "config": config, "registered_name": None}
