"""``keras.applications.vgg19``: VGG19."""

from layers.applications.vgg import VGG19

__all__ = ["VGG19"]
