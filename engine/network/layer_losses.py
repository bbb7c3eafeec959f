"""The losses a layer adds: ``add_loss`` from its call, activity and weight penalties, and ``losses``.

``AddedLosses`` is a part of ``engine.network.layer.Layer``, which inherits it. A
layer keeps the losses of its last call in ``_added_losses``; the functional
model clears them before a run and the trainer reads them after it.
"""

import weakref

import numpy as np

from engine import tree
from engine.autodiff import Traced, record_op, recording, untraced

# The layers holding losses from add_loss, so that calls of models without any skip the walk.
_LOSS_HOLDERS = weakref.WeakSet()


class AddedLosses:
    """The losses part of ``Layer``: ``add_loss``, ``losses`` and the penalties added to them."""

    @property
    def losses(self):
        """The losses this layer and its sub-layers added in their last call
        (``add_loss``), then the penalties of the trainable weights'
        regularizers (Keras 3). Floats; inside a ``GradientTape`` they are
        traced values instead, so ``tape.gradient`` differentiates them."""
        added = self._added_loss_values()
        if recording():
            return list(added) + self._weight_penalties()
        return [float(untraced(loss)) for loss in added] + self._weight_penalties()

    def _weight_penalties(self):
        """The regularizer penalty of each trainable weight that has one;
        recorded with the regularizer's gradient while a tape records."""
        penalties = []
        for v in self.trainable_weights:
            if v.regularizer is None:
                continue
            penalty = v.regularizer(v.value)
            if recording():
                (penalty,) = record_op(lambda g, v=v: ([], {v: v.regularizer.gradient(v.value) * g[0]}),
                                       [], [np.asarray(penalty, v.dtype)], [v], name=f"the penalty of {v.path}")
            penalties.append(penalty)
        return penalties

    def add_loss(self, loss):
        """Adds a scalar to the training loss, from inside ``call`` (a penalty on
        activations, an auxiliary objective). Written with NumPy on the call's
        values, it is differentiated with the rest of the call; ``losses`` lists
        it until the layer is called again.

        Args:
            loss: a scalar (float or 0-d array) computed from the call's values.

        Example:
            >>> import numpy as np
            >>> from engine.network.layer import Layer
            >>> class ActivityPenalty(Layer):
            ...     def call(self, inputs):
            ...         self.add_loss(0.01 * np.sum(inputs ** 2))
            ...         return inputs
            >>> layer = ActivityPenalty()
            >>> _ = layer(np.ones((2, 3), "float32"))
            >>> [round(loss, 4) for loss in layer.losses]
            [0.06]
        """
        self._tracked("_added_losses").append(loss)
        _LOSS_HOLDERS.add(self)

    def _added_loss_values(self):
        if not _LOSS_HOLDERS:
            return []
        return [loss for module in [self, *self._submodules()] for loss in module.__dict__.get("_added_losses", ())]

    def _clear_added_losses(self):
        if not _LOSS_HOLDERS:  # no layer holds added losses: nothing to walk (the inference fast path)
            return
        for module in [self, *self._submodules()]:
            if module.__dict__.pop("_added_losses", None) is not None:
                _LOSS_HOLDERS.discard(module)

    def _penalize_activity(self, outputs):
        """Adds the activity regularizer's penalty on ``outputs`` (divided by the
        batch size) to ``losses``, as Keras does on every call."""
        regularizer = self.activity_regularizer
        if regularizer is not None:
            for output in tree.flatten(outputs):
                value = untraced(output)
                penalty = np.asarray(regularizer.activity_penalty(value), value.dtype)
                if isinstance(output, Traced):  # inside a traced call: differentiated by the regularizer's gradient
                    (penalty,) = record_op(lambda g, v=value: ([regularizer.activity_gradient(v) * g[0]], {}),
                                           [output], [penalty], name=f"activity regularizer of {self.name!r}")
                self.add_loss(penalty)
        return outputs
