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
from engine.network.argument_gradients import ArgumentGradients
from engine.network.bound_arguments import BoundArguments, bind
from engine.autodiff import (
    GradientTape,
    Traced,
    TracingError,
    paused,
    record_op,
    untraced,
)

# The ``training`` flag of the call of a layer without a hand-written backward
# in progress: layers called inside it without an explicit ``training=`` follow
# it, as in Keras (a keras-io TransformerBlock's Dropout trains in
# ``block(x, training=True)`` although its ``call`` takes no ``training``).
_TRAINING = contextvars.ContextVar("nodeweave_call_training", default=None)


def inside_layer_call():
    """Whether some layer's ``call`` is in progress in this context (the call
    of a layer made of layers, a subclassed model, a traced call)."""
    return _TRAINING.get() is not None


def call_training(explicit):
    """``training`` for a layer call: the explicit value, else the enclosing call's (False outside any)."""
    return explicit if explicit is not None else bool(_TRAINING.get())


@contextlib.contextmanager
def layer_call(training):
    """Marks a layer's ``call`` as in progress, with its ``training`` flag."""
    token = _TRAINING.set(bool(training))
    try:
        yield
    finally:
        _TRAINING.reset(token)


class TracedCall:
    """What a traced training call leaves for backward: its tape, the traced
    arguments ``(args, kwargs)`` and outputs, and the losses its layers added
    (``add_loss``), with the gradient backward gives each (``loss_seed``: 1 in
    ``fit``; under a GradientTape, what the user's target makes it)."""

    __slots__ = ("tape", "arguments", "outputs", "added_losses", "activity_loss", "has_losses", "loss_seed")

    def __init__(self, tape, arguments, outputs, added_losses):
        self.tape, self.arguments, self.outputs, self.added_losses = tape, arguments, outputs, added_losses
        # The added losses' value, which the plan adds to the training loss (as activity penalties).
        self.activity_loss = float(sum(untraced(loss) for loss in added_losses))
        self.has_losses = bool(added_losses)
        self.loss_seed = 1.0


def traced_forward(layer, inputs, extra_args, training, kwargs):
    """``layer.forward`` for a layer without a hand-written backward: returns
    (plain outputs, TracedCall). Floating arrays in every argument are traced."""
    with GradientTape(persistent=True) as tape:  # backward may run twice (several tapes record the call)
        args, kwargs = tree.map_structure(lambda x: _watch(tape, x), ((inputs, *extra_args), kwargs))
        layer._clear_added_losses()
        try:
            outputs = layer._call(args[0], training, kwargs, args[1:])
        except TracingError as error:
            if error.context is not None:
                raise
            raise error.with_context(f"layer {layer.name!r} ({type(layer).__name__})") from None
    added = layer._added_loss_values()
    return tree.map_structure(untraced, outputs), TracedCall(tape, (args, kwargs), outputs, added)


def traced_backward(layer, cache, grad_outputs):
    """``layer.backward`` for a traced call: (input gradients, ``{Variable:
    gradient}`` for the layer's trainable weights). The input gradients have the
    structure of the first argument, or are ``ArgumentGradients`` when tensors in
    other arguments take gradients too."""
    trainable = layer.trainable_weights
    flat_arguments = tree.flatten(cache.arguments)
    watched = [x for x in flat_arguments if isinstance(x, Traced)]  # integer arrays were never watched
    targets = [cache.outputs, cache.added_losses]
    seeds = [grad_outputs, [np.asarray(cache.loss_seed, np.asarray(untraced(loss)).dtype) for loss in cache.added_losses]]
    grads_in, grads_w = cache.tape.gradient(targets, [watched, trainable], output_gradients=seeds)
    by_input = iter(grads_in)
    grad_args, grad_kwargs = tree.pack_as(
        cache.arguments, [next(by_input) if isinstance(x, Traced) else None for x in flat_arguments])
    named = bind(layer, grad_args, grad_kwargs)
    first_name = next(iter(named))
    first = named.pop(first_name)
    others = {name: grad for name, grad in named.items() if any(g is not None for g in tree.flatten(grad))}
    grad_inputs = ArgumentGradients({first_name: first, **others}) if others else first
    return grad_inputs, {variable: grad for variable, grad in zip(trainable, grads_w) if grad is not None}


def recorded_call(layer, inputs, extra_args, training, kwargs):
    """A layer with a hand-written backward called while a tape records: one
    step on the tape, computed by ``forward`` and differentiated by ``backward``.

    Every array among the call's arguments is an input of the step (attention's
    ``value`` and ``key``, an RNN's ``initial_state``); ``backward``'s gradients
    are routed to them by argument (``engine.network.bound_arguments``).
    """
    bound = BoundArguments(layer, (inputs, *extra_args), kwargs, _is_array)
    plain_args, plain_kwargs = tree.map_structure(untraced, (bound.args, bound.kwargs))
    with paused():
        outputs, cache = layer.forward(*plain_args, training=training, **plain_kwargs)
    flat_outputs = tree.flatten(outputs)
    # The losses the layers inside added (a functional model's add_loss and activity penalties):
    # one more output of the step, whose gradient backward hands on as the losses' seed.
    has_losses = getattr(cache, "has_losses", False)
    if hasattr(cache, "reusable"):  # a model's: several tapes, or a persistent one, may run backward again
        cache.reusable = True
    losses = [np.asarray(cache.activity_loss, "float32")] if has_losses else []

    def backward(grad_outputs):
        if has_losses:
            cache.loss_seed = float(grad_outputs[-1])
        grad_in, grad_w = layer.backward(cache, tree.pack_as(outputs, grad_outputs[: len(flat_outputs)]))
        return bound.route(layer, grad_in), grad_w

    traced = record_op(backward, bound.tensors, flat_outputs + losses, layer.trainable_weights, name=layer.name)
    if has_losses:
        layer._clear_added_losses()
        layer.add_loss(traced.pop())  # what `layer.losses` lists: differentiable on this tape
    return tree.pack_as(outputs, traced)


def _is_array(value):
    return isinstance(value, (Traced, np.ndarray))


def _watch(tape, value):
    """Floating arrays become traced leaves; integer indices, masks and Python numbers stay constants."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return tape.watch(value)
    return value
