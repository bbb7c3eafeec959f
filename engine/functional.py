"""Functional: a model defined by its input and output KerasTensors.

The graph between them is mapped once, at construction, into an
``ExecutionPlan``; calls, training and everything that looks at the graph read
that plan.
"""

import weakref

import numpy as np

from engine import tree
from engine.data_adapter import cast_input
from engine.dtypes import dtype_kind
from engine.keras_tensor import KerasTensor
from engine.model import Model
from engine.naming import unique_name
from engine.plan import ExecutionPlan


class Functional(Model):
    """A model built from ``inputs`` and ``outputs`` (a tensor, a list or a dict).

    Called on NumPy arrays it runs the plan eagerly; called on KerasTensors it
    becomes one Node of a bigger graph, so models nest to any depth.

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> a, b = Input(shape=(3,), name="a"), Input(shape=(5,), name="b")
        >>> out = Dense(2)(a) + Dense(2)(b)
        >>> model = Model(inputs={"a": a, "b": b}, outputs=out)
        >>> model({"a": np.ones((4, 3)), "b": np.ones((4, 5))}).shape
        (4, 2)
    """

    def __init__(self, inputs, outputs, name=None, trainable=True):
        super().__init__(trainable=trainable, name=name or unique_name("functional"))
        self._init_graph(inputs, outputs)

    def _init_graph(self, inputs, outputs):
        self._inputs_struct = inputs
        self._outputs_struct = outputs
        self._graph_plan = ExecutionPlan(tree.flatten(inputs), tree.flatten(outputs))
        layers = self._graph_plan.layers
        _check_unique_names(layers, self.name)
        self._modules = list(layers)
        if not self._trainable:
            self.trainable = False
        self.built = True
        for tensor in self._graph_plan.inputs:  # a tensor made inside this model is reached through its calls
            tensor._keras_history.layer._tracked("_input_of_models").append(weakref.ref(self))

    @property
    def plan(self):
        """The model's ExecutionPlan."""
        return self._graph_plan

    # ------------------------------------------------------------- structure
    @property
    def layers(self):
        return list(self.plan.layers)

    @property
    def inputs(self):
        return list(self.plan.inputs)

    @property
    def outputs(self):
        return list(self.plan.outputs)

    @property
    def input(self):
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def input_names(self):
        return [t.name for t in self.plan.inputs]

    @property
    def output_names(self):
        outputs = self.plan.outputs
        if isinstance(self._outputs_struct, dict):
            return sorted(self._outputs_struct)
        return [t._keras_history.layer.name for t in outputs]

    # ------------------------------------------------------------- execution
    def call(self, inputs, training=False):
        arrays = self._standardize_inputs(inputs)
        return self._pack_outputs(self.plan.run(arrays, training=training))

    def forward(self, inputs, training=True):
        arrays = self._standardize_inputs(inputs)
        outputs, tape = self.plan.forward(arrays, training=training)
        tape.inputs = inputs
        return self._pack_outputs(outputs), tape

    def backward(self, tape, grad_outputs):
        inputs = tape.inputs
        flat_grads = tree.flatten(grad_outputs) if self._has_structured_outputs() else [grad_outputs]
        grad_inputs, grad_weights = self.plan.backward(tape, flat_grads)
        if isinstance(inputs, dict):
            by_name = dict(zip(self.input_names, grad_inputs))
            return {key: by_name[key] for key in inputs}, grad_weights
        if isinstance(inputs, (list, tuple)):
            return list(grad_inputs), grad_weights
        return grad_inputs[0], grad_weights

    def compute_output_spec(self, inputs, **kwargs):
        self._standardize_inputs(inputs)
        specs = [KerasTensor(t.shape, t.dtype) for t in self.plan.outputs]
        return self._pack_outputs(specs)

    def get_config(self):
        from engine.functional_config import functional_config

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
        from engine.functional_config import functional_from_config
        from engine.registry import loading_scope

        with as_model_format_error("Cannot rebuild the model from its config"), \
                loading_scope(custom_objects, safe_mode):
            return functional_from_config(cls, config)

    def _pack_inputs(self, arrays):
        return tree.pack_as(self._inputs_struct, arrays)

    def _run_flat(self, arrays, training=False):
        self._clear_added_losses()  # losses list what the layers added in this run only
        return self.plan.run(arrays, training=training)

    def _forward_flat(self, arrays):
        return self.plan.forward(arrays, training=True)

    def _backward_flat(self, tape, grad_outputs):
        return self.plan.backward(tape, grad_outputs)[1]

    def _outputs_known(self):
        return True

    def _has_structured_outputs(self):
        return isinstance(self._outputs_struct, (list, tuple, dict))

    def _pack_outputs(self, flat):
        if self._has_structured_outputs():
            return tree.pack_as(self._outputs_struct, flat)
        return flat[0]

    def _fed_inputs(self, args):
        return self._standardize_inputs(args[0])

    def _standardize_inputs(self, inputs):
        """Maps call inputs (one value, a list, or a dict by input name) onto the
        model inputs, checking count, shapes, dtypes and that every array has the
        same batch size. Numbers of another kind (bool or int for a float input,
        float for an int one) are cast to the input's dtype, as Keras does; other
        kinds (complex, strings, objects) raise."""
        expected = self.plan.inputs
        names = self.input_names
        if isinstance(inputs, dict):
            missing = [n for n in names if n not in inputs]
            unknown = [k for k in inputs if k not in names]
            if missing or unknown:
                raise ValueError(
                    f"Model {self.name!r} expects inputs named {names}; received keys {list(inputs)} "
                    f"(missing: {missing}, unexpected: {unknown})."
                )
            flat = [inputs[n] for n in names]
        elif isinstance(inputs, (list, tuple)):
            flat = list(inputs)
        else:
            flat = [inputs]
        if len(flat) != len(expected):
            raise ValueError(
                f"Model {self.name!r} expects {len(expected)} input(s) {names}, but it received "
                f"{len(flat)}. Pass a list in that order or a dict keyed by input name."
            )
        result = []
        for index, (value, spec) in enumerate(zip(flat, expected)):
            if not isinstance(value, KerasTensor):
                value = np.asarray(value)
                if value.dtype.kind != dtype_kind(spec.dtype):
                    value = cast_input(value, spec.dtype, f"Input {index} ({names[index]!r}) of model {self.name!r}")
            _check_shape(value.shape, spec.shape, index, names[index], self.name)
            result.append(value)
        if len(result) > 1:
            self._check_batch_sizes(result)
        return result

    def _check_batch_sizes(self, arrays):
        batch_sizes = {n: v.shape[0] for n, v in zip(self.input_names, arrays) if not isinstance(v, KerasTensor)}
        if len(set(batch_sizes.values())) > 1:
            raise ValueError(
                f"Model {self.name!r} received inputs with different batch sizes: {batch_sizes}. Every input "
                "holds the same samples, so pass the same number of rows (axis 0) for each."
            )


def _check_shape(received, expected, index, input_name, model_name):
    if len(received) != len(expected) or any(
        e is not None and r is not None and e != r for e, r in zip(expected, received)
    ):
        raise ValueError(
            f"Input {index} ({input_name!r}) of model {model_name!r} is incompatible with the model: "
            f"expected shape {expected}, but received input with shape {tuple(received)}."
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
