"""The Layer: weights, a forward computation, a backward one, and the call template.

``Layer.__call__`` is a fixed template, as Caffe's ``SetUp``: check the arity
and the ``input_spec``, build once from the input shapes, then either compute
(NumPy inputs) or record a Node and return new KerasTensors (symbolic inputs).
Subclasses override ``build``, ``call``, ``compute_output_shape``, ``forward``
and ``backward``, never ``__call__``.

One door per layer (see the Layer docstring): a layer's maths is written
once, in ``forward`` with a hand-written ``backward``, or in ``call`` alone
(then traced).
"""

import functools
import inspect
import threading

import numpy as np

from engine import extensions, tree
from engine.network import call_context, eager_masks
from engine.training import regularizers
from engine.dtypes import dtype_kind, dtype_name
from engine.network.input_spec import assert_input_compatibility
from engine.autodiff import Traced, recording, untraced
from engine.network.argument_gradients import first_argument_name
from engine.network.build_shapes import shapes_by_name
from engine.network.call_errors import raise_in_call_context
from engine.network.call_keywords import call_parameters, checked_call_keywords
from engine.network.keras_arguments import accept_keras_arguments
from engine.network.keras_tensor import KerasTensor
from engine.network.layer_tracing import (TracedCall, call_training, inside_layer_call, layer_call, recorded_call,
                                          traced_backward, traced_forward)
from engine.network.layer_losses import AddedLosses
from engine.network.layer_nodes import NodeQueries
from engine.network.layer_weights import LayerWeights
from engine.network.module import Module
from engine.network.naming import to_snake_case, unique_name
from engine.network.output_spec import (attach_mask_specs, example, inferred_output_spec, is_shape as _is_shape,
                                        shapes_of, specs_for_shapes, symbolic_mask)
from engine.network.one_door import engine_keywords_by_name, refuse_non_tensor_positionals, settle_call_and_forward
from engine.network.node import Node
from engine.files.registry import register_builtin
from engine.network.stateless import stateless_call
from engine.files.storable_names import check_layer_name
from engine.network.tracking import StateLock, held_metrics, metric_variables, names_made_in_build, untrack_variable
from engine.network.variable import Variable

_ALLOWED_KWARGS = {"input_shape", "batch_input_shape", "batch_size"}
#: Held while a layer builds, so that a layer first called from several threads
#: builds once. Reentrant: a build may build sub-layers.
BUILD_LOCK = threading.RLock()


class Layer(LayerWeights, AddedLosses, NodeQueries, Module):
    """Base class of every layer.

    One door: a layer's maths is written once.

    - A layer with a hand-written gradient writes ``forward(...) -> (outputs,
      cache)`` and ``backward(cache, grad_outputs) -> (grad_inputs,
      {Variable: gradient})``; its ``call`` derives from ``forward`` by default
      (``forward(...)[0]``, with ``training=False`` unless given). ``grad_inputs``
      has the structure of the first argument, or is an ``ArgumentGradients``
      keyed by ``call``'s parameter names when tensors in other arguments take
      gradients too. ``backward`` without ``forward`` gets the inputs as its cache.
    - A layer without them writes ``call`` only; training traces it.

    A layer that still defines both (a faster inference path, say) gives them
    the same parameters, checked when the class is created (``TypeError``
    otherwise): ``forward``'s are ``call``'s, same names, order, kinds and
    defaults, except that ``training`` may default to True; where ``call`` takes
    no ``training``, ``forward`` takes it after ``call``'s parameters. So an
    argument given by position reaches the same parameter in inference and in
    training, where the engine passes ``training`` by keyword.

    Args:
        trainable: whether the layer's weights are updated in training.
        name: unique name; by default the snake-cased class name plus a counter.
        dtype: dtype of the weights and of the computation (``"float32"``).
        activity_regularizer: a penalty on the layer's outputs, added (divided
            by the batch size) to the training loss.
        input_shape: shape of one sample (no batch axis), so that a
            ``Sequential`` model can start from this layer.

    Example:
        >>> import numpy as np
        >>> class SimpleDense(Layer):
        ...     def __init__(self, units=32):
        ...         super().__init__()
        ...         self.units = units
        ...     def build(self, input_shape):
        ...         self.w = self.add_weight(shape=(input_shape[-1], self.units),
        ...                                  initializer="random_normal", trainable=True)
        ...         self.b = self.add_weight(shape=(self.units,),
        ...                                  initializer="random_normal", trainable=True)
        ...     def call(self, inputs):
        ...         return np.matmul(inputs, self.w) + self.b
        >>> SimpleDense(4)(np.ones((2, 2), "float32")).shape
        (2, 4)
    """

    #: Bounds on the number of input tensors (Caffe's Min/MaxBottomBlobs); None means no bound.
    min_inputs = None
    max_inputs = None
    #: Whether the layer keeps masks: passes its input's mask on unchanged (Dense, Dropout, ...) or,
    #: when it defines ``compute_mask`` (then True by default, as in Keras), computes its own.
    supports_masking = False
    #: True where ``compute_mask`` only combines the inputs' masks (merges, pooling, RNNs, attention):
    #: such a layer makes no mask where its inputs carry none, so graphs without masks skip it.
    _combines_masks_only = False
    #: Call keywords whose KerasTensors name tensors of the layer's own graph instead of feeding the
    #: call (a model's ``outputs=``): they do not make a call on arrays symbolic.
    _naming_keywords = frozenset()
    #: Whether an eager call's outputs carry their mask (``_keras_mask``, see engine.network.eager_masks).
    _masks_eager_outputs = True
    #: Whether the layer was called; its declared call-context arguments beyond ``training`` (engine.network.call_context).
    _called = False
    _context_args = frozenset()

    def __init__(self, trainable=True, name=None, dtype="float32", activity_regularizer=None, **kwargs):
        dtype, kwargs = accept_keras_arguments(type(self), name, dtype, kwargs)
        unknown = set(kwargs) - _ALLOWED_KWARGS
        if unknown:
            raise ValueError(
                f"Unrecognized keyword arguments passed to {type(self).__name__}: "
                f"{ {k: kwargs[k] for k in sorted(unknown)} }"
            )
        check_layer_name(type(self), name)
        self.name = name or unique_name(to_snake_case(type(self).__name__))
        self.dtype = dtype_name(dtype or "float32")
        if not isinstance(trainable, (bool, np.bool_)):
            raise ValueError(f"Expected `trainable` argument to be a boolean, but got: {trainable!r} (layer "
                             f"{self.name!r}, {type(self).__name__}). Pass True or False.")
        self._trainable = bool(trainable)
        self.built = False
        self.input_spec = None
        self._inbound_nodes = []
        self._outbound_nodes = []
        self._batch_input_shape = _batch_input_shape(kwargs)
        self.activity_regularizer = regularizers.get(activity_regularizer)

    def __init_subclass__(cls, **kwargs):
        # Built-in layers are registered by name; a layer built by hand
        # (layer.build(shape)) is built, as in Keras.
        super().__init_subclass__(**kwargs)
        register_builtin(cls)
        if "compute_mask" in cls.__dict__ and "supports_masking" not in cls.__dict__:
            cls.supports_masking = True  # a layer that computes its mask supports masking, as in Keras
        if "build" in cls.__dict__:
            build = cls.__dict__["build"]

            @functools.wraps(build)
            def build_and_mark(self, *args, **kwargs):
                build(self, *args, **kwargs)
                self.built = True

            cls.build = build_and_mark
        settle_call_and_forward(cls, Layer)

    @property
    def _call_context_args(self):
        """The call-context arguments this layer resolves and hands down (Keras' name), ``training`` first."""
        return {"training", *self._context_args}

    def _register_call_context_args(self, *names):
        """Declares call-context arguments (see ``engine.network.call_context``), before the first call."""
        call_context.register(self, names)

    @property
    def metrics(self):
        """The metrics held by this layer and its sub-layers (Keras 3's ``Layer.metrics``)."""
        return held_metrics(self)

    @property
    def metrics_variables(self):
        """The state of ``metrics`` as Variables (copies, read now)."""
        return metric_variables(self.metrics)

    @property
    def _layers(self):
        """The layers held directly in attributes (alone, or in lists, tuples and dicts), as Keras tracks them."""
        return [module for module in self._child_modules() if isinstance(module, Layer)]

    @property
    def _tracker(self):
        """The lock on new state (``engine.network.tracking.StateLock``), locked once the call template built the layer."""
        return StateLock(self)

    def _untrack_variable(self, variable):
        """Drops ``variable`` from the layer's weights; returns None (``self.w = self._untrack_variable(self.w)``)."""
        return untrack_variable(self, variable)

    def stateless_call(self, trainable_variables, non_trainable_variables, *args, return_losses=False, **kwargs):
        """Calls the layer on the given variable values, keeping its own (see ``engine.network.stateless``).

        Returns ``(outputs, non_trainable_variables)`` after the call, and the losses with ``return_losses``.

        Args:
            trainable_variables: one value per ``self.trainable_variables``, in that order.
            non_trainable_variables: one value per ``self.non_trainable_variables``.
            *args: the call's positional arguments.
            return_losses: whether to return the call's losses too.
            **kwargs: the call's keyword arguments.

        Example:
            >>> import numpy as np
            >>> from layers import Dense
            >>> layer = Dense(1, kernel_initializer="ones", bias_initializer="zeros")
            >>> _ = layer(np.ones((1, 2), "float32"))
            >>> outputs, _ = layer.stateless_call([np.full((2, 1), 2.0), np.zeros(1)], [], np.ones((1, 2)))
            >>> outputs.tolist(), layer.kernel.numpy().ravel().tolist()
            ([[4.0]], [1.0, 1.0])
        """
        return stateless_call(self, trainable_variables, non_trainable_variables, args, kwargs, return_losses)

    def _build_at_init(self):
        """Marks a layer that makes all its state in ``__init__`` as built, and locks its state (Keras' call)."""
        self.built = True
        self._tracker.lock()

    def _flatten_layers(self, include_self=True, recursive=True):
        """This layer (with ``include_self``), then its sub-layers: all below it, or only
        its direct children when not ``recursive`` (Keras' walk, used by its tools)."""
        below = self._submodules() if recursive else self._child_modules()
        return [self] * include_self + [module for module in below if isinstance(module, Layer)]

    def __getattr__(self, name):
        # Only reached when normal lookup fails: explain weights created in build().
        if not self.__dict__.get("built", True) and name in names_made_in_build(type(self)):
            raise AttributeError(
                f"{type(self).__name__!s} layer {self.__dict__.get('name')!r} has no attribute {name!r} "
                "yet: weights are created in build(), which runs on the first call. "
                "Call the layer on an input first."
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # --------------------------------------------------------- overridables
    def build(self, input_shape):
        """Creates the weights, given the input shape(s). Runs once, on the first call.

        Override it to create weights with ``add_weight`` once the input shape
        is known; calling it by hand builds the layer without calling it.

        Args:
            input_shape: a shape tuple (``None`` for the batch size), or shapes
                in the structure of the ``inputs`` argument.

        Example:
            >>> from layers import Dense
            >>> layer = Dense(2)
            >>> layer.build((None, 3))
            >>> layer.built, layer.kernel.shape
            (True, (3, 2))
        """

    def call(self, inputs, training=False):
        """The forward computation on NumPy arrays: override it in every layer.

        Inference runs it, and so does training when the layer has no
        hand-written ``backward`` (then it runs on traced arrays, so NumPy
        functions on them are differentiated). Users call the layer, not ``call``.

        Args:
            inputs: an array, or arrays in a list, tuple or dict.
            training: whether the call is for training (dropout, batch
                statistics); a layer may leave it out of its signature.

        Returns:
            The output array(s).

        Example:
            >>> import numpy as np
            >>> class Double(Layer):
            ...     def call(self, inputs):
            ...         return 2 * inputs
            >>> Double()(np.ones((1, 2)))
            array([[2., 2.]], dtype=float32)
        """
        raise NotImplementedError(
            f"Layer {self.name!r} ({type(self).__name__}) does not have a `call` method implemented: "
            "define call(self, inputs)."
        )

    def compute_output_shape(self, input_shape):
        """Output shape(s) for the given input shape(s); ``None`` is an unknown size.

        Symbolic calls use it when a layer defines it; without it they run
        ``call`` once on a zero batch to learn the shapes.

        Args:
            input_shape: a shape tuple, or shapes in the structure of the inputs.

        Returns:
            The output shape tuple (or tuples, in the outputs' structure).

        Example:
            >>> from layers import Dense
            >>> Dense(5).compute_output_shape((None, 3))
            (None, 5)
        """
        raise NotImplementedError(
            f"Layer {type(self).__name__} does not have a `compute_output_shape` method implemented. Define "
            f"compute_output_shape(self, input_shape) for layer {self.name!r}, or let symbolic calls infer the "
            "shapes by running call()."
        )

    def compute_mask(self, inputs, mask=None):
        """The mask of the outputs (a boolean array, e.g. over time steps), given
        the inputs and their mask. By default the input mask passes through when
        ``supports_masking``, and is dropped otherwise.

        Args:
            inputs: the call's inputs.
            mask: their mask (None when they carry none).

        Returns:
            The outputs' mask, or None.

        Example:
            >>> import numpy as np
            >>> from layers import Embedding
            >>> Embedding(10, 2, mask_zero=True).compute_mask(np.array([[3, 0]]))
            array([[ True, False]])
        """
        return mask if self.supports_masking else None

    def _may_make_masks(self):
        """Whether outputs may carry a mask that the inputs lack (the layer computes
        its own mask, not only from its inputs' masks)."""
        return type(self).compute_mask is not Layer.compute_mask and not self._combines_masks_only

    def _output_mask_specs(self, inputs, input_mask):
        """The masks of a symbolic call's outputs, as arrays or mask specs:
        ``compute_mask`` run on a zero batch with all-True input masks. Only
        the ranks of the masks are used, so every axis of the examples has at
        most one entry: a declared shape costs nothing in proportion to its size."""
        return self.compute_mask(example(inputs, shrunk=True), example(input_mask, fill=True, shrunk=True))

    def compute_output_spec(self, *args, **kwargs):
        """Symbolic outputs for symbolic arguments: from ``compute_output_shape`` when
        the layer defines it, else by running ``call`` once on a zero batch.

        Args:
            *args: the call's positional arguments, KerasTensors first.
            **kwargs: its keyword arguments.

        Returns:
            KerasTensors (shape and dtype) in the structure of the outputs.

        Example:
            >>> from engine import KerasTensor
            >>> from layers import Dense
            >>> layer = Dense(5)
            >>> layer.build((None, 3))
            >>> layer.compute_output_spec(KerasTensor((None, 3))).shape
            (None, 5)
        """
        inputs = args[0]
        if type(self).compute_output_shape is not Layer.compute_output_shape:
            return specs_for_shapes(self.compute_output_shape(shapes_of(inputs)), self.dtype)
        return inferred_output_spec(self, args, kwargs)

    def forward(self, inputs, *args, training=True, **kwargs):
        """Training forward pass: returns ``(outputs, cache)``, where ``cache`` is
        what ``backward`` needs.

        A layer with a hand-written ``backward`` gets the inputs as its cache
        (override ``forward`` to keep more). A layer without one is traced: its
        ``call`` runs on traced arrays and the cache is the recorded trace.

        Args:
            inputs: the call's inputs (arrays).
            *args: further positional arguments of ``call``.
            training: passed to ``call``.
            **kwargs: further keyword arguments of ``call``.

        Returns:
            ``(outputs, cache)``.

        Example:
            >>> import numpy as np
            >>> from layers import Dense
            >>> layer = Dense(2)
            >>> layer.build((None, 4))
            >>> outputs, cache = layer.forward(np.ones((3, 4), "float32"))
            >>> outputs.shape
            (3, 2)
        """
        if self._has_backward():
            return self._call(inputs, training, kwargs, args), inputs
        return traced_forward(self, inputs, args, training, kwargs)

    def backward(self, cache, grad_outputs):
        """Returns ``(grad_inputs, grad_weights)`` given the gradients of the outputs.

        ``grad_inputs`` has the structure of the ``inputs`` argument (``None``
        for inputs that take no gradient, such as integer indices). When
        tensors in other arguments take gradients too (attention's ``value``,
        an RNN's ``initial_state``), it is an ``ArgumentGradients`` keyed by
        ``call``'s parameter names, each in the structure of its argument.
        ``grad_weights`` maps each of this layer's trainable Variables to its
        gradient. Without an override, the trace ``forward`` recorded is
        differentiated.

        Args:
            cache: what ``forward`` returned beside the outputs.
            grad_outputs: the gradients of the outputs, in their structure.

        Returns:
            ``(grad_inputs, grad_weights)``.

        Raises:
            NotImplementedError: a layer without a gradient (it still runs for inference).

        Example:
            >>> import numpy as np
            >>> from layers import Dense
            >>> layer, x = Dense(2), np.ones((3, 4), "float32")
            >>> _ = layer(x)  # the first call builds the weights
            >>> outputs, cache = layer.forward(x)
            >>> grad_inputs, grad_weights = layer.backward(cache, np.ones_like(outputs))
            >>> grad_inputs.shape, sorted(v.name for v in grad_weights)
            ((3, 4), ['bias', 'kernel'])
        """
        if isinstance(cache, TracedCall):
            return traced_backward(self, cache, grad_outputs)
        raise NotImplementedError(
            f"Layer {self.name!r} ({type(self).__name__}) has no backward pass, so no gradient "
            "can flow through it. It still works for inference. To train through it, implement "
            "forward(self, inputs, training=True) -> (outputs, cache) and "
            "backward(self, cache, grad_outputs) -> (grad_inputs, {variable: grad})."
        )

    def flops(self, input_shapes, output_shapes):
        """Forward FLOPs of one call on inputs and outputs of these concrete shapes;
        a multiply-add counts 2. ``graph.profile`` adds them up.

        Args:
            input_shapes: the shapes of the flat inputs, a list of tuples.
            output_shapes: the shapes of the flat outputs, a list of tuples.

        Returns:
            An int, or None when the layer has no formula.

        Example:
            >>> from layers import Dense
            >>> layer = Dense(4)
            >>> layer.build((None, 3))
            >>> layer.flops([(2, 3)], [(2, 4)])  # 2 * 4 outputs, each 3 multiply-adds and a bias
            56
        """
        return None

    def get_config(self):
        """The arguments that recreate this layer (without its weights).

        Override it (extending the base's dict) when ``__init__`` takes
        arguments of its own; ``from_config`` passes them back.

        Returns:
            A JSON-serializable dict.

        Example:
            >>> from layers import Dense
            >>> config = Dense(3, activation="relu", name="hidden").get_config()
            >>> config["units"], config["activation"], config["name"]
            (3, 'relu', 'hidden')
        """
        config = {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}
        if self.activity_regularizer is not None:
            config["activity_regularizer"] = regularizers.serialize(self.activity_regularizer)
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = list(self._batch_input_shape)
        return config

    @classmethod
    def from_config(cls, config):
        """Creates a layer (unbuilt, fresh weights) from what ``get_config`` returned.

        Args:
            config: the dict of ``__init__`` arguments.

        Returns:
            The new layer.

        Example:
            >>> from layers import Dense
            >>> Dense.from_config(Dense(3, name="hidden").get_config()).units
            3
        """
        return cls(**config)

    # ----------------------------------------------------------- the template
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
        return self._call_template(args, kwargs)

    def _call_template(self, args, kwargs):
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

    def _has_backward(self):
        """Whether the layer's gradient is hand-written (else its call is traced)."""
        return type(self).backward is not Layer.backward

    def _eager_call(self, args, kwargs, flat_inputs):
        if recording():
            return self._recorded_eager_call(args, kwargs, flat_inputs)
        if not inside_layer_call():
            self._clear_added_losses()
        mask = eager_masks.input_mask(args[0])
        if mask is not None and "mask" not in kwargs and "mask" in call_parameters(type(self)):
            kwargs = {**kwargs, "mask": mask}  # as in Keras, the mask the inputs carry reaches call
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
        # Keras' phrase for a layer of fixed arity (its tests match it), then ours.
        exact = (f"A `{type(self).__name__}` layer should be called on exactly {self.min_inputs} inputs. "
                 if self.min_inputs is not None and self.min_inputs == self.max_inputs else "")
        if self.min_inputs is not None and count < self.min_inputs:
            raise ValueError(
                f'{exact}Layer "{self.name}" ({type(self).__name__}) expects at least {self.min_inputs} '
                f"inputs, but it received {count} input{'s' if count != 1 else ''}. "
                "Pass the inputs as a list: layer([x1, x2])."
            )
        if self.max_inputs is not None and count > self.max_inputs:
            raise ValueError(
                f'{exact}Layer "{self.name}" ({type(self).__name__}) expects at most {self.max_inputs} '
                f"input{'s' if self.max_inputs != 1 else ''}, but it received {count} inputs."
            )
        assert_input_compatibility(self.input_spec, flat_inputs, self.name)

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
            self.__dict__["_state_locked"] = True  # as self._tracker.lock(), without making the view

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

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Notebook display: an HTML card of the layer's calls and weights."""
        return extensions.provided("layer_display")(self)



def _batch_input_shape(kwargs):
    if kwargs.get("batch_input_shape") is not None:
        return tuple(kwargs["batch_input_shape"])
    if kwargs.get("input_shape") is not None:
        return (kwargs.get("batch_size"),) + tuple(kwargs["input_shape"])
    return None


@functools.lru_cache(maxsize=None)
def _accepts_training(cls):
    """Whether ``cls.call`` takes a ``training`` argument (the seed's SimpleDense does not)."""
    parameters = inspect.signature(cls.call).parameters
    return "training" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
