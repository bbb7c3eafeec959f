"""Masks on eager outputs: ``layer(x)._keras_mask``, as Keras' tensors carry them.

A NumPy array takes no attributes, so a layer called on arrays returns, where
its output has a mask (``Embedding(mask_zero=True)``, ``Masking``, a layer
passing its input's mask on), a ``MaskedOutput``: an ndarray view of the same
data with the mask in ``_keras_mask``. Outputs without a mask stay plain
arrays. The next layer called on it gets the mask as its ``mask`` argument, as
in Keras. What is computed from it (an operation, a slice, ``np.asarray``) is a
plain ndarray, and it pickles as one: the mask belongs to that output alone.
"""

import numpy as np

from engine import tree
from engine.network.argument_gradients import call_parameter_names
from engine.network.call_keywords import mask_parameters


class MaskedOutput(np.ndarray):
    """An eager layer output carrying its mask as ``_keras_mask``.

    Example:
        >>> from layers import Embedding
        >>> out = Embedding(10, 2, mask_zero=True)(np.array([[3, 0]]))
        >>> out._keras_mask
        array([[ True, False]])
        >>> out  # doctest: +ELLIPSIS
        array([[[...]]], dtype=float32)
        >>> isinstance(out, np.ndarray), type(out * 2).__name__, type(out[0]).__name__
        (True, 'ndarray', 'ndarray')
    """

    _keras_mask = None

    def __array_wrap__(self, array, context=None, return_scalar=False):
        array = array.view(np.ndarray)
        return array[()] if return_scalar else array

    def __getitem__(self, key):
        return self.view(np.ndarray)[key]

    def __reduce__(self):
        return self.view(np.ndarray).__reduce__()

    def __repr__(self):  # shown as the array it is; the mask is an attribute, as on Keras' tensors
        return repr(self.view(np.ndarray))


def input_mask(inputs):
    """The masks eager ``inputs`` carry, as ``call`` takes them: one for a
    single array, a list for several; None when none carries one."""
    if isinstance(inputs, np.ndarray):
        return inputs._keras_mask if isinstance(inputs, MaskedOutput) else None
    masks = [getattr(leaf, "_keras_mask", None) if isinstance(leaf, MaskedOutput) else None
             for leaf in tree.flatten(inputs)]
    return None if all(mask is None for mask in masks) else masks


def argument_masks(layer_type, args, kwargs):
    """The ``<argument>_mask`` keywords a call on eager arrays passes, as Keras does:
    for each argument whose arrays carry masks and whose ``<argument>_mask``
    parameter ``layer_type.call`` has and was not given.

    Args:
        layer_type: the layer's class.
        args: the call's positional arguments, the inputs first.
        kwargs: its keyword arguments.

    Returns:
        A dict from ``<argument>_mask`` to the masks, empty when none applies.

    Example:
        >>> from layers import Embedding, MultiHeadAttention
        >>> value = Embedding(10, 4, mask_zero=True)(np.array([[3, 0]]))
        >>> sorted(argument_masks(MultiHeadAttention, (np.ones((1, 3, 4)), value), {}))
        ['value_mask']
    """
    parameters = mask_parameters(layer_type)
    if not parameters:
        return {}
    given = {**dict(zip(call_parameter_names(layer_type), args)), **kwargs}
    masks = {}
    for name, value in given.items():
        key = f"{name}_mask"
        if key in parameters and given.get(key) is None and value is not None:
            mask = input_mask(value)
            if mask is not None:
                masks[key] = mask
    return masks


def attach(outputs, masks):
    """``outputs`` with each array that has a mask in ``masks`` (one for all,
    or in the outputs' structure) turned into a MaskedOutput carrying it."""
    if masks is None:
        return outputs
    flat_outputs = tree.flatten(outputs)
    flat_masks = [masks] * len(flat_outputs) if isinstance(masks, np.ndarray) else tree.flatten(masks)
    if len(flat_masks) != len(flat_outputs):
        return outputs
    carried = []
    for output, mask in zip(flat_outputs, flat_masks):
        if mask is not None and isinstance(output, np.ndarray):
            output = output.view(MaskedOutput)
            output._keras_mask = np.asarray(mask)
        carried.append(output)
    return tree.pack_as(outputs, carried)
