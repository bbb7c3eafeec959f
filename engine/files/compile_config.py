"""A model compiled again from the compile arguments a file recorded (``.nw``, ``.keras``, a clone's)."""

import reprlib

from engine.training.compile_utils import resolves_on_first_batch
from engine.errors import ModelFormatError
from engine.files.registry import lookup


def compile_from_config(model, config, source="the compile config"):
    """Compiles ``model`` with the arguments ``compile_config`` recorded (a new
    optimizer, without state); ``source`` names where the config came from.

    Every loss and metric the config names is made here, at load, even a
    metric that compile itself makes only on the first batch of ``fit`` or
    ``evaluate``: an unknown metric is refused at load, as an unknown loss is.
    A name is kept, for compile to name the metric after it; a name that is no
    loss or metric of ours may be a function of the user's (registered, or
    passed in ``custom_objects``), which Keras names by its name alone.

    Raises:
        ModelFormatError: an optimizer, loss or metric the config names that
            cannot be made, naming its field (``compile_config.metrics[0]``),
            or arguments that do not fit the model's outputs.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> try:
        ...     compile_from_config(Model(x, Dense(2)(x)), {"loss": "mse", "metrics": ["mea"]}, "'m.nw'")
        ... except ModelFormatError as error:
        ...     print(str(error)[:98])
        The compile_config of 'm.nw' cannot be applied: compile_config.metrics[0] is 'mea': Unknown metric
    """
    from engine.training import losses, metrics, optimizers

    if not isinstance(config, dict):
        raise ModelFormatError(f"compile_config of {source} must be a JSON object.")

    def refused(what, problem):
        return ModelFormatError(f"The compile_config of {source} cannot be applied: {what}: {problem} The model "
                                "itself loads with compile=False; compile it yourself then.")

    def made(value, module, kind, field):
        if isinstance(value, list):
            return [made(item, module, kind, f"{field}[{i}]") for i, item in enumerate(value)]
        if isinstance(value, dict) and "class_name" not in value:
            return {key: made(item, module, kind, f"{field}[{key!r}]") for key, item in value.items()}
        if value is None or resolves_on_first_batch(value, kind):
            return value
        try:
            made_value = module.get(value)
        except (TypeError, ValueError, KeyError) as error:
            if not isinstance(value, str):
                raise refused(f"{field} is {reprlib.repr(value)}", error) from error
            unknown = error
        else:
            return value if isinstance(value, str) else made_value
        try:  # a function of the user's, which Keras names by its name alone
            return module.get(lookup(value, kind="function"))
        except (TypeError, ValueError, KeyError):
            raise refused(f"{field} is {value!r}", f"{unknown} If it is a function of yours, pass it to the load "
                          f"as custom_objects={{{value!r}: fn}} or register it.") from unknown

    try:
        optimizer = optimizers.get(config.get("optimizer", "rmsprop"))
    except (TypeError, ValueError, KeyError) as error:
        raise refused(f"compile_config.optimizer is {reprlib.repr(config.get('optimizer'))}", error) from error
    arguments = {argument: made(config.get(argument), module, kind, f"compile_config.{argument}")
                 for argument, module, kind in (("loss", losses, "loss"), ("metrics", metrics, "metric"),
                                                ("weighted_metrics", metrics, "metric"))}
    try:
        model.compile(optimizer=optimizer, loss_weights=config.get("loss_weights"), **arguments)
        if model.compiled_loss is not None:  # fit would match them on its first batch: a file's are checked now
            model.compiled_loss.build()     # (a subclassed model's outputs are known only once it has run)
        if model.compiled_metrics is not None:
            model.compiled_metrics.check()
    except (TypeError, ValueError, KeyError) as error:  # arguments that do not fit the model's outputs
        raise refused("its arguments do not fit the model", f"{type(error).__name__}: {error}") from error
