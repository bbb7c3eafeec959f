"""nodeweave's layer catalog; every layer has a forward and a backward pass."""

from layers import activations
from layers.core import Activation, Dense

__all__ = ["Activation", "Dense", "activations"]
