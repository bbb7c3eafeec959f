"""Layers that merge a list of tensors into one."""

from layers.merging.concatenate import Concatenate, concatenate
from layers.merging.dot import Dot, dot
from layers.merging.elementwise import (Add, Average, Maximum, Minimum, Multiply, Subtract, add, average,
                                        maximum, minimum, multiply, subtract)

__all__ = [
    "Add", "Average", "Concatenate", "Dot", "Maximum", "Minimum", "Multiply", "Subtract",
    "add", "average", "concatenate", "dot", "maximum", "minimum", "multiply", "subtract",
]
