"""``keras.callbacks``: code that runs at fixed points of fit, evaluate and predict."""

from engine.training.callbacks import (CSVLogger, Callback, CallbackList, EarlyStopping, History, LambdaCallback,
                                       LearningRateScheduler, ModelCheckpoint, ReduceLROnPlateau, TerminateOnNaN)

__all__ = ["CSVLogger", "Callback", "CallbackList", "EarlyStopping", "History", "LambdaCallback",
           "LearningRateScheduler", "ModelCheckpoint", "ReduceLROnPlateau", "TerminateOnNaN"]
