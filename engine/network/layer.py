"""The Layer: the contract a layer writes (``build``, ``call`` or ``forward``/``backward``, shapes, config).

Its parts live beside it and it inherits them: the call template
(``layer_calls.LayerCalls``: ``__call__`` checks the inputs, builds once,
then computes or records a Node), the weights (``layer_weights``), added
losses (``layer_losses``) and Node queries (``layer_nodes``). Subclasses
override ``build``, ``call``, ``compute_output_shape``, ``forward`` and
``backward``, never ``__call__``.

One door per layer (see the Layer docstring): a layer's maths is written
once, in ``forward`` with a hand-written ``backward``, or in ``call`` alone
(then traced).
"""

import functools

import numpy as np

from engine import extensions
from engine.files.registry import register_builtin
from engine.files.storable_names import check_layer_name
from engine.network import call_context
from engine.network.dtype_names import dtype_names
from engine.network.keras_arguments import accept_keras_arguments
from engine.network.layer_calls import LayerCalls
from engine.network.layer_losses import AddedLosses
from engine.network.layer_nodes import NodeQueries
from engine.network.layer_tracing import TracedCall, traced_backward, traced_forward
from engine.network.layer_weights import LayerWeights
from engine.network.module import Module
from engine.network.naming import to_snake_case, unique_name
from engine.network.one_door import settle_call_and_forward
from engine.network.output_spec import example, inferred_output_spec, shapes_of, specs_for_shapes
from engine.network.stateless import stateless_call
from engine.network.tracking import StateLock, held_metrics, metric_variables, names_made_in_build, untrack_variable
from engine.training import regularizers

_ALLOWED_KWARGS = {"input_shape", "batch_input_shape", "batch_size"}


class Layer(LayerCalls, LayerWeights, AddedLosses, NodeQueries, Module):
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
    #: Whether the layer refuses new state (``_tracker``, ``engine.network.tracking.StateLock``); the call template
    #: sets it once built. Read and set as an attribute: touching the instance's ``__dict__`` would make one.
    _state_locked = False

    def __init__(self, trainable=True, name=None, dtype="float32", activity_regularizer=None, **kwargs):
        dtype, kwargs = accept_keras_arguments(type(self), name, dtype, kwargs)
        unknown = set(kwargs) - _ALLOWED_KWARGS if kwargs else None
        if unknown:
            raise ValueError(
                f"Unrecognized keyword arguments passed to {type(self).__name__}: "
                f"{ {k: kwargs[k] for k in sorted(unknown)} }"
            )
        if name is not None:
            check_layer_name(type(self), name)
        self.name = name or unique_name(to_snake_case(type(self).__name__))
        self.dtype = dtype_names(dtype or "float32")[0]
        if trainable is not True and trainable is not False and not isinstance(trainable, np.bool_):
            raise ValueError(f"Expected `trainable` argument to be a boolean, but got: {trainable!r} (layer "
                             f"{self.name!r}, {type(self).__name__}). Pass True or False.")
        self._trainable = bool(trainable)
        self.built = False
        self.input_spec = None
        self._inbound_nodes = []
        self._outbound_nodes = []
        self._batch_input_shape = _batch_input_shape(kwargs) if kwargs else None
        self.activity_regularizer = None if activity_regularizer is None else regularizers.get(activity_regularizer)

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

    def _has_backward(self):
        """Whether the layer's gradient is hand-written (else its call is traced)."""
        return type(self).backward is not Layer.backward

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
