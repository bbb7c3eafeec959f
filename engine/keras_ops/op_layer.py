"""A ``keras.ops`` call on KerasTensors, recorded as a node of the graph.

Keras records ``ops.matmul(x, w)`` on symbolic tensors as an operation node; we
record it as an ``OpLayer``: an ordinary layer (so it saves, draws and trains
like any other) called on the call's tensors, which keeps the function's name
and its other arguments (numbers, strings, constant arrays) in its config. Its
``call`` runs the same function as an eager call, so it trains by tracing.
"""

import math

import numpy as np

from engine import tree
from engine.dtypes import dtype_kind
from engine.keras_ops import eager
from engine.keras_ops.table import OPS
from engine.network.keras_tensor import KerasTensor
from engine.network.layer import Layer
from engine.files.load_limits import charge_example
from engine.network.naming import unique_name

# Unknown sizes take two values in the examples that infer output shapes: an
# output axis whose size differs between the two depends on an unknown size.
# The second pair fits an unknown size broadcast against a known one.
_EXAMPLE_SIZES = ((2, 4), (1, 2))
# Functions whose FLOPs are not one per output element.
_CONTRACTIONS = frozenset({"matmul", "dot", "tensordot", "einsum", "outer", "conv", "depthwise_conv"})


class OpLayer(Layer):
    """One call of the ``keras.ops`` function ``function`` on KerasTensors.

    Args:
        function: the function's name in ``engine.keras_ops`` (``"matmul"``).
        arguments: the call's arguments as ``{"args": [...], "kwargs": {...}}``
            in JSON form, each tensor replaced by ``{"__tensor__": i}``, its
            index among the tensors the layer is called on.
        **kwargs: Layer arguments (``name``: by default the op's Keras name).

    Example:
        >>> from engine import Input
        >>> from engine import keras_ops as ops
        >>> y = ops.softmax(Input(shape=(3,)))
        >>> type(y._keras_history.layer).__name__, y.shape
        ('OpLayer', (None, 3))
    """

    def __init__(self, function: str, arguments: dict, **kwargs):
        if function not in OPS or not OPS[function].records:
            known = sorted(name for name, row in OPS.items() if row.records)
            raise ValueError(f"OpLayer expects function to name a keras.ops function that records on KerasTensors, "
                             f"one of {known}; received {function!r}.")
        if kwargs.get("name") is None:
            kwargs["name"] = unique_name(OPS[function].keras_name)
        super().__init__(**kwargs)
        self.function, self.arguments = function, arguments
        self._row = OPS[function]

    def call(self, inputs):
        tensors = inputs if isinstance(inputs, list) else [inputs]
        args, kwargs = _decode(self.arguments["args"], tensors), _decode(self.arguments["kwargs"], tensors)
        return eager.evaluate(self._row, eager.bind(self._row, args, kwargs))

    def compute_output_spec(self, inputs):
        """Specs learned by running the function on two examples of the inputs, unknown
        sizes 2 then 4 (or 1 then 2, for an unknown size broadcast against a known one)."""
        tensors = inputs if isinstance(inputs, list) else [inputs]
        # what the declared shapes force (unknown sizes 1), as Layer charges a call on examples
        charge_example(self.name, type(self).__name__,
                       sum(math.prod(1 if d is None else d for d in t.shape) * np.dtype(t.dtype).itemsize
                           for t in tensors))
        failure = None
        for sizes in _EXAMPLE_SIZES:
            try:
                results = [self._run_example(inputs, tensors, size) for size in sizes]
                break
            except Exception as error:  # noqa: BLE001 (re-raised below when no sizes fit)
                failure = failure or error
        else:
            shapes = [tuple(t.shape) for t in tensors]
            raise type(failure)(f"ops.{self.function} cannot be applied to tensors of shapes {shapes}: {failure}") \
                from None
        specs = [KerasTensor(tuple(a if a == b else None for a, b in zip(np.shape(x), np.shape(y))), x.dtype)
                 for x, y in zip(*map(tree.flatten, results))]
        return tree.pack_as(results[0], specs)

    def _run_example(self, inputs, tensors, size):
        examples = [np.zeros(tuple(size if d is None else d for d in t.shape), t.dtype) for t in tensors]
        with np.errstate(all="ignore"):
            return self.call(examples if isinstance(inputs, list) else examples[0])

    def flops(self, input_shapes, output_shapes):
        """2 per multiply-add for ``matmul`` and ``dot`` of a tensor first argument, 1 per output
        element for the other ops; None (unknown) for the other contractions and convolutions."""
        outputs = sum(math.prod(shape) for shape in output_shapes)
        if self.function in _CONTRACTIONS:
            if self.function in ("matmul", "dot") and self.arguments["args"][0] == {"__tensor__": 0}:
                return 2 * input_shapes[0][-1] * outputs
            return None
        return outputs

    def get_config(self):
        config = super().get_config()
        config.update(function=self.function, arguments=self.arguments)
        return config


def record(row, bound):
    """Adds the OpLayer of ``row``'s call with ``bound`` arguments to the graph; returns its outputs."""
    tensors = []
    arguments = {"args": _encode(list(bound.args), tensors, row), "kwargs": _encode(bound.kwargs, tensors, row)}
    floating = [t.dtype for t in tensors if dtype_kind(t.dtype) == "f"]
    layer = OpLayer(row.name, arguments, dtype=floating[0] if floating else "float32")
    return layer(tensors if len(tensors) > 1 else tensors[0])


def _encode(value, tensors, row):
    """``value`` in JSON form, each KerasTensor appended to ``tensors`` and replaced by its index."""
    if isinstance(value, KerasTensor):
        tensors.append(value)
        return {"__tensor__": len(tensors) - 1}
    if isinstance(value, dict):
        return {key: _encode(item, tensors, row) for key, item in value.items()}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(item, tensors, row) for item in value]}
    if isinstance(value, list):
        return [_encode(item, tensors, row) for item in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return {"__array__": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, (type, np.dtype)):
        return np.dtype(value).name
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(
        f"ops.{row.name} on KerasTensors records its arguments in the model, so they must be tensors, numbers, "
        f"strings, arrays or lists of them; received {value!r} ({type(value).__name__}). Compute it in a custom "
        "layer's call() instead.")


def _decode(value, tensors):
    if isinstance(value, list):
        return [_decode(item, tensors) for item in value]
    if not isinstance(value, dict):
        return value
    if "__tensor__" in value:
        return tensors[value["__tensor__"]]
    if "__tuple__" in value:
        return tuple(_decode(item, tensors) for item in value["__tuple__"])
    if "__array__" in value:
        return np.array(value["__array__"], value["dtype"])
    return {key: _decode(item, tensors) for key, item in value.items()}
