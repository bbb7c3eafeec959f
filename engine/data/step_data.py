"""StepData: batches as an overridden ``train_step``, ``test_step`` or ``predict_step`` receives them."""

import numpy as np

from engine import tree
from engine.data.data_adapter import TrainingData, check_cardinality


class StepData(TrainingData):
    """``x``, ``y`` and ``sample_weight`` as the user gave them, each array kept
    in its structure (a list, a dict...), cut into batches along axis 0.

    Unlike the ``TrainingData`` the default steps use, nothing is matched to
    the model's inputs or outputs: a model that trains through its own
    ``train_step`` may take data its ``call`` does not (a GAN's real images),
    no targets, or have no ``call`` at all, as in Keras.

    Args:
        x: the inputs, an array or a structure of arrays.
        y: the targets, or None.
        sample_weight: the sample weights, or None.

    Example:
        >>> data = StepData(np.arange(10.0).reshape(5, 2))
        >>> [batch.data.shape for batch in data.batches(2)]
        [(2, 2), (2, 2), (1, 2)]
        >>> StepData([np.ones(3)], np.zeros(3)).data[1].shape
        (3,)
    """

    def __init__(self, x, y=None, sample_weight=None):
        parts = {"x": x, "y": y, "sample_weight": sample_weight}
        parts = {name: tree.map_structure(_as_array, part) for name, part in parts.items() if part is not None}
        sizes = {name: [len(a) for a in tree.flatten(part) if a is not None] for name, part in parts.items()}
        if not sizes.get("x"):
            raise ValueError(f"A training step received no input arrays: x={x!r}. Pass at least one array as x.")
        check_cardinality(sizes)
        self.x, self.y, self.sample_weight = parts["x"], parts.get("y"), parts.get("sample_weight")
        self.size = sizes["x"][0]

    @property
    def data(self):
        """The batch as Keras hands it to a step: ``x`` alone (``(x,)`` when ``x``
        is a list or tuple), ``(x, y)`` or ``(x, y, sample_weight)``."""
        if self.y is None and self.sample_weight is None:
            return (self.x,) if isinstance(self.x, (list, tuple)) else self.x
        return (self.x, self.y) if self.sample_weight is None else (self.x, self.y, self.sample_weight)

    def take(self, indices):
        def pick(part):
            return None if part is None else tree.map_structure(lambda a: None if a is None else a[indices], part)

        return StepData(pick(self.x), pick(self.y), pick(self.sample_weight))


def _as_array(value):
    return None if value is None else np.asarray(value)
