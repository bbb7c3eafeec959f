"""How layers train without a hand-written backward, and how they compose.

Two sources of gradients share one tape (``engine.autodiff``):

- a layer that defines ``backward`` (Dense, Conv2D, LSTM, a functional model)
  is the fast path: called on traced values, it runs ``forward`` on the plain
  arrays and is recorded as ONE step whose gradient is its own ``backward``;
- any other layer (a user's ``call`` in plain NumPy, a layer made of layers, a
  subclassed model) is traced: its ``call`` runs unchanged on traced arrays and
  its gradient is derived, built-in layers inside it staying single steps.

``traced_forward``/``traced_backward`` are ``Layer.forward``/``Layer.backward``
for the second kind, so the execution plan trains both kinds the same way.
"""

import contextlib
import contextvars

import numpy as np

from engine import tree
from engine.autodiff import GradientTape, Traced, TracingError, paused, record_op, untraced

# The ``training`` flag of the traced call in progress: layers called inside it
# without an explicit ``training=`` follow it, as in Keras.
_TRAINING = contextvars.ContextVar("nodeweave_call_training", default=None)


def inside_traced_call():
    """Whether a traced training call is in progress in this context."""
    return _TRAINING.get() is not None


def call_training(explicit):
    """``training`` for a layer called inside a traced call: the explicit value, else the enclosing call's."""
    return explicit if explicit is not None else bool(_TRAINING.get())


@contextlib.contextmanager
def _training(value):
    token = _TRAINING.set(value)
    try:
        yield
    finally:
        _TRAINING.reset(token)


class TracedCall:
    """What a traced training call leaves for backward: its tape, the traced
    inputs and outputs, and the losses its layers added (``add_loss``)."""

    __slots__ = ("tape", "inputs", "outputs", "added_losses", "activity_loss")

    def __init__(self, tape, inputs, outputs, added_losses):
        self.tape, self.inputs, self.outputs, self.added_losses = tape, inputs, outputs, added_losses
        # The added losses' value, which the plan adds to the training loss (as activity penalties).
        self.activity_loss = float(sum(untraced(loss) for loss in added_losses))


def traced_forward(layer, inputs, extra_args, training, kwargs):
    """``layer.forward`` for a layer without a hand-written backward: returns
    (plain outputs, TracedCall)."""
    with GradientTape() as tape, _training(training):
        traced = tree.map_structure(lambda x: _watch(tape, x), inputs)
        layer._clear_added_losses()
        try:
            outputs = layer._call(traced, training, kwargs, extra_args)
        except TracingError as error:
            if error.context is not None:
                raise
            raise error.with_context(f"layer {layer.name!r} ({type(layer).__name__})") from None
    added = layer._added_loss_values()
    return tree.map_structure(untraced, outputs), TracedCall(tape, traced, outputs, added)


def traced_backward(layer, cache, grad_outputs):
    """``layer.backward`` for a traced call: (input gradients in the structure of
    the inputs, ``{Variable: gradient}`` for the layer's trainable weights)."""
    trainable = layer.trainable_weights
    flat_inputs = tree.flatten(cache.inputs)
    watched = [x for x in flat_inputs if isinstance(x, Traced)]  # integer inputs were never watched
    targets = [cache.outputs, cache.added_losses]
    seeds = [grad_outputs, [np.ones((), np.asarray(untraced(loss)).dtype) for loss in cache.added_losses]]
    grads_in, grads_w = cache.tape.gradient(targets, [watched, trainable], output_gradients=seeds)
    by_input = iter(grads_in)
    grad_inputs = [next(by_input) if isinstance(x, Traced) else None for x in flat_inputs]
    return (tree.pack_as(cache.inputs, grad_inputs),
            {variable: grad for variable, grad in zip(trainable, grads_w) if grad is not None})


def recorded_call(layer, inputs, extra_args, training, kwargs):
    """A layer with a hand-written backward called while a tape records: one
    step on the tape, computed by ``forward`` and differentiated by ``backward``.

    Every array among the call's arguments is an input of the step (attention's
    ``value`` and ``key``, an RNN's ``initial_state``); ``backward`` returns
    gradients for the tensors of the first argument, or for all of them.
    """
    arguments = [inputs, list(extra_args), kwargs]
    leaves = tree.flatten(arguments)
    tensors = [i for i, leaf in enumerate(leaves) if isinstance(leaf, (Traced, np.ndarray))]
    in_first = len([leaf for leaf in tree.flatten(inputs) if isinstance(leaf, (Traced, np.ndarray))])
    plain_inputs, plain_extra, plain_kwargs = tree.pack_as(arguments, [untraced(leaf) for leaf in leaves])
    with paused():
        outputs, cache = layer.forward(plain_inputs, *plain_extra, training=training, **plain_kwargs)
    flat_outputs = tree.flatten(outputs)

    def backward(grad_outputs):
        grad_in, grad_w = layer.backward(cache, tree.pack_as(outputs, grad_outputs))
        return route_input_gradients(layer, grad_in, in_first, len(tensors)), grad_w

    traced = record_op(backward, [leaves[i] for i in tensors], flat_outputs, layer.trainable_weights, name=layer.name)
    return tree.pack_as(outputs, traced)


def route_input_gradients(layer, grad_in, in_first, in_all):
    """``backward``'s input gradients as one per tensor argument of the call
    (``in_all`` of them, the ``in_first`` of the first argument leading), None
    for those it gave none: it returns either the first argument's or all."""
    grads = tree.flatten(grad_in)
    if len(grads) == in_first:
        return grads + [None] * (in_all - in_first)
    if len(grads) == in_all:
        return grads
    raise ValueError(
        f"backward() of layer {layer.name!r} ({type(layer).__name__}) returned {len(grads)} input gradients; "
        f"expected {in_first} (one per tensor of its first argument) or {in_all} (one per tensor argument of "
        "the call)."
    )


def _watch(tape, value):
    """Floating arrays become traced leaves; integer indices and flags stay constants."""
    if isinstance(value, Traced) or np.asarray(value).dtype.kind != "f":
        return value
    return tape.watch(np.asarray(value))
