"""``keras.saving``: whole models and weights to files (``.nw`` and Keras 3's ``.keras``),
and the registry that lets custom classes load by name."""

from engine.files.registry import custom_object_scope, register_serializable
from engine.files.saving import load_model, load_weights, save_model, save_weights

register_keras_serializable = register_serializable
CustomObjectScope = custom_object_scope

__all__ = ["CustomObjectScope", "custom_object_scope", "load_model", "load_weights", "register_keras_serializable",
           "save_model", "save_weights"]
