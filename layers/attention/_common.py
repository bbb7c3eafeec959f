"""What the attention layers share: the dropout argument, the dropout mask on
the attention probabilities, and the causal mask."""

import numbers

import numpy as np


def check_dropout(dropout):
    """Returns ``dropout`` if it is a fraction in [0, 1), else raises."""
    if not isinstance(dropout, numbers.Real) or isinstance(dropout, bool) or not 0 <= dropout < 1:
        raise ValueError(
            "Received an invalid value for argument `dropout`, expected a float in [0, 1). "
            f"Received: dropout={dropout!r}"
        )
    return dropout


def dropout_mask(seed_generator, rate, shape, dtype):
    """Inverted dropout: 0 with probability ``rate``, else ``1 / (1 - rate)``."""
    keep = 1.0 - rate
    return (seed_generator.generator.random(shape) < keep).astype(dtype) / dtype.type(keep)


def causal_mask(query_length, key_length):
    """``(query_length, key_length)`` booleans: position i sees the positions j <= i."""
    return np.tri(query_length, key_length, dtype=bool)


def shapes_agree(shape_a, shape_b):
    """Whether two shapes have the same rank and agree wherever both sizes are known."""
    return len(shape_a) == len(shape_b) and all(a is None or b is None or a == b for a, b in zip(shape_a, shape_b))
