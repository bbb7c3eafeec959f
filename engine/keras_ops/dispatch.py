"""The public function of one table row: eager on arrays and traced values, a graph node on KerasTensors."""

import functools

from engine import tree
from engine.keras_ops import eager
from engine.keras_ops.op_layer import record
from engine.network.keras_tensor import KerasTensor


def make_function(row):
    """The ``keras.ops`` function ``row.name``, with its implementation's signature and docstring."""

    @functools.wraps(row.implementation)
    def function(*args, **kwargs):
        bound = eager.bind(row, args, kwargs)
        if row.records and any(isinstance(leaf, KerasTensor) for leaf in tree.flatten((bound.args, bound.kwargs))):
            return record(row, bound)
        return eager.evaluate(row, bound)

    function.__name__ = function.__qualname__ = row.name
    function.__module__ = "engine.keras_ops"
    return function
