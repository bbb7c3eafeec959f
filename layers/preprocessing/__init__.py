"""Preprocessing layers: rescale, normalize, crop and resize inputs inside the model."""

from layers.preprocessing.center_crop import CenterCrop
from layers.preprocessing.normalization import Normalization
from layers.preprocessing.rescaling import Rescaling
from layers.preprocessing.resizing import Resizing

__all__ = ["CenterCrop", "Normalization", "Rescaling", "Resizing"]
