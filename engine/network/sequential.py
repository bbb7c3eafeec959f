"""Sequential: a model of its own, a stack of layers; once its input shape is
known it keeps a ``Functional`` over those layers and runs through it (as Keras 3's
``Sequential._functional``)."""

import inspect

import numpy as np

from engine import tree
from engine.network import eager_masks
from engine.network.call_keywords import call_parameters
from engine.network.functional import Functional, as_model_input, specs_for_shapes
from engine.network.input_layer import Input, InputLayer
from engine.network.keras_tensor import KerasTensor
from engine.network.layer import Layer
from engine.network.layer_calls import BUILD_LOCK
from engine.network.layer_tracing import traced_backward, traced_forward
from engine.network.model import Model
from engine.network.naming import unique_name
from engine.network.output_spec import is_shape as _is_shape


# The attributes of the graph, which an unbuilt Sequential does not have yet (AttributeError, as in
# Keras, so ``hasattr(model, "inputs")`` is False), and how its messages name them.
_GRAPH_ATTRIBUTES = {"inputs": "inputs", "outputs": "outputs", "input": "input", "output": "output",
                     "input_names": "input names", "output_names": "output names",
                     "input_shape": "input shape", "output_shape": "output shape"}


def _run_by_graph(name):
    """Model's method ``name`` (one the trainer calls on flat batches), run by the
    model's Functional, or by Model itself for a model run layer by layer."""
    def run(self, *args, **kwargs):
        if self._functional is None:
            return getattr(Model, name)(self, *args, **kwargs)
        return getattr(self._functional, name)(*args, **kwargs)

    run.__name__ = name
    return run


class Sequential(Model):
    """A stack of layers, each fed the output of the one before.

    Its graph is known as soon as its input shape is: from an ``Input`` added
    first, from ``input_shape=`` on the first layer, from a first layer that is
    itself a model with one input, or else from ``build(input_shape)`` or the
    first call (``fit``, ``evaluate`` and ``predict`` included). It then holds a
    ``Functional`` over the same layers (``_functional``), which runs its calls,
    training steps and masks and answers ``inputs``, ``outputs``,
    ``input_shape``, ``output_shape``, ``plan``...; until then it can be
    compiled, and those attributes raise AttributeError. Called first on a dict
    or list of arrays, it is built with one input per array and passes the
    whole structure to its first layer. As in Keras, it is not a ``Functional``
    itself: ``engine.network.functional.functional_of(model)`` gives the graph of either.

    Args:
        layers: the layers to stack (an ``Input`` may come first).
        trainable: whether training updates the layers' weights.
        name: the model's name.

    Example:
        >>> from layers import Dense
        >>> model = Sequential()
        >>> model.add(Dense(input_shape=(10,), units=10, activation="relu"))
        >>> model.add(Dense(units=1))
        >>> model.output_shape, isinstance(model, Functional), type(model._functional).__name__
        ((None, 1), False, 'Functional')
    """

    _naming_keywords = frozenset({"outputs"})  # model(x, outputs="hidden[0][0]") names tensors, as on a Functional

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name or unique_name("sequential"))
        self._stack = []
        self._names = {}  # name -> layer, of the layers in _stack: add()'s unique-name check in O(1)
        self._functional = None
        self._layer_by_layer = False  # built without a graph: a layer could not say its outputs (see build)
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._maybe_rebuild()

    def __getattr__(self, name):
        # Reached when a graph property below raised AttributeError (the model is not built): explain it.
        if name in _GRAPH_ATTRIBUTES and self.__dict__.get("_functional") is None:
            raise AttributeError(
                f"Sequential model {self.__dict__.get('name')!r} has no defined {_GRAPH_ATTRIBUTES[name]} yet: "
                "it is built once its input shape is known. Add an Input first, pass input_shape= to the first "
                "layer, call build(input_shape), or call the model on data (fit, evaluate and predict do so)."
            )
        return super().__getattr__(name)

    def _child_modules(self):
        # The stacked layers; the Functional over them is a view of those same layers, not a child.
        functional = self.__dict__.get("_functional")
        return [module for module in super()._child_modules() if module is not functional]

    def add(self, layer, rebuild=True):
        """Appends a layer (or an ``Input`` tensor, first only) to the stack.

        A built model calls the layer on its outputs at once, so a layer that
        cannot take them is refused here and the model stays as it was. With
        ``rebuild=False`` the graph is left to be rebuilt by the next call.

        Args:
            layer: a Layer (a model too), or an ``Input`` tensor as first entry.
            rebuild: rebuild the graph now (when the input shape is known).

        Raises:
            ValueError: not a layer, a name already in the stack, an ``Input``
                after other layers, or a layer that cannot take the outputs.

        Example:
            >>> from engine import Input
            >>> from layers import Dense
            >>> model = Sequential(name="stack")
            >>> model.add(Input(shape=(3,)))
            >>> model.add(Dense(2))
            >>> model.output_shape
            (None, 2)
        """
        history = getattr(layer, "_keras_history", None)
        if isinstance(layer, KerasTensor) and history is not None and isinstance(history.layer, InputLayer):
            layer = history.layer
        self._check_addable(layer)
        if not self._stack and getattr(layer, "_batch_input_shape", None) is not None:
            self._push(InputLayer(batch_shape=layer._batch_input_shape))  # the Keras 2 input_shape= style
        if self._functional is not None and rebuild:
            outputs = layer(self._functional.output)
            self._push(layer)
            self._set_graph(self._functional.input, outputs)
            return
        self._push(layer)
        if rebuild:
            self._maybe_rebuild()
        else:
            self._invalidate_graph()

    def _push(self, layer, index=None):
        self._stack.insert(len(self._stack) if index is None else index, layer)
        self._names[layer.name] = layer

    def _check_addable(self, layer):
        if not isinstance(layer, Layer):
            raise ValueError(
                f"Only instances of Layer can be added to a Sequential model; Sequential model {self.name!r} "
                f"received {layer!r} (of type {type(layer).__name__}). Wrap a function in a Lambda layer."
            )
        if self._names.get(layer.name, layer) is not layer:
            raise ValueError(
                "All layers added to a Sequential model should have unique names. Name "
                f"{layer.name!r} is already the name of a layer in Sequential model {self.name!r}: pass "
                "another name= to the new layer."
            )
        if isinstance(layer, InputLayer) and self._stack:
            if isinstance(self._stack[0], InputLayer):
                raise ValueError(
                    f"Sequential model {self.name!r} has already been configured to use input shape "
                    f"{self._stack[0].batch_shape}. You cannot add a different Input layer to it."
                )
            raise ValueError(
                f"An InputLayer can only be the first layer of Sequential model {self.name!r}, "
                f"which already has layers {[other.name for other in self._stack]}."
            )

    def pop(self, rebuild=True):
        """Removes and returns the last layer; a built model stays built (while
        layers remain) on the graph it had up to that layer.

        Args:
            rebuild: rebuild the graph now; False leaves it to the next call.

        Returns:
            The removed layer.

        Raises:
            IndexError: the model has no layers.

        Example:
            >>> from engine import Input
            >>> from layers import Dense
            >>> model = Sequential([Input(shape=(3,)), Dense(4), Dense(2, name="head")])
            >>> model.pop().name, model.output_shape
            ('head', (None, 4))
        """
        if not self.layers:
            raise IndexError(f"Sequential model {self.name!r} has no layers to pop.")
        layer = self._stack.pop()
        if not any(other is layer for other in self._stack):  # the same layer may be stacked twice
            del self._names[layer.name]
        if self._functional is not None and rebuild and self.layers:
            # Every output of the graph comes from the popped layer's call; that call was fed the new outputs.
            last, node_index, _ = tree.flatten(self._functional.output)[0]._keras_history
            self._set_graph(self._functional.input, last.inbound_nodes[node_index].call_args[0])
        elif rebuild:
            self._maybe_rebuild()
        else:
            self._invalidate_graph()
        return layer

    def _invalidate_graph(self):
        self._functional = None  # the next build or call makes a new one
        self._layer_by_layer = False
        self.built = False

    def _set_graph(self, inputs, outputs):
        """Holds a new Functional from ``inputs`` to ``outputs`` (made by the stacked layers)."""
        self._functional = Functional(inputs, outputs, name=self.name)
        if not self._trainable:
            self.trainable = False  # the layers just called join the frozen model
        self.built = True

    def _maybe_rebuild(self):
        self._invalidate_graph()
        if self.layers and self._known_input_shape() is not None:
            self.build()

    def _graph_model(self):
        """The Functional over the stacked layers, built first when the input shape is known; None until then."""
        if self._functional is None and self.layers and self._known_input_shape() is not None:
            self.build()
        return self._functional

    @property
    def layers(self):
        """The stacked layers, without the InputLayer (as in Keras)."""
        return [layer for layer in self._stack if not isinstance(layer, InputLayer)]

    @layers.setter
    def layers(self, _):
        raise AttributeError(
            f"`Model.layers` attribute is reserved and should not be set (Sequential model {self.name!r}). "
            "Use `add()` and `pop()` to change the layers in this model."
        )

    def build(self, input_shape=None):
        """Builds the graph for inputs of ``input_shape`` (batch axis included;
        a dict or list of shapes for several inputs fed to the first layer)."""
        if not self._stack:
            raise ValueError(
                f"Sequential model {self.name!r} cannot be built because it has no layers. Call model.add(layer)."
            )
        known = self._known_input_shape()
        if input_shape is None:
            input_shape = known
            if input_shape is None:
                raise ValueError(
                    f"Sequential model {self.name!r} cannot be built without an input shape: add an Input first, "
                    "pass input_shape= to the first layer, or call build(input_shape)."
                )
        if known is not None and not _compatible(input_shape, known):
            raise ValueError(
                f"Sequential model {self.name!r} has already been configured to use input shape {known}. "
                f"You cannot build it with input_shape {input_shape}."
            )
        if self._functional is not None or self._layer_by_layer:
            return
        first = self._stack[0]
        inputs = first.output if isinstance(first, InputLayer) else _inputs_for(input_shape)
        outputs = inputs
        for layer in self.layers:
            _check_one_positional_input(layer, self.name)
            try:
                outputs = layer(outputs)
            except NotImplementedError:  # the layer cannot say its outputs: run layer by layer, as Keras does
                self._layer_by_layer = self.built = True
                return
        self._set_graph(inputs, outputs)
        if isinstance(inputs, KerasTensor) and not isinstance(first, InputLayer):
            self._push(inputs._keras_history.layer, 0)  # the shape is now fixed, as in Keras

    def _known_input_shape(self):
        """The input shape the stack fixes (an InputLayer first, or a first layer
        called on one input, such as a model), or None."""
        if not self._stack:
            return None
        first = self._stack[0]
        if isinstance(first, InputLayer):
            return first.batch_shape
        try:
            shape = first.input_shape
        except (AttributeError, ValueError):  # a layer never called, or called several times
            return None
        return tuple(shape) if _is_shape(shape) else None

    def _maybe_build(self, inputs):
        if self._functional is not None or self._layer_by_layer:
            return
        with BUILD_LOCK:
            if self._functional is None and not self._layer_by_layer:  # another thread may have built it meanwhile
                self.build(self._known_input_shape() or _shapes_of(inputs, self.name))

    def _build_on(self, x):
        """Builds an unbuilt model from the data of fit, evaluate or predict, as a call does; a
        model run layer by layer then runs on the first sample, as a subclassed model does."""
        self._maybe_build(x)
        if self._layer_by_layer:
            Model._build_on(self, x)

    def _functional_for(self, inputs):
        """The Functional, built first from the shapes of ``inputs`` when the model is not built yet;
        None for a model run layer by layer."""
        self._maybe_build(inputs)
        return self._functional

    def _outputs_known(self):
        if self._layer_by_layer:
            return Model._outputs_known(self)
        return self._functional is not None

    # ------------------------------------------------- the graph, once built
    # Each raises AttributeError until the model is built; ``__getattr__`` then explains why.
    @property
    def plan(self):
        """The ExecutionPlan of the graph (built first when the input shape is known)."""
        if self._functional is None:
            self.build()
        return self._functional.plan

    @property
    def inputs(self):
        """The model's input KerasTensors, flat, in order."""
        return self._graph_attribute("inputs")

    @property
    def outputs(self):
        """The model's output KerasTensors, flat, in order."""
        return self._graph_attribute("outputs")

    @property
    def input(self):
        """The input tensor(s), in the structure the model was built with."""
        return self._graph_attribute("input")

    @property
    def output(self):
        """The output tensor(s)."""
        return self._graph_attribute("output")

    @property
    def input_names(self):
        """The names of the input layers, in order."""
        return self._graph_attribute("input_names")

    @property
    def output_names(self):
        """The names of the outputs (the last layer's)."""
        return self._graph_attribute("output_names")

    def _graph_attribute(self, name):
        if self._functional is None:
            if self._layer_by_layer and name in ("outputs", "output_names"):
                return getattr(Model, name).fget(self)  # known once it has run, as a subclassed model's
            raise AttributeError(name)
        return getattr(self._functional, name)

    # ----------------------------------------- running, through the Functional
    def call(self, inputs, training=False, mask=None, outputs=None):
        """Runs the layers on ``inputs`` (see ``Functional.call``), building the model first if needed.

        A model whose layers cannot all say their outputs from their inputs'
        shapes (a ``compute_output_spec`` raising NotImplementedError) has no
        graph: it calls its layers one after the other, as Keras does, and
        trains as a subclassed model does (its calls traced).
        """
        functional = self._functional_for(inputs)
        if functional is None:
            return self._call_layer_by_layer(inputs, training, mask)
        return functional.call(inputs, training=training, mask=mask, outputs=outputs)

    def _call_layer_by_layer(self, inputs, training, mask):
        for layer in self.layers:
            kwargs = {"training": training} if "training" in call_parameters(type(layer)) else {}
            if mask is not None and "mask" in call_parameters(type(layer)):
                kwargs["mask"] = mask
            inputs = layer(inputs, **kwargs)
            mask = eager_masks.input_mask(inputs)
        return inputs

    def forward(self, inputs, training=True, mask=None, outputs=None):
        functional = self._functional_for(inputs)
        if functional is None:
            return traced_forward(self, inputs, (), training, {} if mask is None else {"mask": mask})
        return functional.forward(inputs, training=training, mask=mask, outputs=outputs)

    def backward(self, tape, grad_outputs):
        if self._functional is None:
            return traced_backward(self, tape, grad_outputs)
        return self._functional.backward(tape, grad_outputs)

    def compute_mask(self, inputs, mask=None):
        functional = self._functional_for(inputs)
        return None if functional is None else functional.compute_mask(inputs, mask)

    def _may_make_masks(self):
        return self._functional is not None and self._functional._may_make_masks()

    def _output_mask_specs(self, inputs, input_mask):
        return self._functional._output_mask_specs(inputs, input_mask)

    def _fed_inputs(self, args):
        return self._functional._fed_inputs(args)

    def _as_array(self, value):
        return as_model_input(value)

    def _standardize_inputs(self, inputs, warn=True, cast_floats=True):
        functional = self._functional_for(inputs)
        if functional is None:
            return Model._standardize_inputs(self, inputs)
        return functional._standardize_inputs(inputs, warn=warn, cast_floats=cast_floats)

    def _input_positions(self, inputs, warn):
        return self._functional._input_positions(inputs, warn)

    def _has_structured_outputs(self):
        return self._functional is not None and self._functional._has_structured_outputs()

    _pack_inputs = _run_by_graph("_pack_inputs")
    _pack_outputs = _run_by_graph("_pack_outputs")
    _run_flat = _run_by_graph("_run_flat")
    _forward_flat = _run_by_graph("_forward_flat")
    _backward_flat = _run_by_graph("_backward_flat")

    def compute_output_spec(self, inputs, **kwargs):
        """The symbolic outputs for symbolic ``inputs``: through the graph once
        the model is built (checked against its inputs), else layer by layer
        without building anything, as Keras does.

        Example:
            >>> from layers import Dense
            >>> Sequential([Dense(4), Dense(8)]).compute_output_shape((1, 2))
            (1, 8)
        """
        if self._functional is not None:
            return self._functional.compute_output_spec(inputs, **kwargs)
        for layer in self.layers:
            inputs = layer.compute_output_spec(inputs)
        return inputs

    def compute_output_shape(self, input_shape):
        """Output shape(s) for input shape(s), as ``Functional.compute_output_shape``; unbuilt, layer by layer."""
        outputs = self.compute_output_spec(specs_for_shapes(input_shape, self.name))
        return tree.map_structure(lambda t: t.shape, outputs)

    def get_config(self):
        from engine.network.functional_config import serialize_layer

        config = {"name": self.name, "trainable": self.trainable,
                  "layers": [serialize_layer(layer) for layer in self._stack]}
        if self._functional is not None and isinstance(self._stack[0], InputLayer):
            config["build_input_shape"] = list(self._stack[0].batch_shape)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """Rebuilds the model from ``get_config()``'s output; the arguments are
        those of ``Functional.from_config``."""
        from engine.errors import as_model_format_error
        from engine.files.registry import loading_scope

        from engine.files.keras_format.config_reader import as_nodeweave_model_config

        with as_model_format_error("Cannot rebuild the Sequential model from its config"), \
                loading_scope(custom_objects, safe_mode):
            return cls._from_config(as_nodeweave_model_config(config))

    @classmethod
    def _from_config(cls, config):
        from engine.network.functional_config import _expect, deserialize_layer

        _expect(isinstance(config, dict) and isinstance(config.get("layers"), list),
                "a Sequential config must be a dict with a list of layers")
        model = cls([deserialize_layer(entry) for entry in config["layers"]],
                    trainable=config.get("trainable", True), name=config.get("name"))
        shape = config.get("build_input_shape")
        if shape is not None:
            _expect(isinstance(shape, list), f"build_input_shape must be a list, received {shape!r}")
            model.build(tuple(shape))
        return model


def _compatible(shape, known):
    return (_is_shape(shape) and len(shape) == len(known)
            and all(a is None or b is None or a == b for a, b in zip(shape, known)))


def _inputs_for(input_shape, name=None):
    """Inputs of ``input_shape`` (one shape, or a dict or list of them), taking
    any batch size: a model built from one batch takes others, and
    TimeDistributed builds its layer with its own batch size. A dict's inputs
    are named by their keys."""
    if _is_shape(input_shape):
        return Input(batch_shape=(None, *tuple(input_shape)[1:]), name=name)
    if isinstance(input_shape, dict):
        return {key: _inputs_for(shape, key) for key, shape in input_shape.items()}
    if isinstance(input_shape, (list, tuple)):
        return [_inputs_for(shape) for shape in input_shape]
    raise ValueError(f"Expected an input shape (a tuple of ints or None, batch axis first), or a dict or list of "
                     f"them; received {input_shape!r}.")


def _shapes_of(inputs, model_name):
    """The shapes of call inputs: an array, or a dict or list of them, each with a batch axis."""
    def shape_of(value):
        shape = tuple(value.shape if hasattr(value, "shape") else np.shape(value))
        if not shape:
            raise ValueError(
                f"Sequential model {model_name!r} has no input shape yet and cannot take it from {value!r}: "
                "expected arrays with a batch axis (or a dict or list of them). Pass such data, or call "
                "build(input_shape) first."
            )
        return shape

    return tree.map_structure(shape_of, inputs)


def _check_one_positional_input(layer, model_name):
    """A Sequential model feeds each layer one tensor: a call that needs more positional arguments cannot run."""
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p.name for p in inspect.signature(layer.call).parameters.values()
                if p.kind in positional and p.default is inspect.Parameter.empty]
    if len(required) > 1:
        raise ValueError(
            f"Layers added to a Sequential model can only have a single positional argument, the input tensor. "
            f"Layer {layer.name!r} ({type(layer).__name__}) in Sequential model {model_name!r} has multiple "
            f"positional arguments: {required}. Give the others defaults (e.g. training=False), or use a "
            "functional Model to pass them."
        )
