"""``keras.applications.nasnet``: NASNetLarge, NASNetMobile."""

from layers.applications.nasnet import NASNetLarge, NASNetMobile

__all__ = ["NASNetLarge", "NASNetMobile"]
