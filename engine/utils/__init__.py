"""Utilities: the global random state and session, and the data helpers Keras
examples call (``to_categorical``, ``normalize``, ``pad_sequences``, ``split_dataset``,
``timeseries_dataset_from_array``, ``PyDataset``, also ``engine.PyDataset``)."""

from engine.data.py_dataset import PyDataset
from engine.utils.dataset import split_dataset
from engine.utils.numerical import normalize, to_categorical
from engine.utils.random_state import random_generator, set_random_seed
from engine.utils.sequences import pad_sequences
from engine.utils.timeseries import timeseries_dataset_from_array


def clear_session() -> None:
    """Resets automatic layer names (``dense``, ``dense_1``, ...) as Keras does."""
    from engine.network.naming import reset_names

    reset_names()


__all__ = ["set_random_seed", "random_generator", "clear_session", "to_categorical", "normalize", "pad_sequences",
           "split_dataset", "timeseries_dataset_from_array", "PyDataset"]
