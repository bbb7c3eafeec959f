"""Padding variable-length sequences into one array, as Keras' ``pad_sequences``."""

import numpy as np


def pad_sequences(sequences, maxlen: int | None = None, dtype="int32", padding: str = "pre",
                  truncating: str = "pre", value=0.0) -> np.ndarray:
    """Pads (or truncates) each sequence to ``maxlen`` steps; returns an array of
    shape ``(len(sequences), maxlen, *step_shape)``.

    Args:
        sequences: a list of sequences (lists or arrays of steps).
        maxlen: the length of the result; by default the longest sequence's.
        dtype: the result's dtype (``object`` for variable-length strings).
        padding: ``"pre"`` or ``"post"``: pad before or after each sequence.
        truncating: ``"pre"`` or ``"post"``: drop steps from the start or
            the end of sequences longer than ``maxlen``.
        value: the padding value.

    Example:
        >>> pad_sequences([[1], [2, 3], [4, 5, 6]])
        array([[0, 0, 1],
               [0, 2, 3],
               [4, 5, 6]], dtype=int32)
        >>> pad_sequences([[1], [2, 3, 4]], maxlen=2, padding="post", truncating="post", value=-1)
        array([[ 1, -1],
               [ 2,  3]], dtype=int32)
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError(f"`sequences` must be iterable: a list of sequences. Received {type(sequences).__name__}.")
    for argument, side in (("padding", padding), ("truncating", truncating)):
        if side not in ("pre", "post"):
            raise ValueError(f'{argument.capitalize()} type "{side}" not understood: pass {argument}="pre" or "post".')
    lengths, step_shape = [], None
    for index, sequence in enumerate(sequences):
        if not hasattr(sequence, "__len__"):
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {sequence!r} at "
                             f"position {index}.")
        lengths.append(len(sequence))
        if step_shape is None and len(sequence):
            step_shape = np.asarray(sequence).shape[1:]
    step_shape = step_shape or ()
    if maxlen is None:
        maxlen = max(lengths, default=0)
    elif not isinstance(maxlen, (int, np.integer)) or maxlen < 0:
        raise ValueError(f"`maxlen` must be a non-negative integer or None, received {maxlen!r}.")
    text_dtype = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not text_dtype:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\n"
                         "You should set `dtype=object` for variable length strings.")
    padded = np.full((len(sequences), maxlen) + step_shape, value, dtype=dtype)
    for index, sequence in enumerate(sequences):
        if not len(sequence) or not maxlen:
            continue
        kept = np.asarray(sequence[-maxlen:] if truncating == "pre" else sequence[:maxlen], dtype=dtype)
        if kept.shape[1:] != step_shape:
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {index} is different from "
                             f"expected shape {step_shape}: every step must have the first sequence's step shape.")
        if padding == "post":
            padded[index, :len(kept)] = kept
        else:
            padded[index, -len(kept):] = kept
    return padded
