"""``keras.optimizers``: optimizers and (``optimizers.schedules``) learning-rate schedules."""

from engine.training.optimizers import (SGD, Adadelta, Adafactor, Adagrad, Adam, AdamW, Adamax, Ftrl, Lamb, Lion, Nadam,
                                        Optimizer, RMSprop, get, serialize)
from nodeweave.optimizers import schedules

__all__ = ["SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Lamb", "Lion", "Nadam",
           "Optimizer", "RMSprop", "get", "schedules", "serialize"]
