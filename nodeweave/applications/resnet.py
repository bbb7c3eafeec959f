"""``keras.applications.resnet``: ResNet50, ResNet101, ResNet152."""

from layers.applications.resnet import ResNet50, ResNet101, ResNet152

__all__ = ["ResNet50", "ResNet101", "ResNet152"]
