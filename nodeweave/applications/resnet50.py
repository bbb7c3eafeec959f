"""``keras.applications.resnet50``: ResNet50."""

from layers.applications.resnet import ResNet50

__all__ = ["ResNet50"]
