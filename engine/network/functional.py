"""Functional: a model defined by its input and output KerasTensors.

The graph between them is mapped once, at construction, into an
``ExecutionPlan``; calls, training and everything that looks at the graph read
that plan.
"""

import sys
import warnings

import numpy as np

from engine import extensions, tree
from engine.data.data_adapter import cast_input
from engine.dtypes import dtype_kind, float64_kept
from engine.gc_pause import collector_paused
from engine.network.input_layer import Input, InputLayer
from engine.network.keras_tensor import KerasTensor
from engine.network.mask_of import as_graph_tensor
from engine.network.model import Model
from engine.network.plan import DisconnectedOutputError, ExecutionPlan
from engine.network.variable import Variable


class Functional(Model):
    """A model built from ``inputs`` and ``outputs`` (a tensor, or lists, tuples
    and dicts of tensors, nested as you like).

    Called on NumPy arrays it runs the plan eagerly; called on KerasTensors it
    becomes one Node of a bigger graph, so models nest to any depth. Its inputs
    are given in the structure of ``inputs``: dicts by the keys the model was
    built with, lists by position (see ``_standardize_inputs``).

    ``Model(inputs, outputs)`` returns one; users rarely name this class.

    Args:
        inputs: the ``Input`` tensors: one, or a list, tuple or dict of them.
        outputs: the tensors computed from them, in any nesting.
        name: the model's name (default ``functional``, ``functional_1``...).
        trainable: whether training updates the model's weights.

    Raises:
        ValueError: outputs not computed from the inputs (the message names the
            missing input), or two layers with the same name.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> a, b = Input(shape=(3,), name="a"), Input(shape=(5,), name="b")
        >>> out = Dense(2)(a) + Dense(2)(b)
        >>> model = Model(inputs={"left": a, "right": b}, outputs=out)
        >>> model({"left": np.ones((4, 3)), "right": np.ones((4, 5))}).shape
        (4, 2)
    """

    _naming_keywords = frozenset({"outputs"})

    def __init__(self, inputs, outputs, name=None, trainable=True):
        super().__init__(trainable=trainable, name=name)  # default: functional, or a subclass's snake-case name
        self._init_graph(inputs, outputs)

    def _init_graph(self, inputs, outputs):
        for role, structure in (("inputs", inputs), ("outputs", outputs)):
            for value in tree.flatten(structure):
                if not isinstance(value, KerasTensor):
                    raise ValueError(
                        f"All `{role}` values must be KerasTensors (from Input() or from calling a layer on one), "
                        f"but model {self.name!r} received {type(value).__name__}: {value!r}."
                    )
        outputs = tree.map_structure(as_graph_tensor, outputs)  # a mask spec (t._keras_mask) is computed from t
        if not all(_is_input_tensor(t) for t in tree.flatten(inputs)):
            inputs, outputs = _rebuilt_from_new_inputs(inputs, outputs)
        self._inputs_struct = inputs
        self._outputs_struct = outputs
        try:
            with collector_paused():  # the plan's steps all stay alive: collecting while making them frees nothing
                self._graph_plan = ExecutionPlan(tree.flatten(inputs), tree.flatten(outputs))
        except DisconnectedOutputError as error:
            if isinstance(outputs, KerasTensor):
                raise
            position = next(i for i, t in enumerate(tree.flatten(outputs)) if t is error.output)
            raise ValueError(f"Output with path `{_leaf_paths(outputs)[position]}` is not connected to `inputs` "
                             f"of model {self.name!r}. {error}") from None
        layers = self._graph_plan.layers
        _check_unique_names(layers, self.name)
        self._modules = list(layers)
        if not self._trainable:
            self.trainable = False
        self.built = True

    @property
    def plan(self):
        """The model's ExecutionPlan."""
        return self._graph_plan

    def _graph_model(self):
        return self

    # ------------------------------------------------------------- structure
    @property
    def layers(self):
        return list(self.plan.layers)

    layers = layers.setter(Model.layers.fset)  # reserved, as on every model

    @property
    def inputs(self):
        """The model's input KerasTensors, flat, in order."""
        return list(self.plan.inputs)

    @property
    def outputs(self):
        return list(self.plan.outputs)

    @property
    def input(self):
        """The input tensor(s), in the structure the model was built with."""
        return self._inputs_struct

    @property
    def output(self):
        """The output tensor(s), in the structure the model was built with."""
        return self._outputs_struct

    @property
    def input_names(self):
        """The names of the input layers, in order."""
        return [t.name for t in self.plan.inputs]

    @property
    def output_names(self):
        outputs = self.plan.outputs
        if isinstance(self._outputs_struct, dict):
            return sorted(self._outputs_struct)
        return [t._keras_history.layer.name for t in outputs]

    # ------------------------------------------------------------- execution
    def call(self, inputs, training=False, mask=None, outputs=None):
        """Runs the plan on ``inputs``; with ``outputs`` (tensors of the graph or
        their qualified names, ``"block/conv[0][0]"``, one or in a list or
        dict) returns their values instead, in that structure."""
        arrays = self._standardize_inputs(inputs)
        masks = self._input_masks(inputs, mask)
        if outputs is not None:
            requested_plan = extensions.provided("requested_plan")  # engine.network.requested_outputs, which imports this module
            return tree.pack_as(outputs, requested_plan(self, outputs).run(arrays, training=training, masks=masks))
        return self._pack_outputs(self.plan.run(arrays, training=training, masks=masks))

    def forward(self, inputs, training=True, mask=None, outputs=None):
        if outputs is not None:
            raise ValueError(
                f"model(x, outputs=...) of model {self.name!r} computes values only, without gradients: under a "
                "GradientTape (or in a layer that calls the model while training), call a model ending at those "
                "tensors instead: graph.extract(model, outputs=...)."
            )
        arrays = self._standardize_inputs(inputs, cast_floats=not float64_kept())  # gradient_check keeps float64
        outputs, tape = self.plan.forward(arrays, training=training, masks=self._input_masks(inputs, mask))
        tape.inputs = inputs
        return self._pack_outputs(outputs), tape

    def backward(self, tape, grad_outputs):
        """Gradients of the inputs in the structure they were given in (``None``
        for values no model input reads), and ``{Variable: gradient}``."""
        inputs = tape.inputs
        flat_grads = tree.flatten(grad_outputs) if self._has_structured_outputs() else [grad_outputs]
        grad_inputs, grad_weights = self.plan.backward(tape, flat_grads)
        leaves = tree.flatten(inputs)
        grads = [None] * len(leaves)
        for position, grad in zip(self._input_positions(inputs, warn=False), grad_inputs):
            if grad is not None and leaves[position] is not None:
                grads[position] = np.reshape(grad, np.shape(leaves[position]))  # undoes a rank adjustment
        return tree.pack_as(inputs, grads), grad_weights

    def compute_mask(self, inputs, mask=None):
        """The masks of the outputs, as the layers inside compute them from
        ``inputs`` and their ``mask`` (in the inputs' structure); None when
        no output carries one. Runs the graph again: masks depend on values."""
        if mask is None and not self.plan.uses_masks:
            return None
        masks = self.plan.output_masks(self._standardize_inputs(inputs), self._input_masks(inputs, mask))
        return None if all(m is None for m in masks) else self._pack_outputs(masks)

    def _may_make_masks(self):
        return self.plan.uses_masks

    def _output_mask_specs(self, inputs, input_mask):
        """Without an input mask, the specs the inner outputs got when the
        inner graph was built; with one, those the inner graph gives when it is
        replayed on symbolic inputs carrying it (nothing runs on examples, which
        could fail where a dimension is unknown and cost a declared shape's size)."""
        if input_mask is None:
            return self._pack_outputs([tensor._keras_mask for tensor in self.plan.outputs])
        specs = [KerasTensor(tensor.shape, tensor.dtype) for tensor in self._standardize_inputs(inputs)]
        for spec, mask in zip(specs, self._input_masks(inputs, input_mask)):
            if mask is not None:
                spec._set_mask(KerasTensor(mask.shape, "bool"))
        outputs = self.plan.replay(specs, lambda step, args, extra, kwargs: tree.flatten(
            step.layer._symbolic_outputs((args, *extra), kwargs)))
        return self._pack_outputs([tensor._keras_mask for tensor in outputs])

    def _input_masks(self, inputs, mask):
        """``mask`` (in the structure of ``inputs``) as the plan takes it: one
        entry per model input, in input order; None for no mask."""
        if mask is None:
            return None
        leaves = tree.flatten(mask)
        return [leaves[position] for position in self._input_positions(inputs, warn=False)]

    def compute_output_spec(self, inputs, **kwargs):
        """The outputs (KerasTensors, in the output structure) for symbolic
        ``inputs``: the model's own when the inputs have its input shapes, else
        each layer's ``compute_output_spec`` along the plan."""
        if kwargs.get("outputs") is not None:
            raise ValueError(
                f"model(x, outputs=...) returns the values of intermediate tensors of model {self.name!r} for "
                "arrays; on symbolic tensors, extract a model first: graph.extract(model, outputs=...)(x)."
            )
        specs = self._standardize_inputs(inputs, warn=False)  # as in Keras, only eager calls warn of a mismatch
        if all(s.shape == t.shape and s.dtype == t.dtype for s, t in zip(specs, self.plan.inputs)):
            outputs = self.plan.outputs
        else:
            outputs = self._output_specs(specs)
        return self._pack_outputs([KerasTensor(t.shape, t.dtype) for t in outputs])

    def compute_output_shape(self, input_shape):
        """Output shape(s) for input shape(s) given in the structure of the
        model's inputs (a tuple for one input), so that wrappers such as
        ``TimeDistributed`` take a model like any layer.

        Example:
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(None, 4))
            >>> Model(x, Dense(3)(x)).compute_output_shape((2, 7, 4))
            (2, 7, 3)
        """
        outputs = self.compute_output_spec(specs_for_shapes(input_shape, self.name))
        return tree.map_structure(lambda t: t.shape, outputs)

    def _output_specs(self, specs):
        """The flat output KerasTensors for flat input KerasTensors ``specs``: each
        step of the plan computes its outputs' specs from its inputs' specs."""
        return self.plan.replay(specs, lambda step, inputs, extra, kwargs: tree.flatten(
            step.layer.compute_output_spec(inputs, *extra, **kwargs)))

    def get_config(self):
        from engine.network.functional_config import functional_config

        return functional_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """Rebuilds a model (fresh weights) from ``get_config()``'s output.

        Args:
            config: the config dict.
            custom_objects: ``{"Name": class_or_function}`` for this call only.
            safe_mode: True never imports code named by the config; False allows
                it; None (the default) keeps the setting of the load this call is
                part of, which is safe mode outside any load.
        """
        from engine.errors import as_model_format_error
        from engine.network.functional_config import functional_from_config
        from engine.files.keras_format.config_reader import as_nodeweave_model_config
        from engine.files.registry import loading_scope

        with as_model_format_error("Cannot rebuild the model from its config"), \
                loading_scope(custom_objects, safe_mode):
            return functional_from_config(cls, as_nodeweave_model_config(config))

    def _pack_inputs(self, arrays):
        return tree.pack_as(self._inputs_struct, arrays)

    def _run_flat(self, arrays, training=False):
        self._clear_added_losses()  # losses list what the layers added in this run only
        return self.plan.run(arrays, training=training)

    def _forward_flat(self, arrays):
        return self.plan.forward(arrays, training=True)

    def _backward_flat(self, tape, grad_outputs):
        return self.plan.backward(tape, grad_outputs, input_gradients=False)[1]

    def _outputs_known(self):
        return True

    def _has_structured_outputs(self):
        return isinstance(self._outputs_struct, (list, tuple, dict))

    def _pack_outputs(self, flat):
        if self._has_structured_outputs():
            return tree.pack_as(self._outputs_struct, flat)
        return flat[0]

    def _fed_inputs(self, args):
        leaves = tree.flatten(args[0])
        return [leaves[position] for position in self._input_positions(args[0], warn=False)]

    def _as_array(self, value):
        return as_model_input(value)

    # ---------------------------------------------------------------- inputs
    def _standardize_inputs(self, inputs, warn=True, cast_floats=True):
        """The flat values for ``self.inputs`` from call inputs, checked.

        ``inputs`` follow the structure given to the model (a value, a list, a
        dict, or any nesting of them; see ``_input_positions``). Arrays are cast
        to their Input's dtype, as Keras does (numbers only: complex values,
        strings and objects raise), and a trailing axis of size 1 is dropped or
        added where the ranks differ by it; shapes must then match, and every
        array must hold the same number of samples. ``None`` is accepted for an
        ``Input(optional=True)``. Symbolic inputs are checked the same way and
        returned as KerasTensors of the standardized shape and dtype. With
        ``cast_floats=False`` float arrays keep their float dtype.
        """
        if type(inputs) is np.ndarray and isinstance(self._inputs_struct, KerasTensor):  # the common case, fast
            return [self._standardize_input(0, inputs, cast_floats)]
        leaves = tree.flatten(inputs)
        flat = [leaves[position] for position in self._input_positions(inputs, warn)]
        result = [self._standardize_input(index, value, cast_floats) for index, value in enumerate(flat)]
        self._check_batch_sizes(result)
        return result

    def _input_positions(self, inputs, warn):
        """For each model input, in ``self.inputs`` order, the index of its value
        among ``tree.flatten(inputs)``.

        Dicts are matched by the keys of the structure the model was built with
        (at any depth), lists and tuples by position. Keys the model does not
        have are ignored with a warning. A dict given to a model built from a
        list of Inputs (or one Input) is matched by Input name. Other structures
        holding the right number of values are taken in flat order with a
        warning, except a list for a dict whose keys are not sorted, which is
        ambiguous and raises (as in Keras).
        """
        struct = self._inputs_struct
        indexed = tree.pack_as(inputs, range(len(tree.flatten(inputs))))
        if isinstance(indexed, dict) and _is_flat(struct):
            return self._positions_by_name(inputs, indexed)
        ignored = []
        positions = _match(struct, indexed, "", ignored, self.name)
        if positions is not None:
            if ignored and warn:
                warnings.warn(f"{self._structure_mismatch(inputs)}\nThe keys {ignored} match no input of the model "
                              "and are ignored.")
            return positions
        if isinstance(indexed, dict) or (isinstance(struct, dict) and list(struct) != sorted(struct)):
            raise ValueError(
                f"{self._structure_mismatch(inputs)}\nPass the inputs in the structure the model was built with"
                + ("" if isinstance(indexed, dict) else " (a dict: its keys are not in sorted order, so the "
                   "order of a list is ambiguous)") + "."
            )
        positions = list(range(len(tree.flatten(indexed))))
        if len(positions) != len(self.plan.inputs):
            expected = (f"named input(s) with keys {list(struct)}" if isinstance(struct, dict) else
                        f"input(s) {self.input_names}")
            raise ValueError(
                f"Model {self.name!r} expects {len(self.plan.inputs)} {expected}, but it received "
                f"{len(positions)}. Pass them in the structure the model was built with: "
                f"{_describe_structure(struct)}."
            )
        if warn and not (len(positions) == 1 and len(tree.flatten(struct)) == 1):
            warnings.warn(self._structure_mismatch(inputs))
        return positions

    def _positions_by_name(self, inputs, indexed):
        names = self.input_names
        missing = [name for name in names if name not in indexed]
        if missing:
            raise ValueError(
                f'Missing data for input "{missing[0]}": model {self.name!r} expects inputs named {names}; received '
                f"keys {list(inputs)} (missing: {missing}). A dict fed to a model built from a list of Inputs (or "
                "one Input) is matched by Input name."
            )
        if not all(isinstance(indexed[name], int) for name in names):
            raise ValueError(f"{self._structure_mismatch(inputs)}\nPass one array per Input name.")
        return [indexed[name] for name in names]

    def _structure_mismatch(self, inputs):
        """Keras' message for inputs whose structure differs from the model's."""
        return (
            f"The structure of `inputs` doesn't match the expected structure of model {self.name!r}.\n"
            f"Expected: {_describe_structure(self._inputs_struct)}\nReceived: inputs={_describe_structure(inputs)}"
        )

    def _standardize_input(self, index, value, cast_floats):
        spec = self.plan.inputs[index]
        if value is None:
            layer = spec._keras_history.layer
            if isinstance(layer, InputLayer) and not layer.optional:
                raise ValueError(
                    f"The input {spec.name!r} is not optional, but None was passed. Please provide a valid tensor "
                    f"(input {index} of model {self.name!r}, shape {spec.shape}), or build the model from "
                    f"Input(..., optional=True) to let it be None."
                )
            return None
        if isinstance(value, KerasTensor):
            shape = self._adjusted_shape(index, value.shape)
            _check_shape(shape, spec.shape, index, spec.name, self.name)
            if shape == value.shape and value.dtype == spec.dtype:
                return value
            return KerasTensor(shape, spec.dtype)
        value = np.asarray(value)
        keeps_float = not cast_floats and value.dtype.kind == "f" and dtype_kind(spec.dtype) == "f"
        if value.dtype != spec.dtype and not keeps_float:
            value = cast_input(value, spec.dtype, f"Input {index} ({spec.name!r}) of model {self.name!r}")
        shape = self._adjusted_shape(index, value.shape)
        _check_shape(shape, spec.shape, index, spec.name, self.name)
        return value.reshape(shape) if shape != value.shape else value

    def _adjusted_shape(self, index, shape):
        """``shape`` with a trailing axis of size 1 dropped or added to reach the
        rank of input ``index``, as Keras does; other rank differences raise."""
        expected = self.plan.inputs[index].shape
        shape = tuple(shape)
        if len(shape) == len(expected):
            return shape
        if len(shape) == len(expected) + 1 and shape[-1] == 1:
            return shape[:-1]
        if len(shape) == len(expected) - 1 and expected[-1] == 1:
            return shape + (1,)
        path = _leaf_paths(self._inputs_struct)[index]
        raise ValueError(
            f"Invalid input shape for input {index} of model {self.name!r} with name "
            f"{self.plan.inputs[index].name!r} and path {path!r}. Expected shape {expected}, but input has "
            f"incompatible shape {shape}. Ranks may differ only by a trailing axis of size 1."
        )

    def _check_batch_sizes(self, values):
        batch_sizes = {n: v.shape[0] for n, v in zip(self.input_names, values)
                       if v is not None and not isinstance(v, KerasTensor) and v.ndim}
        if len(set(batch_sizes.values())) > 1:
            raise ValueError(
                f"Model {self.name!r} received inputs with different batch sizes: {batch_sizes}. Every input "
                "holds the same samples, so pass the same number of rows (axis 0) for each."
            )


def functional_of(layer):
    """The Functional that holds ``layer``'s graph of layer calls, for any model with one.

    A functional model is its own; a Sequential model holds one over its
    layers once its input shape is known (built here if it is known but the
    model is not built yet). The tools that read, edit or export a graph ask
    this, so a Sequential model, nested or not, is treated as the functional
    model it runs through.

    Args:
        layer: any layer or model.

    Returns:
        The Functional, or None: a layer, a subclassed model, or a Sequential
        model whose input shape is not known yet.

    Example:
        >>> from engine import Input, Model, Sequential
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(2)(x))
        >>> functional_of(model) is model, functional_of(Dense(2)), functional_of(Sequential([Dense(2)]))
        (True, None, None)
        >>> stack = Sequential([Input(shape=(3,)), Dense(2)])
        >>> functional_of(stack) is stack._functional, functional_of(stack).layers == stack._stack
        (True, True)
    """
    return layer._graph_model() if isinstance(layer, Model) else None


def as_model_input(value):
    """A value as a model call passes it on to input standardization: None for an
    optional input, a Variable's array, any other value as an array (the model
    casts it to its Input's dtype later).

    Args:
        value: one input value of a model call.

    Example:
        >>> as_model_input([1, 2]).dtype.kind, as_model_input(None)
        ('i', None)
    """
    if value is None:
        return None
    return np.asarray(value.value if isinstance(value, Variable) else value)


def functional_subclass(cls: type) -> type:
    """The functional variant of a ``Model`` subclass: what ``cls(inputs, outputs)`` makes.

    Keras puts ``Functional`` into the subclass's bases; here the subclass is left
    as written and a class is derived from it and ``Functional``, once per subclass,
    with its name. Its method order is the subclass's own methods (``train_step``,
    ``compute_loss``...), then Functional's graph, then Model's, so the overrides
    run on a functional model and ``isinstance(model, cls)`` holds.

    Args:
        cls: a subclass of ``Model``.

    Returns:
        ``cls`` itself when it already is a Functional, else its variant.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> class CustomModel(Model):
        ...     pass
        >>> x = Input(shape=(3,))
        >>> model = CustomModel(x, Dense(2)(x))
        >>> isinstance(model, CustomModel), type(model).__name__, model.name, model(np.ones((4, 3))).shape
        (True, 'CustomModel', 'custom_model', (4, 2))
    """
    if issubclass(cls, Functional):
        return cls
    variant = cls.__dict__.get("_functional_variant")
    if variant is None:
        # Made under a private name, which the registry of built-in layers skips: the subclass is the one registered.
        variant = type(f"_{cls.__name__}", (cls, Functional), {
            "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__,
            "_user_class": cls})
        variant.__name__ = cls.__name__
        cls._functional_variant = variant
    return variant


def _is_input_tensor(tensor):
    """Whether ``tensor`` enters a model as it is: an Input's, or one no layer made (the plan checks it)."""
    history = tensor._keras_history
    return history is None or history.layer is None or isinstance(history.layer, InputLayer)


def _rebuilt_from_new_inputs(inputs, outputs):
    """A model built from intermediate tensors starts from Inputs of their own, as in Keras: each such
    tensor is replaced by an ``Input`` of its shape and dtype (named ``<layer>CLONE``), and the layers
    between the inputs and the outputs are called again on them, which adds one Node to each. Returns
    the new inputs and outputs, in the given structures."""
    flat_inputs = tree.flatten(inputs)
    plan = ExecutionPlan(flat_inputs, tree.flatten(outputs))
    fresh = []
    for tensor in flat_inputs:
        if _is_input_tensor(tensor):
            fresh.append(tensor)
            continue
        layer, node_index, tensor_index = tensor._keras_history
        suffix = "" if (node_index, tensor_index) == (0, 0) else f"_{node_index}_{tensor_index}"
        fresh.append(Input(batch_shape=tensor.shape, dtype=tensor.dtype, name=f"{layer.name}{suffix}CLONE"))

    def call_again(step, args, extra, kwargs):
        result = step.layer(args, *extra, **kwargs)
        return [result] if isinstance(result, KerasTensor) else tree.flatten(result)

    return tree.pack_as(inputs, fresh), tree.pack_as(outputs, plan.replay(fresh, call_again))


def _is_flat(struct):
    """Whether a model built from ``struct`` is fed by Input name from a dict: one Input, or a flat list of them."""
    return isinstance(struct, KerasTensor) or (
        isinstance(struct, (list, tuple)) and all(isinstance(t, KerasTensor) for t in struct))


def _match(struct, indexed, path, ignored, model_name):
    """The leaves of ``indexed`` (positions) in the order of ``struct``'s, or None
    when the two differ in structure. Dicts match by key (keys ``struct`` lacks
    are added to ``ignored``; a key it has and ``indexed`` lacks raises), lists
    and tuples by position."""
    if isinstance(struct, KerasTensor):
        return [indexed] if isinstance(indexed, int) else None
    if isinstance(struct, dict):
        if not isinstance(indexed, dict):
            return None
        missing = [key for key in struct if key not in indexed]
        if missing:
            raise ValueError(
                f'Missing data for input "{_join(path, missing[0])}" of model {model_name!r}. You passed a data '
                f"dictionary with keys {list(indexed)}. Expected the following keys: {sorted(struct)} (the keys "
                "the model was built with)."
            )
        ignored.extend(_join(path, key) for key in indexed if key not in struct)
        pairs = [(struct[key], indexed[key], _join(path, key)) for key in sorted(struct)]
    elif isinstance(indexed, (list, tuple)) and len(indexed) == len(struct):
        pairs = [(s, v, _join(path, i)) for i, (s, v) in enumerate(zip(struct, indexed))]
    else:
        return None
    positions = []
    for inner_struct, inner, inner_path in pairs:
        inner_positions = _match(inner_struct, inner, inner_path, ignored, model_name)
        if inner_positions is None:
            return None
        positions += inner_positions
    return positions


def _join(path, key):
    return f"{path}.{key}" if path else str(key)


def _leaf_paths(struct, path=""):
    """Keras' path of each leaf of ``struct`` in flatten order: '' for a lone leaf, '0.foo' in a list of dicts."""
    if isinstance(struct, dict):
        return [p for key in sorted(struct) for p in _leaf_paths(struct[key], _join(path, key))]
    if isinstance(struct, (list, tuple)):
        return [p for i, item in enumerate(struct) for p in _leaf_paths(item, _join(path, i))]
    return [path]


def _describe_structure(structure):
    """``structure`` with each leaf shown briefly: a KerasTensor by name, an array by shape."""
    def describe(leaf):
        if leaf is None:
            return "None"
        if isinstance(leaf, KerasTensor):
            return leaf.name if leaf._keras_history is not None else f"KerasTensor(shape={leaf.shape})"
        return f"array(shape={np.shape(leaf)})"

    return tree.map_structure(describe, structure)


def specs_for_shapes(shapes, model_name):
    """KerasTensors of the shapes in ``shapes`` (a shape, or lists, tuples and dicts of shapes).

    Args:
        shapes: a shape tuple (batch axis first), or lists, tuples and dicts of them.
        model_name: the model asking, for the error message.

    Example:
        >>> specs_for_shapes({"a": (None, 3)}, "m")["a"].shape
        (None, 3)
    """
    if isinstance(shapes, (list, tuple)) and all(d is None or (isinstance(d, (int, np.integer))
                                                                and not isinstance(d, bool)) for d in shapes):
        return KerasTensor(shapes)
    if isinstance(shapes, dict):
        return {key: specs_for_shapes(value, model_name) for key, value in shapes.items()}
    if isinstance(shapes, (list, tuple)):
        return type(shapes)(specs_for_shapes(value, model_name) for value in shapes)
    raise ValueError(
        f"compute_output_shape of model {model_name!r} expects shape tuples (ints or None, batch axis first) in "
        f"the structure of the model's inputs, but received {shapes!r}."
    )


def _check_shape(received, expected, index, input_name, model_name):
    """Checks every axis but the batch axis, as Keras' input spec for a model does:
    data is fed in batches of any size, even to an Input(batch_shape=...)."""
    if len(received) != len(expected) or any(
        e is not None and r is not None and e != r for e, r in zip(expected[1:], received[1:])
    ):
        raise ValueError(
            f"Input {index} ({input_name!r}) of model {model_name!r} is incompatible with the model: "
            f"expected shape={expected}, found shape={tuple(received)}."
        )


def _check_unique_names(layers, model_name):
    seen = {}
    for layer in layers:
        if layer.name in seen:
            other = seen[layer.name]
            raise ValueError(
                f'The name "{layer.name}" is used 2 times in model {model_name!r} (by a '
                f"{type(other).__name__} and a {type(layer).__name__}). All layer names should be "
                "unique: pass a different name= to one of them."
            )
        seen[layer.name] = layer


extensions.provide("functional", sys.modules[__name__])  # Model(inputs, outputs) builds a Functional
