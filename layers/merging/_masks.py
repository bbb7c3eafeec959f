"""The checks the merge layers share on ``compute_mask``'s arguments."""


def merge_masks(layer, inputs, mask):
    """The list of the inputs' masks (None where an input has none), or None
    when ``mask`` is None; raises ValueError, as Keras does, when ``mask`` is
    not a list with one entry per input."""
    if mask is None:
        return None
    if not isinstance(mask, (list, tuple)):
        raise ValueError(
            f"Layer {layer.name!r} ({type(layer).__name__}) merges a list of inputs, so `mask` should be a list "
            f"with one mask (or None) per input. Received: mask={mask!r}"
        )
    if not isinstance(inputs, (list, tuple)):
        raise ValueError(
            f"Layer {layer.name!r} ({type(layer).__name__}): `inputs` should be a list. Received: inputs={inputs!r}"
        )
    if len(mask) != len(inputs):
        raise ValueError(
            f"Layer {layer.name!r} ({type(layer).__name__}): the lists `inputs` and `mask` should have the same "
            f"length. Received: {len(inputs)} inputs and {len(mask)} masks."
        )
    return list(mask)
