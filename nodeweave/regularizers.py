"""``keras.regularizers``: weight penalties added to the loss."""

from engine.training.regularizers import L1, L1L2, L2, Regularizer, deserialize, get, l1, l1_l2, l2, serialize

__all__ = ["L1", "L1L2", "L2", "Regularizer", "deserialize", "get", "l1", "l1_l2", "l2", "serialize"]
