"""Flattening and re-packing of the nested inputs a layer can be called with.

A layer may be called on one tensor, a list or tuple of tensors, or a dict of
them, and with tensors among its keyword arguments. The graph needs them as one
flat list (the Node's ``input_tensors``); the executor needs to put arrays back
into the same structure. Dicts are flattened in sorted key order, as in Keras.
"""


_CONTAINERS = (list, tuple, dict)


def flatten(structure):
    """Returns the leaves of ``structure`` (lists, tuples, dicts) in order."""
    if type(structure) not in _CONTAINERS and not isinstance(structure, (list, tuple, dict)):
        return [structure]
    if isinstance(structure, (list, tuple)):
        leaves = []
        for item in structure:
            leaves.extend(flatten(item))
        return leaves
    if isinstance(structure, dict):
        leaves = []
        for key in sorted(structure):
            leaves.extend(flatten(structure[key]))
        return leaves
    return [structure]


def pack_as(structure, leaves):
    """Returns ``structure`` with its leaves replaced, in order, by ``leaves``."""
    return _pack(structure, iter(leaves))


def _pack(structure, iterator):
    if isinstance(structure, (list, tuple)):
        items = [_pack(item, iterator) for item in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") else type(structure)(items)  # namedtuples
    if isinstance(structure, dict):
        return {key: _pack(structure[key], iterator) for key in sorted(structure)}
    return next(iterator)


def map_structure(fn, structure):
    """Applies ``fn`` to every leaf of ``structure``, keeping its shape."""
    return pack_as(structure, [fn(leaf) for leaf in flatten(structure)])
