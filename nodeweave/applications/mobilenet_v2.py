"""``keras.applications.mobilenet_v2``: MobileNetV2."""

from layers.applications.mobilenet_v2 import MobileNetV2

__all__ = ["MobileNetV2"]
