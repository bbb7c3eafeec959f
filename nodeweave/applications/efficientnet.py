"""``keras.applications.efficientnet``: the EfficientNetB0 to B7 builders."""

from layers.applications.efficientnet import (EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3,
                                              EfficientNetB4, EfficientNetB5, EfficientNetB6, EfficientNetB7)

__all__ = ["EfficientNetB0", "EfficientNetB1", "EfficientNetB2", "EfficientNetB3", "EfficientNetB4", "EfficientNetB5",
           "EfficientNetB6", "EfficientNetB7"]
