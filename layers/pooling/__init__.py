"""Pooling layers: windowed max (a running max, one spatial axis at a time) and average (sharing the
convolutions' im2col), and global pooling."""

from layers.pooling.average_pooling import AveragePooling1D, AveragePooling2D
from layers.pooling.global_pooling import (GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalMaxPooling1D,
                                           GlobalMaxPooling2D)
from layers.pooling.max_pooling import MaxPooling1D, MaxPooling2D

__all__ = [
    "AveragePooling1D", "AveragePooling2D", "GlobalAveragePooling1D", "GlobalAveragePooling2D",
    "GlobalMaxPooling1D", "GlobalMaxPooling2D", "MaxPooling1D", "MaxPooling2D",
]
