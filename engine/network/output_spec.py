"""What a symbolic call returns: KerasTensors for its outputs, and the specs of their masks.

A layer that defines ``compute_output_shape`` gets its output specs from it,
in the structure it returns (a shape, or tuples, lists and dicts of shapes, as
Keras' ``map_shape_structure`` reads them). Any other layer's ``call`` runs on
example arrays of the arguments' shapes (``example``), and the specs are read
from what it returns.
"""

import math

import numpy as np

from engine import tree
from engine.network.call_errors import raise_in_call_context
from engine.network.call_keywords import call_parameters
from engine.network.dtype_names import dtype_names
from engine.network.keras_tensor import KerasTensor
from engine.files.load_limits import charge_example


def is_shape(value) -> bool:
    """Whether ``value`` is one shape: a tuple or list of sizes (ints or None).

    Example:
        >>> is_shape((None, 3)), is_shape([(None, 3), (None, 4)])
        (True, False)
    """
    if not isinstance(value, (tuple, list)):
        return False
    for size in value:
        if size is not None and type(size) is not int and not isinstance(size, np.integer):
            return False
    return True


def specs_for_shapes(shapes, dtype: str):
    """KerasTensors of ``dtype`` for ``shapes``: one shape, or shapes nested in
    tuples, lists and dicts, whose structure the result keeps.

    Example:
        >>> specs_for_shapes(((None, 3), {"a": (2,)}), "float32")  # doctest: +NORMALIZE_WHITESPACE
        (<KerasTensor shape=(None, 3), dtype=float32, name=None>,
         {'a': <KerasTensor shape=(2,), dtype=float32, name=None>})
    """
    if is_shape(shapes):
        return KerasTensor._spec(shapes, dtype_names(dtype)[0])
    if isinstance(shapes, dict):
        return {key: specs_for_shapes(value, dtype) for key, value in shapes.items()}
    return type(shapes)(specs_for_shapes(value, dtype) for value in shapes)


def shapes_of(inputs):
    """The shape of each input, as a tuple, in the structure of ``inputs`` (None for an input not given)."""
    if type(inputs) is KerasTensor:
        return inputs._shape  # a tuple already
    if hasattr(inputs, "shape"):
        return tuple(inputs.shape)
    return tree.map_structure(lambda x: None if x is None else tuple(x.shape), inputs)


def inferred_output_spec(layer, args: list, kwargs: dict):
    """Output specs learned by running ``layer``'s ``call`` on examples of the
    arguments' whole shapes, for a layer without ``compute_output_shape``: unknown
    sizes 1, and, when an axis past the batch is unknown, 2 as well, so that an
    output axis that follows an unknown size (``ops.arange(ops.shape(x)[1])``)
    stays unknown. While a file is loaded the examples are charged against its
    budget. Losses the runs add (``add_loss``) belong to no call and are dropped."""
    flat_inputs = [t for t in tree.flatten(args[0]) if t is not None]
    batch_unknown = any(t.shape and t.shape[0] is None for t in flat_inputs)
    masks = {}
    if "mask" not in kwargs and "mask" in call_parameters(type(layer)) and symbolic_mask(args[0]) is not None:
        masks["mask"] = symbolic_mask(args[0])
    examples = [t for t in tree.flatten((args, kwargs, masks)) if isinstance(t, KerasTensor)]
    sizes = (1, 2) if any(None in t.shape[1:] for t in examples) else (1,)
    charge_example(layer.name, type(layer).__name__, sum(_example_bytes(t, sizes[-1]) for t in examples))
    runs = []
    for size in sizes:
        concrete_args = example(list(args), unknown=size)
        concrete_kwargs = {**example(kwargs, unknown=size), **example(masks, fill=True, unknown=size)}
        try:
            runs.append(layer._call(concrete_args[0], False, concrete_kwargs, tuple(concrete_args[1:])))
        except Exception as error:
            raise_in_call_context(
                layer, error, args[0], args[1:], kwargs,
                note=f"{type(layer).__name__} defines no compute_output_shape, so its output shape was inferred "
                     "by running call() on a zero batch of shapes "
                     f"{[tuple(size if d is None else d for d in t.shape) for t in flat_inputs]}, which failed. "
                     "If call() is right, define compute_output_shape(self, input_shape).")
    layer._clear_added_losses()

    def spec(*arrays):
        shapes = [np.shape(array) for array in arrays]
        shape = tuple(axis[0] if len(set(axis)) == 1 else None for axis in zip(*shapes))
        if batch_unknown and shape:
            shape = (None,) + shape[1:]
        return KerasTensor(shape, np.asarray(arrays[0]).dtype)

    return tree.pack_as(runs[0], [spec(*arrays) for arrays in zip(*map(tree.flatten, runs))])


def example(structure, fill=False, shrunk=False, unknown=1):
    """``structure`` with each KerasTensor replaced by an array of its shape
    (unknown dimensions ``unknown``) and dtype, filled with ``fill`` (masks get
    True: every step kept); other values as they are. ``shrunk`` examples keep the
    rank but no axis longer than 1, for results of which only the rank is read.

    Example:
        >>> example([KerasTensor((None, 3)), "same"], fill=True)
        [array([[1., 1., 1.]], dtype=float32), 'same']
    """
    def concrete(t):
        if not isinstance(t, KerasTensor):
            return t
        return np.full(_example_shape(t, shrunk, unknown), fill, dtype=t.dtype)

    return tree.map_structure(concrete, structure)


def _example_shape(tensor, shrunk=False, unknown=1):
    return tuple(unknown if d is None else min(d, 1) if shrunk else d for d in tensor.shape)


def _example_bytes(tensor, unknown=1):
    return math.prod(_example_shape(tensor, unknown=unknown)) * np.dtype(tensor.dtype).itemsize


def symbolic_mask(inputs):
    """The mask specs of symbolic ``inputs`` as ``call`` gets masks: one for a
    single tensor, a list for several, None when no input carries a mask."""
    if isinstance(inputs, KerasTensor):
        return inputs._keras_mask
    masks = [None if t is None else t._keras_mask for t in tree.flatten(inputs)]
    return None if all(m is None for m in masks) else masks


def attach_mask_specs(outputs, masks) -> None:
    """Gives each symbolic output the spec of its mask (a concrete example
    array, or a spec): a bool KerasTensor with the output's leading dimensions."""
    flat_outputs = tree.flatten(outputs)
    flat_masks = [masks] * len(flat_outputs) if masks is None or isinstance(masks, np.ndarray) else tree.flatten(masks)
    for output, mask in zip(flat_outputs, flat_masks):
        if mask is not None:
            output._set_mask(KerasTensor(output.shape[: np.ndim(mask)], "bool"))
