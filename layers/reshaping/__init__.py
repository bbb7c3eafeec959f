"""Layers that change the shape of a tensor without weights."""

from layers.reshaping.cropping import Cropping1D, Cropping2D
from layers.reshaping.flatten import Flatten
from layers.reshaping.permute import Permute
from layers.reshaping.repeat_vector import RepeatVector
from layers.reshaping.reshape import Reshape
from layers.reshaping.up_sampling import UpSampling1D, UpSampling2D
from layers.reshaping.zero_padding import ZeroPadding1D, ZeroPadding2D

__all__ = [
    "Cropping1D", "Cropping2D", "Flatten", "Permute", "RepeatVector", "Reshape", "UpSampling1D",
    "UpSampling2D", "ZeroPadding1D", "ZeroPadding2D",
]
