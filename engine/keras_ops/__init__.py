"""``keras.ops`` on NumPy: every function of ``table.py``, flat, and by Keras namespace.

Each function takes Keras' arguments and works on NumPy arrays and Python
numbers (returning arrays with Keras' dtypes: ``convert_to_tensor(1.0)`` is
float32), on traced values inside a ``GradientTape`` or a layer's traced call
(so it trains), and on KerasTensors, where it adds an ``OpLayer`` to the graph
as Keras adds an op node. ``nn``, ``numpy`` and ``linalg`` hold the functions
Keras keeps in ``keras.ops.nn``, ``keras.ops.numpy`` and ``keras.ops.linalg``.

Example:
    >>> import numpy as np
    >>> from engine import keras_ops as ops
    >>> ops.softmax(np.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    >>> from engine import Input
    >>> x = Input(shape=(4,))
    >>> ops.matmul(x, np.ones((4, 2), "float32")).shape
    (None, 2)
"""

import sys
import types

from engine import extensions
from engine.keras_ops.dispatch import make_function
from engine.keras_ops.table import OPS

_FUNCTIONS = {name: make_function(row) for name, row in OPS.items()}
globals().update(_FUNCTIONS)


def _namespace(name, keras_namespaces):
    module = types.ModuleType(f"engine.keras_ops.{name}", f"The functions of ``keras.ops.{name}``.")
    module.__dict__.update({n: f for n, f in _FUNCTIONS.items() if OPS[n].namespace in keras_namespaces})
    return module


nn = _namespace("nn", ("nn",))
numpy = _namespace("numpy", ("numpy",))
linalg = _namespace("linalg", ("linalg",))

__all__ = sorted(_FUNCTIONS) + ["linalg", "nn", "numpy"]


extensions.provide("keras_ops", sys.modules[__name__])  # convert_to_tensor casts a KerasTensor with ops.cast
