"""``keras.optimizers.schedules``: learning rates that change with the step."""

from engine.training.optimizers.schedules import (CosineDecay, ExponentialDecay, LearningRateSchedule,
                                                  PiecewiseConstantDecay, deserialize)

__all__ = ["CosineDecay", "ExponentialDecay", "LearningRateSchedule", "PiecewiseConstantDecay", "deserialize"]
