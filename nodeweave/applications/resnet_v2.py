"""``keras.applications.resnet_v2``: ResNet50V2, ResNet101V2, ResNet152V2."""

from layers.applications.resnet import ResNet50V2, ResNet101V2, ResNet152V2

__all__ = ["ResNet50V2", "ResNet101V2", "ResNet152V2"]
