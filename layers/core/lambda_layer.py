"""Lambda: wraps a NumPy function as a layer, with an optional backward function."""

import inspect

from engine import Layer
from engine.network.output_spec import inferred_output_spec
from engine.files.registry import function_name, resolve_function


class Lambda(Layer):
    """Applies ``function(inputs, **arguments)``.

    A Lambda is forward-only unless given ``backward``; gradients cannot flow
    through a plain Python function otherwise.

    Args:
        function: the function of the inputs (an array, or a list for list inputs).
            If it takes a ``training`` argument, the layer's training flag is passed.
        output_shape: the output shape without the batch axis (a tuple), or a
            function of the full input shape; by default the shape is inferred by
            running ``function`` on a zero batch.
        backward: ``backward(inputs, outputs, grad_outputs) -> grad_inputs``, the
            gradient of the inputs (the structure of ``inputs``).
        arguments: keyword arguments passed to ``function``.
        mask: None (the layer drops masks), or ``mask(inputs, mask) -> mask``,
            the mask of the outputs given the inputs and their mask, as Keras'
            ``compute_mask`` (``lambda inputs, mask: mask`` passes it on).

    Example:
        >>> import numpy as np
        >>> square = Lambda(lambda x: x ** 2, backward=lambda x, y, g: 2 * x * g)
        >>> square(np.array([[1.0, 3.0]]))
        array([[1., 9.]], dtype=float32)
    """

    def __init__(self, function, output_shape=None, backward=None, arguments=None, mask=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise ValueError(f"Lambda expects `function` to be callable. Received: function={function!r}.")
        if backward is not None and not callable(backward):
            raise ValueError(
                "Lambda expects `backward` to be None or a callable "
                f"backward(inputs, outputs, grad_outputs) -> grad_inputs. Received: backward={backward!r}"
            )
        if output_shape is not None and not callable(output_shape):
            if not isinstance(output_shape, (list, tuple)) or not all(
                d is None or (isinstance(d, int) and d >= 0) for d in output_shape
            ):
                raise ValueError(
                    "Lambda expects `output_shape` to be None, a tuple of sizes (without the batch "
                    f"axis) or a function of the input shape. Received: output_shape={output_shape!r}"
                )
            output_shape = tuple(output_shape)
        if arguments is not None and not isinstance(arguments, dict):
            raise ValueError(f"Lambda expects `arguments` to be a dict. Received: arguments={arguments!r}")
        if mask is not None and not callable(mask):
            raise ValueError(
                "Lambda expects `mask` to be None or a callable mask(inputs, mask) -> mask, the mask of its "
                f"outputs. Received: mask={mask!r}"
            )
        self.function = function
        self._output_shape = output_shape
        self.backward_function = backward
        self.arguments = dict(arguments or {})
        self.mask = mask
        self.supports_masking = mask is not None
        self._passes_training = _takes_training(function)

    def compute_output_spec(self, *args, **kwargs):
        if self._output_shape is None:
            try:
                return inferred_output_spec(self, args, kwargs)
            except ValueError as error:
                cause = error.__cause__
                raise ValueError(
                    f"Layer {self.name!r} (Lambda) could not infer its output shape by running "
                    f"{_name(self.function)} on a zero batch: {type(cause).__name__}: {cause}. "
                    "Pass output_shape= to the Lambda."
                ) from cause
        return super().compute_output_spec(*args, **kwargs)

    def compute_output_shape(self, input_shape):
        if callable(self._output_shape):
            return self._output_shape(input_shape)
        first = input_shape[0] if input_shape and isinstance(input_shape[0], tuple) else input_shape
        return (first[0],) + self._output_shape

    def compute_mask(self, inputs, mask=None):
        return None if self.mask is None else self.mask(inputs, mask)

    def call(self, inputs, training=False):
        if self._passes_training:
            return self.function(inputs, training=training, **self.arguments)
        return self.function(inputs, **self.arguments)

    def _has_backward(self):
        return self.backward_function is not None

    def _may_make_masks(self):
        return self.mask is not None

    def forward(self, inputs, training=True):
        """With ``backward=``, the cache for it; otherwise the function is traced
        (plain NumPy trains without a hand-written gradient)."""
        if not self._has_backward():
            return super().forward(inputs, training=training)
        outputs = self.call(inputs, training=training)
        return outputs, (inputs, outputs)

    def backward(self, cache, grad_outputs):
        if not self._has_backward():
            return super().backward(cache, grad_outputs)
        inputs, outputs = cache
        return self.backward_function(inputs, outputs, grad_outputs), {}

    def get_config(self):
        """Functions are saved by name: their registered name, else ``module:qualname``."""
        config = super().get_config()
        output_shape = self._output_shape
        config.update(
            function=function_name(self.function),
            output_shape=function_name(output_shape) if callable(output_shape) else output_shape,
            backward=None if self.backward_function is None else function_name(self.backward_function),
            arguments=self.arguments,
            mask=None if self.mask is None else function_name(self.mask),
        )
        return config

    @classmethod
    def from_config(cls, config):
        """Finds the functions by registered name (or ``custom_objects``); in safe mode
        nothing else, with ``safe_mode=False`` also by importing ``module:qualname``."""
        config = dict(config)
        layer = config.get("name")
        for key in ("function", "backward", "output_shape", "mask"):
            if isinstance(config.get(key), str):
                config[key] = resolve_function(config[key], f"Lambda layer {layer!r}")
        return cls(**config)


def _takes_training(function):
    try:
        return "training" in inspect.signature(function).parameters
    except ValueError:  # some builtins have no signature
        return False


def _name(function):
    return getattr(function, "__name__", type(function).__name__)
