from layers.core.activation import Activation
from layers.core.dense import Dense

__all__ = ["Activation", "Dense"]
