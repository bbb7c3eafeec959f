"""``keras.utils``: data helpers, seeding, images as arrays, and drawing a model."""

from engine.files.registry import custom_object_scope, register_serializable
from engine.utils import (PyDataset, clear_session, normalize, pad_sequences, set_random_seed, split_dataset,
                          timeseries_dataset_from_array, to_categorical)
from engine.utils.backend import is_keras_tensor
from engine.utils.image import array_to_img, img_to_array, load_img, save_img
from graph import model_to_dot, plot_model

Sequence = PyDataset
register_keras_serializable = register_serializable

__all__ = ["PyDataset", "Sequence", "array_to_img", "clear_session", "custom_object_scope", "img_to_array",
           "is_keras_tensor", "load_img", "model_to_dot", "normalize", "pad_sequences", "plot_model",
           "register_keras_serializable", "save_img", "set_random_seed", "split_dataset",
           "timeseries_dataset_from_array", "to_categorical"]
