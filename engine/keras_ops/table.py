"""Every ``keras.ops`` function nodeweave has, one row each.

A row names the function, its NumPy implementation (under Keras' signature),
whether it is differentiable, the Keras namespace it belongs to (``numpy``,
``nn``, ``linalg``, ``math``, ``core``) and the name Keras gives its op nodes
(``abs`` records ``absolute``). Differentiable rows compute on traced values
with NumPy functions the tracer follows; the others compute on plain arrays
(their results are constants to a tape). Rows that ``record`` add an
``OpLayer`` to the graph when called on KerasTensors; the others (shapes,
conversions, control flow) answer or refuse there themselves.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine.keras_ops import core_functions as core
from engine.keras_ops import nn_functions as nn
from engine.keras_ops import numpy_functions as numpy_ops
from engine.keras_ops.numpy_functions import elementwise


@dataclass(frozen=True)
class Op:
    """One row: see the module docstring."""

    name: str
    implementation: Callable
    differentiable: bool
    namespace: str
    keras_name: str = ""
    records: bool = True
    returns_arrays: bool = True

    def __post_init__(self):
        if not self.keras_name:
            object.__setattr__(self, "keras_name", self.name)


def _ufuncs(namespace, differentiable, names, arity):
    return [Op(name, elementwise(getattr(np, ufunc), name, arity), differentiable, namespace, keras_name)
            for name, ufunc, keras_name in names]


def _same(names):
    """(public name, NumPy ufunc, Keras op name) for names that are all three."""
    return [(name, name, name) for name in names.split()]


_ROWS = [
    # ---- numpy: elementwise
    *_ufuncs("numpy", True, [*_same("add subtract multiply maximum minimum power"), ("divide", "divide", "divide"),
                             ("true_divide", "divide", "true_divide"), ("mod", "remainder", "mod")], 2),
    *_ufuncs("numpy", False, _same("floor_divide equal not_equal greater greater_equal less less_equal logical_and "
                                   "logical_or logical_xor"), 2),
    *_ufuncs("numpy", True, [*_same("exp expm1 log log1p log2 log10 sqrt square negative reciprocal sin cos tan "
                                    "arcsin arccos arctan sinh cosh tanh arctanh"),
                             ("abs", "absolute", "absolute"), ("absolute", "absolute", "absolute")], 1),
    *_ufuncs("numpy", False, _same("sign floor ceil logical_not isnan isinf isfinite"), 1),
    Op("round", numpy_ops.round, False, "numpy"),
    Op("clip", numpy_ops.clip, True, "numpy"),
    Op("where", numpy_ops.where, True, "numpy"),
    # ---- numpy: products
    Op("matmul", numpy_ops.matmul, True, "numpy"),
    Op("tensordot", numpy_ops.tensordot, True, "numpy"),
    Op("einsum", numpy_ops.einsum, True, "numpy"),
    Op("dot", numpy_ops.dot, True, "numpy"),
    Op("outer", numpy_ops.outer, True, "numpy"),
    # ---- numpy: reductions
    *[Op(f.__name__, f, True, "numpy") for f in (numpy_ops.mean, numpy_ops.sum, numpy_ops.max, numpy_ops.min,
                                                 numpy_ops.prod, numpy_ops.var, numpy_ops.std, numpy_ops.cumsum)],
    *[Op(f.__name__, f, False, "numpy") for f in (numpy_ops.argmax, numpy_ops.argmin, numpy_ops.any, numpy_ops.all,
                                                  numpy_ops.count_nonzero, numpy_ops.argsort)],
    # ---- numpy: shapes and layout
    *[Op(f.__name__, f, True, "numpy") for f in (
        numpy_ops.transpose, numpy_ops.reshape, numpy_ops.ravel, numpy_ops.expand_dims, numpy_ops.squeeze,
        numpy_ops.swapaxes, numpy_ops.moveaxis, numpy_ops.flip, numpy_ops.broadcast_to, numpy_ops.concatenate,
        numpy_ops.stack, numpy_ops.hstack, numpy_ops.vstack, numpy_ops.split, numpy_ops.pad, numpy_ops.take,
        numpy_ops.take_along_axis, numpy_ops.tile, numpy_ops.repeat, numpy_ops.sort, numpy_ops.tril,
        numpy_ops.triu)],
    # ---- numpy: new arrays
    *[Op(f.__name__, f, False, "numpy") for f in (
        numpy_ops.arange, numpy_ops.linspace, numpy_ops.zeros, numpy_ops.ones, numpy_ops.full, numpy_ops.eye,
        numpy_ops.zeros_like, numpy_ops.ones_like, numpy_ops.full_like)],
    Op("size", numpy_ops.size, False, "numpy", records=False, returns_arrays=False),
    Op("ndim", numpy_ops.ndim, False, "numpy", records=False, returns_arrays=False),
    # ---- nn
    *[Op(f.__name__, f, True, "nn") for f in (
        nn.relu, nn.relu6, nn.sigmoid, nn.hard_sigmoid, nn.softplus, nn.log_sigmoid, nn.softsign, nn.silu,
        nn.leaky_relu, nn.elu, nn.selu, nn.gelu, nn.softmax, nn.log_softmax, nn.normalize, nn.moments,
        nn.binary_crossentropy, nn.categorical_crossentropy, nn.sparse_categorical_crossentropy, nn.conv,
        nn.depthwise_conv, nn.max_pool, nn.average_pool)],
    Op("swish", nn.silu, True, "nn", "silu"),
    Op("one_hot", nn.one_hot, False, "nn"),
    # ---- math and linalg
    *[Op(f.__name__, f, True, "math") for f in (nn.logsumexp, nn.top_k, nn.rsqrt, nn.erf)],
    Op("norm", nn.norm, True, "linalg"),
    # ---- core
    Op("cast", core.cast, True, "core"),
    Op("stop_gradient", core.stop_gradient, False, "core"),
    Op("scatter", core.scatter, True, "core"),
    Op("slice", core.slice, True, "core"),
    Op("slice_update", core.slice_update, True, "core"),
    *[Op(f.__name__, f, True, "core", records=False, returns_arrays=False) for f in (
        core.convert_to_tensor, core.convert_to_numpy, core.shape, core.cond, core.while_loop, core.fori_loop)],
]

OPS = {row.name: row for row in _ROWS}
if len(OPS) != len(_ROWS):
    raise ValueError(f"engine/keras_ops/table.py lists a name twice: {sorted(r.name for r in _ROWS)}")
