"""PyDataset: a dataset of batches written in Python, as Keras 3's ``keras.utils.PyDataset``."""

import itertools


class PyDataset:
    """Base class for a dataset that makes whole batches in Python code.

    A subclass defines ``__len__`` (the number of batches) and
    ``__getitem__(index)``, which returns batch ``index`` as ``(x, y)`` or
    ``(x, y, sample_weight)`` (or ``(x,)``), with several inputs or outputs
    as a list or dict inside it. ``fit(dataset)`` reads it (give neither
    ``y``, ``sample_weight`` nor ``batch_size`` then): each epoch takes every
    index once, in order, or in a random order with ``shuffle=True``, and
    calls ``on_epoch_end()`` once all were taken. A dataset without an end
    defines ``num_batches`` returning None instead of ``__len__``; ``fit``
    then needs ``steps_per_epoch``.

    Args:
        workers: how many calls of ``__getitem__`` run at once (in threads,
            or processes with ``use_multiprocessing``). With one, a single
            background thread makes the batches while the model trains.
        use_multiprocessing: whether the workers are processes, for Python
            code that holds the GIL (threads suit I/O and NumPy). Each pass
            over the data starts its pool afresh, with a copy of the dataset
            as ``on_epoch_end`` left it (so it must be picklable where Python
            starts processes by spawning them rather than forking).
        max_queue_size: how many batches are made ahead of training at most.

    Example:
        >>> import math
        >>> import numpy as np
        >>> class Squares(PyDataset):
        ...     def __init__(self, x, batch_size, **kwargs):
        ...         super().__init__(**kwargs)
        ...         self.x, self.batch_size = x, batch_size
        ...     def __len__(self):
        ...         return math.ceil(len(self.x) / self.batch_size)
        ...     def __getitem__(self, index):
        ...         rows = self.x[index * self.batch_size:(index + 1) * self.batch_size]
        ...         return rows, rows ** 2
        >>> dataset = Squares(np.linspace(0, 1, 10)[:, None], batch_size=4, workers=2)
        >>> len(dataset), dataset[2][1].shape
        (3, (2, 1))
    """

    # Keras' defaults, also for a subclass that did not call super().__init__() (fit warns then).
    workers = 1
    use_multiprocessing = False
    max_queue_size = 10

    def __init__(self, workers: int = 1, use_multiprocessing: bool = False, max_queue_size: int = 10):
        self.workers = workers
        self.use_multiprocessing = use_multiprocessing
        self.max_queue_size = max_queue_size

    def __getitem__(self, index):
        """Batch ``index``: ``(x, y)``, ``(x, y, sample_weight)`` or ``(x,)``."""
        raise NotImplementedError(
            f"{type(self).__name__} must define __getitem__(self, index), returning batch `index` as (x, y) or "
            "(x, y, sample_weight)."
        )

    @property
    def num_batches(self):
        """The number of batches: ``len(self)``, or None for a dataset without an end."""
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError(
            f"{type(self).__name__} must define __len__ (the number of batches), or the property num_batches "
            "(None for a dataset without an end)."
        )

    def __iter__(self):
        """The batches in index order (``fit`` does not use this: it reads ``__getitem__``)."""
        count = self.num_batches
        for index in itertools.count() if count is None else range(count):
            yield self[index]

    def on_epoch_begin(self):
        """Called before each epoch takes its first batch.

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> class Counted(PyDataset):
            ...     epochs = 0
            ...     def __len__(self):
            ...         return 2
            ...     def __getitem__(self, index):
            ...         return np.ones((4, 3)), np.zeros((4, 1))
            ...     def on_epoch_begin(self):
            ...         self.epochs += 1
            >>> x = Input(shape=(3,))
            >>> model = Model(x, Dense(1)(x))
            >>> model.compile(optimizer="sgd", loss="mse")
            >>> dataset = Counted()
            >>> _ = model.fit(dataset, epochs=3, verbose=0)
            >>> dataset.epochs
            3
        """

    def on_epoch_end(self):
        """Called once an epoch has taken every batch, e.g. to reshuffle the samples.

        Example:
            >>> import numpy as np
            >>> class Reshuffled(PyDataset):
            ...     def __init__(self, x, **kwargs):
            ...         super().__init__(**kwargs)
            ...         self.x = x
            ...     def __len__(self):
            ...         return 1
            ...     def __getitem__(self, index):
            ...         return self.x, self.x
            ...     def on_epoch_end(self):
            ...         self.x = np.random.default_rng(0).permutation(self.x)
            >>> dataset = Reshuffled(np.arange(4.0)[:, None])
            >>> dataset.on_epoch_end()
            >>> sorted(dataset[0][0].ravel().tolist())
            [0.0, 1.0, 2.0, 3.0]
        """
