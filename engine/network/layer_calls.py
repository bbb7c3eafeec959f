"""A layer's call template: ``__call__`` checks its inputs, builds once, then computes or records a Node.

``LayerCalls`` is a part of ``engine.network.layer.Layer``, which inherits it. The
template is fixed, as Caffe's ``SetUp``: check the arity and the ``input_spec``,
build once from the input shapes, then run ``call`` on arrays (eagerly, or as a
step of a tape that records) or, on symbolic tensors, record a ``Node`` and
return new KerasTensors.
"""

import functools
import inspect
import threading

import numpy as np

from engine import tree
from engine.autodiff import Traced, recording, untraced
from engine.dtypes import dtype_kind
from engine.network import call_context, eager_masks
from engine.network.argument_gradients import first_argument_name
from engine.network.build_shapes import build_parameters, shapes_by_name
from engine.network.call_errors import raise_in_call_context
from engine.network.call_keywords import call_parameters, checked_call_keywords
from engine.network.input_spec import assert_input_compatibility
from engine.network.keras_tensor import KerasTensor
from engine.network.layer_tracing import call_training, inside_layer_call, layer_call, recorded_call
from engine.network.node import Node
from engine.network.one_door import engine_keywords_by_name, refuse_non_tensor_positionals
from engine.network.output_spec import attach_mask_specs, shapes_of, symbolic_mask
from engine.network.variable import Variable

#: Held while a layer builds, so that a layer first called from several threads
#: builds once. Reentrant: a build may build sub-layers.
BUILD_LOCK = threading.RLock()


class LayerCalls:
    """The call part of ``Layer``: ``__call__`` and the eager, taped and symbolic calls it dispatches to."""

    def __call__(self, *args, **kwargs):
        """Calls the layer: computes on arrays, or records a Node on symbolic tensors.

        The fixed template: check the number of inputs and the ``input_spec``,
        build once from the input shapes, then run ``call`` (NumPy inputs) or
        record a ``Node`` and return new KerasTensors (``Input`` tensors).
        Subclasses never override it.

        Args:
            *args: the inputs first (an array or KerasTensor, or a list, tuple
                or dict of them), then further arguments of ``call``.
            **kwargs: keyword arguments of ``call``; ``training`` is passed
                to layers whose ``call`` takes it.

        Returns:
            Arrays, or KerasTensors for symbolic inputs.

        Raises:
            ValueError: inputs that do not fit the layer (the message names the
                layer, the expected and the received shapes), or a mix of
                symbolic and concrete inputs.

        Example:
            >>> import numpy as np
            >>> from engine import Input
            >>> from layers import Dense
            >>> layer = Dense(2, name="d")
            >>> layer(Input(shape=(3,))).shape
            (None, 2)
            >>> layer(np.ones((4, 3))).shape
            (4, 2)
        """
        self._called = True
        if self._context_args:
            return call_context.call_with_context(self, self._call_template, args, kwargs)
        if len(args) == 1 and not kwargs and type(args[0]) is KerasTensor:  # as _call_template, one call less
            return self._symbolic_call_on_one(args[0])
        return self._call_template(args, kwargs)

    def _call_template(self, args, kwargs):
        if len(args) == 1 and not kwargs and type(args[0]) is KerasTensor:  # the common symbolic call: one tensor
            return self._symbolic_call_on_one(args[0])
        if not args:  # the first argument by keyword: inputs=, or query= for attention
            first = first_argument_name(self)
            if first not in kwargs:
                raise TypeError(f"Layer {self.name!r} was called without inputs: pass them first, or as {first}=.")
            args = (kwargs.pop(first),)
        if len(args) > 1:
            args, kwargs = engine_keywords_by_name(self, args, kwargs)
            refuse_non_tensor_positionals(self, args)
        kwargs = checked_call_keywords(self, kwargs)
        flat_inputs = tree.flatten(args[0])
        symbolic = [x for x in flat_inputs if isinstance(x, KerasTensor)]
        if symbolic or any(isinstance(x, KerasTensor) for x in tree.flatten((args[1:], {
                key: value for key, value in kwargs.items() if key not in self._naming_keywords}))):
            if len(symbolic) != sum(x is not None for x in flat_inputs):  # None: an input not given, as in Keras
                raise ValueError(
                    f"Layer {self.name!r} received a mix of symbolic tensors and concrete values as "
                    f"inputs: {flat_inputs}. Use Input(...) for every input of a graph, or "
                    "call the layer on NumPy arrays only."
                )
            return self._symbolic_call(args, kwargs, symbolic)
        return self._eager_call(args, kwargs, flat_inputs)

    def _eager_call(self, args, kwargs, flat_inputs):
        if recording():
            return self._recorded_eager_call(args, kwargs, flat_inputs)
        if not inside_layer_call():
            self._clear_added_losses()
        mask = eager_masks.input_mask(args[0])
        if mask is not None and "mask" not in kwargs and "mask" in call_parameters(type(self)):
            kwargs = {**kwargs, "mask": mask}  # as in Keras, the mask the inputs carry reaches call
        masks = eager_masks.argument_masks(type(self), args, kwargs)  # query_mask=, value_mask=...
        if masks:
            kwargs = {**kwargs, **masks}
        flat_inputs = [self._as_array(x) for x in flat_inputs]
        args = (tree.pack_as(args[0], flat_inputs),) + args[1:]
        self._check_inputs(flat_inputs)
        self._build_for_call(args[0], args, kwargs)
        training = call_training(kwargs.pop("training", None))
        try:
            outputs = self._call(args[0], training, kwargs, args[1:])
            mask = kwargs.get("mask", mask)
            if self._masks_eager_outputs and (mask is not None or self._may_make_masks()):
                outputs = eager_masks.attach(outputs, self.compute_mask(args[0], mask))
        except Exception as error:
            raise_in_call_context(self, error, args[0], args[1:], kwargs)
        return self._penalize_activity(outputs)

    def _recorded_eager_call(self, args, kwargs, flat_inputs):
        """A call while a tape records (inside a traced call, or a GradientTape):
        one step using ``backward`` when the layer has one, else traced through."""
        if not inside_layer_call():  # the outermost call under a GradientTape
            self._clear_added_losses()
        flat_inputs = [x if isinstance(x, Traced) else self._as_array(x) for x in flat_inputs]  # cast as eagerly
        args = (tree.pack_as(args[0], flat_inputs),) + args[1:]
        plain = [untraced(x) for x in flat_inputs]
        self._check_inputs(plain)
        self._build_for_call(tree.pack_as(args[0], plain), args, kwargs)
        training = call_training(kwargs.pop("training", None))
        try:
            if self._has_backward():
                outputs = recorded_call(self, args[0], args[1:], training, kwargs)
            else:
                outputs = self._call(args[0], training, kwargs, args[1:])
        except Exception as error:
            raise_in_call_context(self, error, args[0], args[1:], kwargs)
        return self._penalize_activity(outputs)

    def _symbolic_call(self, args, kwargs, flat_inputs):
        self._check_inputs(flat_inputs)
        self._build_for_call(args[0], args, kwargs)
        call_kwargs = {k: v for k, v in kwargs.items() if k != "training"} if kwargs else kwargs
        outputs = self._symbolic_outputs(args, call_kwargs)
        Node(self, args, call_kwargs, outputs, fed_inputs=self._fed_inputs(args))
        return outputs

    def _symbolic_call_on_one(self, tensor):
        """``_symbolic_call`` for the common call, on one KerasTensor and nothing else: the same steps,
        without the structures of a general call."""
        args = (tensor,)
        if self.input_spec or self.min_inputs is not None or self.max_inputs is not None:
            self._check_inputs(args)
        if not self.built:
            if len(build_parameters(type(self))) <= 1:  # build takes the one shape (shapes_by_name would say None)
                self._maybe_build(tensor)
            else:
                self._build_for_call(tensor, args, {})
        try:
            outputs = self.compute_output_spec(tensor)
            if tensor._keras_mask is not None or self._may_make_masks():
                attach_mask_specs(outputs, self._output_mask_specs(tensor, tensor._keras_mask))
        except Exception as error:
            raise_in_call_context(self, error, tensor, (), {})
        Node(self, args, None, outputs, fed_inputs=self._fed_inputs(args))
        return outputs

    def _symbolic_outputs(self, args, kwargs):
        """The KerasTensors a symbolic call on ``args`` and ``kwargs`` returns,
        with the specs of their masks, without recording the call (a nested
        model replays its graph with it to learn its outputs' masks)."""
        try:
            outputs = self.compute_output_spec(*args, **kwargs)
            input_mask = kwargs.get("mask", symbolic_mask(args[0]))
            if input_mask is not None or self._may_make_masks():
                attach_mask_specs(outputs, self._output_mask_specs(args[0], input_mask))
        except Exception as error:
            raise_in_call_context(self, error, args[0], args[1:], kwargs)
        return outputs

    def _fed_inputs(self, args):
        """What a Node of this layer keeps to map a nested graph's inputs to the
        call's tensors (a functional model's override); None for a layer."""
        return None

    def _check_inputs(self, flat_inputs):
        count = len(flat_inputs)
        if self.min_inputs is not None and count < self.min_inputs:
            raise ValueError(
                f'{self._exact_arity()}Layer "{self.name}" ({type(self).__name__}) expects at least '
                f"{self.min_inputs} inputs, but it received {count} input{'s' if count != 1 else ''}. "
                "Pass the inputs as a list: layer([x1, x2])."
            )
        if self.max_inputs is not None and count > self.max_inputs:
            raise ValueError(
                f'{self._exact_arity()}Layer "{self.name}" ({type(self).__name__}) expects at most '
                f"{self.max_inputs} input{'s' if self.max_inputs != 1 else ''}, but it received {count} inputs."
            )
        if self.input_spec:
            assert_input_compatibility(self.input_spec, flat_inputs, self.name)

    def _exact_arity(self):
        """Keras' phrase for a layer of fixed arity (its tests match it), put before ours; empty otherwise."""
        if self.min_inputs is not None and self.min_inputs == self.max_inputs:
            return f"A `{type(self).__name__}` layer should be called on exactly {self.min_inputs} inputs. "
        return ""

    def _build_for_call(self, inputs, args, kwargs):
        """Builds on the first call: ``build`` gets the shapes of ``inputs``, or each argument's by name."""
        if not self.built:
            named = shapes_by_name(self, args, kwargs)
            self._maybe_build(inputs) if named is None else self._maybe_build(inputs, named)

    def _maybe_build(self, inputs, named_shapes=None):
        if self.built:
            return
        with BUILD_LOCK:
            if self.built:  # another thread built it while this one waited
                return
            shapes = shapes_of(inputs)
            self.build(shapes) if named_shapes is None else self.build(**named_shapes)
            self.built = True
            self._build_shapes = shapes
            self._state_locked = True  # as self._tracker.lock(), without making the view

    def _as_array(self, value):
        if isinstance(value, Variable):
            value = value.value
        array = np.asarray(value)
        if array.dtype.kind == "f" and dtype_kind(self.dtype) == "f" and array.dtype != self.dtype:
            array = array.astype(self.dtype)
        return array

    def _call(self, inputs, training, kwargs, extra_args=()):
        if _accepts_training(type(self)):
            kwargs = {**kwargs, "training": training}
        if self._has_backward():  # a built-in layer: passes ``training`` on explicitly, if it calls layers at all
            return self.call(inputs, *extra_args, **kwargs)
        with layer_call(training):
            return self.call(inputs, *extra_args, **kwargs)



@functools.lru_cache(maxsize=None)
def _accepts_training(cls):
    """Whether ``cls.call`` takes a ``training`` argument (the seed's SimpleDense does not)."""
    parameters = inspect.signature(cls.call).parameters
    return "training" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
