"""clone_model: the same graph with new layers (and so fresh weights), as in Keras 3.

A functional model is cloned by walking its execution plan once, in order:
each step's layer is replaced by ``clone_function(layer)`` and called (through
``call_function`` when given) on the new tensors of its arguments, the same
walk and argument gathering that running the model uses.
"""

import inspect
import json
from collections.abc import Callable

from engine import tree
from engine.network.functional import Functional
from engine.network.input_layer import Input, InputLayer
from engine.network.keras_tensor import KerasTensor
from engine.network.model import Model
from engine.network.sequential import Sequential


def clone_model(model: Model, input_tensors=None, clone_function: Callable | None = None,
                call_function: Callable | None = None, recursive: bool = False) -> Model:
    """Returns a copy of a functional or Sequential ``model`` made of new layers.

    Args:
        model: the model to clone.
        input_tensors: KerasTensors to build the clone on, in the structure of
            ``model.input`` (one tensor for a Sequential model); by default new
            ``Input`` tensors like the model's.
        clone_function: ``fn(layer) -> layer`` making the layer used in the
            clone for each layer of the model (not its Inputs); by default
            ``layer.__class__.from_config(layer.get_config())``, so weights
            are fresh. ``lambda layer: layer`` reuses the layers. A layer
            shared by several calls is cloned once and stays shared.
        call_function: ``fn(layer, *args, **kwargs) -> outputs`` calling each
            new layer on its arguments (functional models only), e.g. to insert
            layers after some of them.
        recursive: whether nested functional and Sequential models are cloned
            layer by layer with the same arguments (``call_function`` does not
            reach nested Sequential models) rather than passed whole to
            ``clone_function``.

    A compiled model's clone is compiled with the same arguments (a new
    optimizer). A subclassed model is cloned from its config, as
    ``model.__class__.from_config(model.get_config())``; it takes none of the
    other arguments.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense, Dropout
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(2)(Dense(4)(x)))
        >>> def add_dropout(layer, *args, **kwargs):
        ...     out = layer(*args, **kwargs)
        ...     return Dropout(0.5)(out) if isinstance(layer, Dense) else out
        >>> [type(l).__name__ for l in clone_model(model, clone_function=lambda l: l,
        ...                                          call_function=add_dropout).layers]
        ['InputLayer', 'Dense', 'Dropout', 'Dense', 'Dropout']
    """
    return _clone(model, input_tensors, clone_function, call_function, recursive, {})


def _clone(model, input_tensors, clone_function, call_function, recursive, cache):
    if clone_function is not None and not callable(clone_function):
        # Keras checks this too late and fails calling it: TypeError, as there.
        raise TypeError(
            f"Expected `clone_function` argument to be a callable, but {type(clone_function).__name__!r} object is "
            f"not callable. Received: clone_function={clone_function!r}"
        )
    clone_layer = _cached_clone_function(clone_function, call_function, recursive, cache)
    if isinstance(model, Sequential):
        if call_function is not None:
            raise ValueError(
                "`call_function` argument is not supported with Sequential models. In a Sequential model, layers "
                "aren't called at model-construction time (they're merely listed). Use `call_function` with "
                f"Functional models only. Received model {model.name!r} of type '{type(model).__name__}', with "
                f"call_function={call_function!r}."
            )
        clone = _clone_sequential(model, clone_layer, input_tensors)
    elif isinstance(model, Functional):
        clone = _clone_functional(model, clone_layer, call_function, input_tensors)
    else:
        if clone_function is not None or input_tensors is not None or call_function is not None:
            raise ValueError(
                "Arguments `clone_function`, `call_function` and `input_tensors` are only supported for "
                f"Sequential models or Functional models. Received model {getattr(model, 'name', model)!r} of "
                f"type '{type(model).__name__}'. A subclassed model is cloned from its config: call "
                "clone_model(model) alone."
            )
        from engine.network.model import Model

        if not isinstance(model, Model):
            raise ValueError(
                f"Expected `model` argument to be a Model instance (Functional, Sequential or subclassed). "
                f"Received: model={model!r} of type '{type(model).__name__}'."
            )
        return type(model).from_config(model.get_config())
    _compile_like(clone, model)
    return clone


def _cached_clone_function(clone_function, call_function, recursive, cache):
    """``clone_function`` that clones each layer once (shared layers stay
    shared) and, when ``recursive``, clones nested models layer by layer."""
    clone_function = clone_function or _clone_from_config

    def clone(layer):
        if id(layer) not in cache:
            if recursive and isinstance(layer, Sequential):
                cache[id(layer)] = _clone(layer, None, clone_function, None, True, cache)
            elif recursive and isinstance(layer, Functional):
                cache[id(layer)] = _clone(layer, None, clone_function, call_function, True, cache)
            else:
                cache[id(layer)] = clone_function(layer)
        return cache[id(layer)]

    return clone


def _clone_from_config(layer):
    return layer.__class__.from_config(layer.get_config())


def _clone_sequential(model, clone_layer, input_tensors):
    """A Sequential of the cloned layers, starting from ``input_tensors`` or
    from an Input like the model's first InputLayer."""
    layers = [clone_layer(layer) for layer in model.layers]
    first = model._stack[0] if model._stack and isinstance(model._stack[0], InputLayer) else None
    if input_tensors is not None:
        if isinstance(input_tensors, (list, tuple)):
            if len(input_tensors) != 1:
                raise ValueError(
                    f"Argument `input_tensors` must contain a single tensor to clone Sequential model "
                    f"{model.name!r}; received {len(input_tensors)}."
                )
            input_tensors = input_tensors[0]
        layers.insert(0, _input_layer_of(input_tensors, first))
    elif first is not None:
        layers.insert(0, Input(batch_shape=first.batch_shape, dtype=first.dtype, name=first.name,
                               optional=getattr(first, "optional", False))._keras_history.layer)
    clone = Sequential(layers, name=model.name, trainable=model.trainable)
    if model._functional is not None and first is None and input_tensors is None:  # built on several inputs
        clone.build(tree.map_structure(lambda tensor: tensor.shape, model.input))
    return clone


def _input_layer_of(tensor, reference):
    """The InputLayer a Sequential clone starts from for ``tensor``: its own
    when it is an Input, else a new one holding a tensor made directly."""
    if not isinstance(tensor, KerasTensor):
        raise ValueError(
            f"Argument `input_tensors` must be a KerasTensor. Received invalid value: input_tensors={tensor!r}"
        )
    history = tensor._keras_history
    if history is None:
        name = reference.name if reference is not None else None
        return Input(tensor=tensor, name=name, optional=getattr(reference, "optional", False))._keras_history.layer
    if isinstance(history.layer, InputLayer):
        return history.layer
    raise ValueError(
        f"A Sequential model starts from an Input, but input tensor {tensor.name!r} is the output of layer "
        f"{history.layer.name!r}. Pass an Input() tensor, or clone a functional model to build on an "
        "intermediate tensor."
    )


def _clone_functional(model, clone_layer, call_function, input_tensors):
    """Walks the model's plan once: each step's layer, cloned, is called on the
    new tensors of its arguments; then a model of the same class is made."""
    if input_tensors is None:
        input_tensors = tree.map_structure(
            lambda t: Input(batch_shape=t.shape, dtype=t.dtype, name=t.name,
                            optional=getattr(t._keras_history.layer, "optional", False)),
            model.input)
    else:
        if not all(isinstance(t, KerasTensor) for t in tree.flatten(input_tensors)):
            raise ValueError(
                "All entries in `input_tensors` must be KerasTensors. Received invalid values: "
                f"input_tensors={input_tensors!r}"
            )
        if not _same_structure(input_tensors, model.input):
            raise ValueError(
                "`input_tensors` must have the same structure as model.input\n"
                f"Reference structure: {model.input}\nReceived structure: {input_tensors}"
            )
    def clone_step(step, inputs, extra, kwargs):
        layer = clone_layer(step.layer)
        if call_function is not None:
            outputs = call_function(layer, inputs, *extra, **kwargs)
        else:
            outputs = layer(inputs, *extra, **kwargs)
        flat = [outputs] if isinstance(outputs, KerasTensor) else tree.flatten(outputs)
        if len(flat) != len(step.out_slots):
            raise ValueError(
                f"Cloning layer {step.layer.name!r} of model {model.name!r}: the call of its clone "
                f"{layer.name!r} returned {len(flat)} tensors where the original returned {len(step.out_slots)}."
            )
        return flat

    outputs = tree.pack_as(model.output, model.plan.replay(tree.flatten(input_tensors), clone_step))
    cls = type(model) if _functional_like_constructor(type(model)) else Functional
    return cls(input_tensors, outputs, name=model.name)


def _same_structure(first, second):
    """Whether two structures nest the same containers (types included) with the same keys and lengths."""
    if isinstance(second, KerasTensor) or isinstance(first, KerasTensor):
        return isinstance(first, KerasTensor) and isinstance(second, KerasTensor)
    if type(first) is not type(second):
        return False
    if isinstance(second, dict):
        return first.keys() == second.keys() and all(_same_structure(first[k], second[k]) for k in second)
    return len(first) == len(second) and all(_same_structure(a, b) for a, b in zip(first, second))


def _functional_like_constructor(cls):
    """Whether ``cls(inputs, outputs, name=...)`` builds it, as ``Functional``'s constructor does."""
    spec = inspect.getfullargspec(cls.__init__)
    if spec.args[1:] == inspect.getfullargspec(Functional.__init__).args[1:]:
        return True
    return spec.varargs is not None and spec.varkw is not None


def _compile_like(clone, model):
    """Compiles ``clone`` as ``model`` was, from its compile config (new losses,
    metrics and optimizer, as Keras does); the functions it names that no
    registry holds (a loss written as a function) are the model's own."""
    config = getattr(model, "_compile_config", None)
    if config is not None:
        from engine.pickling import custom_objects_of
        from engine.files.registry import loading_scope
        from engine.files.compile_config import compile_from_config

        with loading_scope(custom_objects_of(model, json.dumps(config))):
            compile_from_config(clone, config)
