"""``keras.models``: the model classes, cloning, and whole-model files."""

from engine import Model, Sequential, clone_model, load_model, model_from_json
from engine.files.saving import save_model

__all__ = ["Model", "Sequential", "clone_model", "load_model", "model_from_json", "save_model"]
