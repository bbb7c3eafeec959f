"""``keras.applications.mobilenet``: MobileNet."""

from layers.applications.mobilenet import MobileNet

__all__ = ["MobileNet"]
