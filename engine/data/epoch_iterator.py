"""How ``fit`` cuts the passes over its data into epochs (Keras 3's EpochIterator)."""

import itertools
import warnings

RAN_OUT = ("Your input ran out of data; interrupting training. Make sure that your dataset or generator can generate "
           "at least `steps_per_epoch * epochs` batches. You may need to use the `.repeat()` function when building "
           "your dataset.")


class EpochIterator:
    """A batch source (see engine.data.data_sources) whose every pass is the next
    epoch of ``data``.

    Without ``steps_per_epoch`` an epoch is one pass over ``data``. With it,
    an epoch is the next ``steps_per_epoch`` batches: a pass carries on into
    the next epoch, and an epoch that reaches the end of a pass stops there
    (with Keras' warning when that is short of ``steps_per_epoch``), so the
    next epoch starts a new pass. Data of unknown length (a generator) is a
    single pass: when it runs out the epoch ends with Keras' warning and the
    iterator is ``exhausted`` (fit then stops; Keras 3 would replay the
    generator's first two batches in later epochs).

    ``close()`` stops the pass in progress (its reading threads); ``fit``
    calls it when it returns or raises.

    Example:
        >>> import numpy as np
        >>> from engine.data.data_adapter import TrainingData
        >>> data = TrainingData([np.arange(6.0)[:, None]], None, [None])
        >>> epochs = EpochIterator(data, steps_per_epoch=2)
        >>> [[len(batch.x[0]) for batch in epochs.batches(2)] for _ in range(3)]
        [[2, 2], [2], [2, 2]]
    """

    def __init__(self, data, steps_per_epoch=None):
        self.data, self.steps_per_epoch = data, steps_per_epoch
        self.size = data.size
        self.exhausted = False
        self._pass = None
        self._taken = 0

    def steps(self, batch_size):
        return self.steps_per_epoch or self.data.steps(batch_size)

    def batches(self, batch_size, shuffle=False, rng=None):
        """The batches of the next epoch."""
        if self.steps_per_epoch is None and self.data.steps(batch_size) is not None:
            self.close()
            self._pass = self.data.batches(batch_size, shuffle, rng)
            return self._pass  # a whole pass: the source's own batches, nothing added per batch
        return self._epoch(batch_size, shuffle, rng)

    def _epoch(self, batch_size, shuffle, rng):
        length = self.data.steps(batch_size)
        wanted = itertools.count() if self.steps_per_epoch is None else range(self.steps_per_epoch)
        for step in wanted:
            if self._pass is None:
                self._pass, self._taken = self.data.batches(batch_size, shuffle, rng), 0
            batch = next(self._pass, None)
            if batch is None:  # only data of unknown length ends unannounced: it is spent
                self.close()
                self.exhausted = True
                warnings.warn(RAN_OUT, stacklevel=2)
                return
            self._taken += 1
            yield batch
            if self._taken == length:
                next(self._pass, None)  # lets the pass finish (a PyDataset's on_epoch_end)
                self._pass = None
                if step + 1 < self.steps_per_epoch:
                    warnings.warn(RAN_OUT, stacklevel=2)
                    return

    def close(self):
        """Stops the pass in progress."""
        if self._pass is not None:
            self._pass.close()
            self._pass = None
