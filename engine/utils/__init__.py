"""Utilities: the global random state and session, and the data helpers Keras
examples call (``to_categorical``, ``normalize``, ``pad_sequences``, ``split_dataset``,
``timeseries_dataset_from_array``, ``PyDataset``, also ``engine.PyDataset``)."""

import numpy as np

from engine.py_dataset import PyDataset
from engine.utils.dataset import split_dataset
from engine.utils.numerical import normalize, to_categorical
from engine.utils.sequences import pad_sequences
from engine.utils.timeseries import timeseries_dataset_from_array

_generator = np.random.default_rng()


def set_random_seed(seed: int) -> None:
    """Seeds every random draw nodeweave makes (initializers, dropout, ...).

    Example:
        >>> from engine.utils import set_random_seed
        >>> set_random_seed(1337)
    """
    global _generator
    _generator = np.random.default_rng(seed)


def random_generator(seed=None) -> np.random.Generator:
    """Returns a generator for ``seed``, or the global one when ``seed`` is None."""
    if seed is None:
        return _generator
    return np.random.default_rng(seed)


def clear_session() -> None:
    """Resets automatic layer names (``dense``, ``dense_1``, ...) as Keras does."""
    from engine.naming import reset_names

    reset_names()


__all__ = ["set_random_seed", "random_generator", "clear_session", "to_categorical", "normalize", "pad_sequences",
           "split_dataset", "timeseries_dataset_from_array", "PyDataset"]
