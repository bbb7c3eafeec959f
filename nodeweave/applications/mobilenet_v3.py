"""``keras.applications.mobilenet_v3``: MobileNetV3Large, MobileNetV3Small."""

from layers.applications.mobilenet_v3 import MobileNetV3Large, MobileNetV3Small

__all__ = ["MobileNetV3Large", "MobileNetV3Small"]
