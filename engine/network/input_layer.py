"""The graph's entry points: ``InputLayer`` and the ``Input`` function."""

import warnings

import numpy as np

from engine.dtypes import dtype_name
from engine.network.keras_tensor import KerasTensor
from engine.network.layer import Layer
from engine.network.node import Node


class InputLayer(Layer):
    """A layer with no inputs whose single Node outputs a placeholder KerasTensor.

    Args:
        shape: shape of one sample, without the batch axis (``(32,)``).
        batch_size: fixed batch size, or None.
        dtype: dtype of the data fed here (``"float32"`` when None).
        sparse, ragged: accepted for Keras compatibility; only False (dense
            NumPy arrays) is supported.
        batch_shape: the full shape, batch axis included (instead of ``shape``
            and ``batch_size``).
        input_tensor: an existing KerasTensor made directly
            (``KerasTensor(shape, dtype)``) to use as this layer's output.
        optional: whether the input may be ``None`` when the model runs; the
            layers reading it then receive ``None``.
        name: unique name; by default ``input_layer``, ``input_layer_1``, ...

    ``input_shape=`` (deprecated in Keras, with a warning) and
    ``batch_input_shape=`` (Keras 2 configs) are read as ``shape`` and
    ``batch_shape``.

    Example:
        >>> layer = InputLayer(shape=(8,), name="pixels")
        >>> layer.output.shape
        (None, 8)
    """

    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None, ragged=None, batch_shape=None,
                 input_tensor=None, optional=False, name=None, **kwargs):
        if "input_shape" in kwargs:
            warnings.warn("Argument `input_shape` is deprecated. Use `shape` instead.", stacklevel=2)
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs:
            batch_shape = kwargs.pop("batch_input_shape")
        where = f"InputLayer {name!r}" if name else "InputLayer"
        for argument, value in (("sparse", sparse), ("ragged", ragged)):
            if value:
                given = (f"You cannot provide an incompatible `{argument}` with `input_tensor` (always dense here): "
                         if input_tensor is not None else "")
                raise ValueError(
                    f"{given}`{argument}=True` is not supported by {where}: nodeweave runs on dense NumPy "
                    f"arrays. Pass {argument}=False (the default) and feed dense arrays."
                )
        if input_tensor is not None:
            batch_shape, dtype = _from_input_tensor(input_tensor, where, shape, batch_size, batch_shape, dtype)
        else:
            batch_shape = _batch_shape(shape, batch_size, batch_shape)
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.batch_shape = batch_shape
        self.sparse = False
        self.ragged = False
        self.optional = bool(optional)
        self.built = True
        output = input_tensor if input_tensor is not None else KerasTensor(batch_shape, self.dtype, name=self.name)
        Node(self, (), {}, output)

    def call(self, inputs=None, training=False):
        return inputs

    def forward(self, inputs=None, training=True):
        return inputs, None

    def backward(self, cache, grad_outputs):
        return grad_outputs, {}

    def flops(self, input_shapes, output_shapes):
        return 0

    def get_config(self):
        return {"batch_shape": list(self.batch_shape), "dtype": self.dtype, "sparse": False, "ragged": False,
                "name": self.name, "optional": self.optional}


def _batch_shape(shape, batch_size, batch_shape):
    """The batch shape from ``shape`` and ``batch_size``, or from ``batch_shape``, with Keras' conflicts rejected."""
    if shape is not None and batch_shape is not None:
        raise ValueError(
            f"You cannot pass both `shape` and `batch_shape` at the same time (received shape={shape!r} and "
            f"batch_shape={batch_shape!r}). Pass shape= (without the batch axis) or batch_shape= (with it)."
        )
    if batch_size is not None and batch_shape is not None:
        raise ValueError(
            f"You cannot pass both `batch_size` and `batch_shape` at the same time (received batch_size="
            f"{batch_size!r} and batch_shape={batch_shape!r}). Put the batch size first in batch_shape instead."
        )
    if shape is None and batch_shape is None:
        raise ValueError("You must pass a `shape` argument (the shape of one sample, e.g. shape=(32,)), or a "
                         "`batch_shape` (with the batch axis first).")
    if shape is not None:
        return (batch_size,) + _standardize_shape(shape, "shape")
    return _standardize_shape(batch_shape, "batch_shape")


def _from_input_tensor(tensor, where, shape, batch_size, batch_shape, dtype):
    """``(batch_shape, dtype)`` of ``tensor``, refusing arguments that contradict it, as Keras does."""
    if not isinstance(tensor, KerasTensor):
        raise ValueError(
            "Argument `input_tensor` must be a KerasTensor. Received invalid type: "
            f"input_tensor={tensor!r} (of type {type(tensor).__name__}). Make one with KerasTensor(shape, dtype), "
            "or pass shape= instead."
        )
    if tensor._keras_history is not None:
        raise ValueError(
            f"{where} expects `input_tensor` to be a KerasTensor made directly (KerasTensor(shape, dtype)), but "
            f"{tensor.name!r} already comes from layer {tensor._keras_history.layer.name!r}. Use that tensor "
            "itself as the model input instead of wrapping it in an InputLayer."
        )
    conflicts = [
        ("batch_size", batch_size is not None and (not tensor.shape or tensor.shape[0] != batch_size)),
        ("shape", shape is not None and tuple(shape) != tensor.shape[1:]),
        ("batch_shape", batch_shape is not None and tuple(batch_shape) != tensor.shape),
        ("dtype", dtype is not None and dtype_name(dtype) != tensor.dtype),
    ]
    for argument, conflict in conflicts:
        if conflict:
            raise ValueError(
                f"When providing the `input_tensor` argument, you cannot provide an incompatible `{argument}` "
                f"argument: the tensor has shape {tensor.shape} and dtype {tensor.dtype}. Leave {argument} out."
            )
    return tensor.shape, tensor.dtype


def _standardize_shape(shape, argument):
    """``shape`` as a tuple of non-negative ints and None (NumPy integers accepted, as in Keras)."""
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise ValueError(f"Cannot convert '{shape!r}' to a shape: {argument} must be a tuple, e.g. {argument}=(32,).")
    shape = tuple(shape)
    for d in shape:
        if d is not None and (isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0):
            raise ValueError(
                f"Cannot convert '{shape!r}' to a shape: found invalid dimension {d!r} of type {type(d).__name__}. "
                f"Each entry of {argument} is a non-negative int or None."
            )
    return tuple(None if d is None else int(d) for d in shape)


def Input(shape=None, batch_size=None, dtype=None, sparse=None, ragged=None, batch_shape=None, name=None,
          tensor=None, optional=False):
    """Returns a symbolic tensor that is an input of a graph.

    Args:
        shape: shape of one sample, without the batch axis (``(32,)``).
        batch_size: fixed batch size, or None.
        dtype: dtype of the data fed here (``"float32"`` when None); data is
            cast to it when the model runs.
        sparse, ragged: only False is supported (dense NumPy arrays).
        batch_shape: the full shape, batch axis included.
        name: unique name; by default ``input_layer``, ``input_layer_1``, ...
        tensor: an existing KerasTensor (made directly) to use as the input.
        optional: whether ``None`` may be fed here (the layers reading the
            input then receive ``None``).

    Example:
        >>> x = Input(shape=(32,), name="input_a")
        >>> x.shape
        (None, 32)
    """
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse, ragged=ragged,
                       batch_shape=batch_shape, input_tensor=tensor, optional=optional, name=name)
    return layer.output
