"""``keras.constraints``: projections applied to weights after each update."""

from engine.training.constraints import Constraint, MaxNorm, NonNeg, UnitNorm, deserialize, get, serialize

max_norm, non_neg, unit_norm = MaxNorm, NonNeg, UnitNorm

__all__ = ["Constraint", "MaxNorm", "NonNeg", "UnitNorm", "deserialize", "get", "max_norm", "non_neg", "serialize",
           "unit_norm"]
