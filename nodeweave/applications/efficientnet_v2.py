"""``keras.applications.efficientnet_v2``: the EfficientNetV2 builders (B0 to B3, S, M, L)."""

from layers.applications.efficientnet_v2 import (EfficientNetV2B0, EfficientNetV2B1, EfficientNetV2B2,
                                                 EfficientNetV2B3, EfficientNetV2L, EfficientNetV2M, EfficientNetV2S)

__all__ = ["EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3", "EfficientNetV2L",
           "EfficientNetV2M", "EfficientNetV2S"]
