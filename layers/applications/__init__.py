"""Keras' ``keras.applications`` architectures, built with nodeweave's functional API
(without downloaded weights), and the two layers those architectures define for
themselves (ConvNeXt's ``LayerScale``, InceptionResNetV2's ``CustomScaleLayer``)."""

from layers.applications.scale_layers import CustomScaleLayer, LayerScale

__all__ = ["CustomScaleLayer", "LayerScale"]
