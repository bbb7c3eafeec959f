"""Automatic differentiation of plain NumPy code.

``GradientTape`` records; the arrays it hands out are ``Traced`` values, which
NumPy dispatches to us through its override protocols (``__array_ufunc__``,
``__array_function__``); ``rules.py`` holds every derivative; ``record_op`` puts
an operation with a hand-written backward on the same tape as one step.
"""

from engine.autodiff.rules import TracingError
from engine.autodiff.tape import GradientTape, paused, record_op, recording
from engine.autodiff.traced import Traced, untraced

__all__ = ["GradientTape", "Traced", "TracingError", "paused", "record_op", "recording", "untraced"]
