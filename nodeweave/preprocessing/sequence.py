"""``keras.preprocessing.sequence``: padding variable-length sequences into one array."""

from engine.utils import pad_sequences

__all__ = ["pad_sequences"]
