"""``keras.ops.core``: conversions, casts, control flow and scatter/slice updates.

Control flow runs eagerly, in Python: ``cond`` calls one branch, the loops
loop. Their arguments are functions, which a model file cannot hold, so on
KerasTensors they raise and say what to write instead.
"""

import builtins

import numpy as np

from engine import extensions, tree
from engine.autodiff import Traced, untraced
from engine.keras_ops.eager import keras_dtype
from engine.network.keras_tensor import KerasTensor
from engine.network.variable import Variable


def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    """``x`` as an array: Python floats float32, ints int32; traced values and KerasTensors as they are.

    Example:
        >>> convert_to_tensor([1.0, 2.0]).dtype
        dtype('float32')
    """
    if sparse or ragged:
        raise ValueError("ops.convert_to_tensor makes dense arrays: sparse and ragged tensors are not supported.")
    if isinstance(x, KerasTensor):
        if dtype is None or np.dtype(dtype) == np.dtype(x.dtype):
            return x
        return extensions.provided("keras_ops").cast(x, dtype)  # engine.keras_ops is built from this module
    array = keras_dtype(x.value if isinstance(x, Variable) else x)
    return array if dtype is None else np.astype(array, dtype)


def convert_to_numpy(x):
    """``x`` as a NumPy array (a traced value's value, without its gradient)."""
    if isinstance(x, KerasTensor):
        raise ValueError(f"ops.convert_to_numpy cannot convert the symbolic tensor {x.name!r} (shape {x.shape}): it "
                         "has no value until the model runs. Call it on the model's outputs (model.predict) instead.")
    return np.asarray(untraced(x.value if isinstance(x, Variable) else x))


def cast(x, dtype):
    """``x`` converted to ``dtype``."""
    return np.astype(x, dtype) if isinstance(x, (Traced, np.ndarray)) else np.asarray(x, dtype)


def stop_gradient(variable):
    """``variable``'s value, through which no gradient flows."""
    return np.asarray(untraced(variable))


def shape(x):
    """The shape of ``x`` as a tuple (None for unknown sizes of a KerasTensor)."""
    return tuple(x.shape)


def _symbolic(function, value):
    if builtins.any(isinstance(leaf, KerasTensor) for leaf in tree.flatten(value)):
        raise ValueError(
            f"ops.{function} runs eagerly in nodeweave (its arguments are Python functions, which a model file "
            "cannot hold), so it cannot take KerasTensors. Write the computation with ops.where on tensors, or "
            "inside a custom layer's call(), where it runs on arrays.")


def cond(pred, true_fn, false_fn):
    """``true_fn()`` if ``pred`` else ``false_fn()``, evaluated eagerly."""
    _symbolic("cond", pred)
    return _tensors(true_fn() if bool(np.asarray(untraced(pred))) else false_fn())


def while_loop(cond, body, loop_vars, maximum_iterations=None):
    """Runs ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (at most ``maximum_iterations`` times).

    Example:
        >>> while_loop(lambda i: i < 5, lambda i: i + 1, 0)
        array(5, dtype=int32)
    """
    _symbolic("while_loop", loop_vars)
    several = isinstance(loop_vars, (tuple, list))
    values = tuple(loop_vars) if several else (loop_vars,)
    steps = 0
    while (maximum_iterations is None or steps < maximum_iterations) and bool(np.asarray(untraced(cond(*values)))):
        values = body(*values)
        values = tuple(values) if isinstance(values, (tuple, list)) else (values,)
        steps += 1
    return _tensors(type(loop_vars)(values) if several else values[0])


def fori_loop(lower, upper, body_fun, init_val):
    """``init_val`` after ``val = body_fun(i, val)`` for ``i`` from ``lower`` to ``upper - 1``.

    Example:
        >>> fori_loop(0, 4, lambda i, total: total + i, 0)
        array(6, dtype=int32)
    """
    _symbolic("fori_loop", init_val)
    value = init_val
    for i in range(int(untraced(lower)), int(untraced(upper))):
        value = body_fun(i, value)
    return _tensors(value)


def _tensors(structure):
    """The results of control flow as tensors, as Keras returns them (Python numbers become arrays)."""
    return tree.map_structure(keras_dtype, structure)


def scatter(indices, values, shape):
    """An array of ``shape``, zero except ``values`` added at ``indices`` (rows of leading-axis indices)."""
    indices = np.asarray(untraced(indices))
    shape = tuple(shape)
    depth = indices.shape[-1]
    flat = np.ravel_multi_index(np.reshape(indices, (-1, depth)).T, shape[:depth])
    rows = (flat[:, None] == np.arange(int(np.prod(shape[:depth])))).astype(np.result_type(untraced(values)))
    updates = np.reshape(values, (flat.size, -1))
    return np.reshape(rows.T @ updates, shape)


def slice(inputs, start_indices, shape):  # noqa: A001 (Keras' name)
    """The block of ``inputs`` of ``shape`` starting at ``start_indices``."""
    return inputs[tuple(builtins.slice(int(s), int(s) + int(n)) for s, n in zip(start_indices, shape))]


def slice_update(inputs, start_indices, updates):
    """``inputs`` with the block starting at ``start_indices`` replaced by ``updates``."""
    starts = [int(s) for s in start_indices]
    widths = [(s, n - s - u) for s, n, u in zip(starts, np.shape(inputs), np.shape(updates))]
    inside = np.pad(np.ones(np.shape(updates), bool), widths)
    return np.where(inside, np.pad(updates, widths), inputs)
