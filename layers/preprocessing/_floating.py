"""The preprocessing layers take integer data (pixels, counts) and compute in floating point."""


def floating(inputs, dtype):
    """``inputs`` cast to ``dtype`` when not floating already (a float64 gradient check stays float64)."""
    return inputs if inputs.dtype.kind == "f" else inputs.astype(dtype)
