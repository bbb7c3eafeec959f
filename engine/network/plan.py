"""The execution plan: a functional graph mapped once into a flat list of steps.

Mapping walks back from the outputs with an explicit stack (no recursion, so a
chain of 100,000 layers maps like a chain of ten), in O(nodes + edges). Every
tensor gets a slot in a flat value list; every step knows which slots it reads,
which it writes, and which it is the last reader of, so eager execution frees
each intermediate array as soon as its last consumer has run. Inference keeps
its values in a local list, never on the layers, so one model can serve many
threads. Training forward keeps each step's cache on a tape; backward walks the
plan in reverse and sums gradients where a tensor fans out and across the calls
of a shared layer.
"""

import functools
import inspect

import numpy as np

from engine import tree
from engine.network.keras_tensor import KerasTensor, not_from_a_layer_error
from engine.network.call_errors import raise_in_call_context
from engine.network.argument_gradients import first_argument_name_of
from engine.network.bound_arguments import one_tensor_call
from engine.network.call_keywords import call_parameters
from engine.network.layer_calls import _accepts_training
from engine.network.layer_tracing import TracedCall

# A plan's repr shows its first and last steps past this many.
_REPR_STEPS = 20


class DisconnectedOutputError(ValueError):
    """An output of the plan does not depend on its inputs only; ``output`` is that output tensor."""

    def __init__(self, output, message):
        super().__init__(message)
        self.output = output


class Step:
    """One Node of the plan: its layer, the slots it reads and writes, and the
    slots it is the last reader of. The call's shape is the Node's
    ``bound_arguments``, read here, never re-derived. Slots are kept in tuples
    of ints, which the garbage collector does not track (a deep plan's steps
    would otherwise add five lists per layer to every full collection)."""

    __slots__ = ("node", "layer", "arguments", "in_slots", "out_slots", "free_slots", "passes_training",
                 "sets_call_context", "passes_mask", "first_slots", "first_single", "argument_masks",
                 "skips_input_gradient")

    def __init__(self, node, in_slots, out_slots):
        self.node = node
        self.layer = layer = node.outbound_layer
        self.in_slots = in_slots = tuple(in_slots)
        self.out_slots = tuple(out_slots)
        self.free_slots = ()
        # A layer without a hand-written backward may call layers that follow its ``training`` (Layer._call).
        self.sets_call_context = not layer._has_backward()
        if node.single:  # a call on one tensor: all but the slots is the same for every such call of the class
            (self.arguments, self.passes_training, self.passes_mask, self.skips_input_gradient,
             masks) = _one_tensor_step(type(layer))
            self.first_slots, self.first_single = in_slots, True
            self.argument_masks = tuple((name, in_slots, True) for name in masks) if masks else ()
            return
        self.arguments = arguments = node.call_shape
        self.passes_training, self.passes_mask, self.skips_input_gradient = _step_traits(type(layer))
        first, self.first_single = arguments.first_tensors()
        self.first_slots = tuple(in_slots[i] for i in first)
        self.argument_masks = tuple((name, tuple(in_slots[i] for i in indices), single)
                                    for name, indices, single in arguments.argument_masks(type(layer)))

    def __repr__(self):
        """``dense[1]: (x[0][0]) -> (dense[1][0])``: the call, the tensors it reads and those it makes."""
        reads = ", ".join(_tensor_name(t) for t in self.node.input_tensors)
        makes = ", ".join(_tensor_name(t) for t in self.node.output_tensors)
        node_index = self.node.output_tensors[0]._keras_history.node_index
        return f"{self.layer.name}[{node_index}]: ({reads}) -> ({makes})"

    def input_masks(self, masks, kwargs):
        """Returns (the mask of the first argument's tensors, the mask
        arguments ``call`` gets): ``mask=`` when it takes one and, as in
        Keras, ``<argument>_mask=`` for each argument with a parameter of that
        name (MultiHeadAttention's ``query_mask``, ``value_mask``,
        ``key_mask``). A mask given in the call wins."""
        mask = kwargs.get("mask")
        mask_kwargs = {}
        if mask is None:
            mask = self._masks_of(masks, self.first_slots, self.first_single)
            if mask is not None and self.passes_mask:
                mask_kwargs["mask"] = mask
        for name, slots, single in self.argument_masks:
            if kwargs.get(name) is None:
                value = self._masks_of(masks, slots, single)
                if value is not None:
                    mask_kwargs[name] = value
        return mask, mask_kwargs

    @staticmethod
    def _masks_of(masks, slots, single):
        """The masks of the tensors in ``slots`` (one, a list, or None when they carry none)."""
        found = [masks[s] for s in slots]
        if all(m is None for m in found):
            return None
        return found[0] if single else found

    def store_masks(self, masks, inputs, mask):
        """Writes the masks of the step's outputs (``layer.compute_mask``)."""
        computed = self.layer.compute_mask(inputs, mask)
        if isinstance(computed, (list, tuple, dict)):
            computed = tree.flatten(computed)
        else:
            computed = [computed] * len(self.out_slots)
        for slot, out_mask in zip(self.out_slots, computed):
            masks[slot] = out_mask


class ExecutionPlan:
    """The flat plan of the graph between ``inputs`` and ``outputs`` (flat lists of KerasTensors)."""

    def __init__(self, inputs, outputs):
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        for tensor in self.inputs + self.outputs:
            if not isinstance(tensor, KerasTensor):
                raise TypeError(
                    "All inputs and outputs of a functional Model must be KerasTensors (from Input() "
                    f"or from calling a layer on one), received {type(tensor).__name__}: {tensor!r}."
                )
        for index, tensor in enumerate(self.inputs):
            if tensor._keras_history is None or tensor._keras_history.layer is None:
                raise not_from_a_layer_error(tensor, f"Input {index} of the model")
        self._alias = {}
        self._fed_by_calls = None
        nodes = self._order_nodes()
        self.slot_of = slot_of = {id(t): i for i, t in enumerate(self.inputs)}
        self.tensors = tensors = list(self.inputs)
        self.steps = steps = []
        alias, resolve = self._alias, self._resolve
        for node in nodes:
            in_slots = [slot_of[id(resolve(t) if alias else t)] for t in node.input_tensors]
            if node._output_list is None:  # one output
                out_slots = (len(tensors),)
                slot_of[id(node.outputs)] = len(tensors)
                tensors.append(node.outputs)
            else:
                out_slots = []
                for tensor in node.output_tensors:
                    slot_of[id(tensor)] = len(tensors)
                    out_slots.append(len(tensors))
                    tensors.append(tensor)
            steps.append(Step(node, in_slots, out_slots))
        self.input_slots = tuple(range(len(self.inputs)))
        self.output_slots = tuple(self.slot_of[id(self._resolve(t))] for t in self.outputs)
        self._plan_frees()
        self.layers = self._unique_layers()
        # Masks exist only where some layer makes one (Embedding(mask_zero=True), ...) or a call is given one.
        self.uses_masks = any(s.layer._may_make_masks() or s.node.call_kwargs.get("mask") is not None for s in self.steps)

    def __repr__(self):
        """The plan's inputs and outputs, then its steps one per line (the first
        and last few of a big plan)."""
        head = (f"ExecutionPlan of {len(self.steps)} steps, inputs ({', '.join(map(_tensor_name, self.inputs))}) -> "
                f"outputs ({', '.join(map(_tensor_name, self.outputs))})")
        steps = [repr(step) for step in self.steps]
        if len(steps) > _REPR_STEPS:
            shown = _REPR_STEPS // 2
            steps = steps[:shown] + [f"... {len(steps) - 2 * shown} more steps ..."] + steps[-shown:]
        return "\n  ".join([head] + steps)

    # --------------------------------------------------------------- mapping
    def _resolve(self, tensor):
        while id(tensor) in self._alias:
            tensor = self._alias[id(tensor)]
        return tensor

    def _producer(self, tensor, walk):
        """The Node that makes ``tensor``, or None when it is a model input."""
        while True:
            if self._alias:
                tensor = self._resolve(tensor)
            if id(tensor) in walk.input_ids:
                return None
            layer = tensor._layer  # the history's layer, read from its slot; None when it has none
            if layer is None:
                raise not_from_a_layer_error(tensor, f"A tensor that output {walk.output.name!r} depends on")
            node = layer._inbound_nodes[tensor._node_index]
            if not node.is_input:
                return node
            outer = self._outer_tensor(tensor)
            if outer is None:
                self._raise_disconnected(tensor, walk)
            self._alias[id(tensor)] = outer

    def _outer_tensor(self, tensor):
        """For an input of a nested model, the tensor the model was called on,
        found by walking forward from this plan's inputs (``_nested_calls``);
        None when no call of that model is reached."""
        if self._fed_by_calls is None:
            self._fed_by_calls = _nested_calls(self.inputs)
        model, calls = self._fed_by_calls.get(id(tensor), (None, []))
        fed = list({id(fed): fed for _, fed in calls}.values())
        if len(fed) > 1:
            described = ", ".join(f"{model.name}[{model._inbound_nodes.index(node)}] on {given.name!r}"
                                  for node, given in calls)
            raise ValueError(
                f"Input {tensor.name!r} of nested model {model.name!r} is reached from the model inputs "
                f"{[t.name for t in self.inputs]} through {len(calls)} calls of {model.name!r} ({described}), so "
                "a tensor made inside it could come from either. Build the output from the outputs of one call, "
                f"or from inputs that reach only one call of {model.name!r}.")
        return fed[0] if fed else None

    def _raise_disconnected(self, tensor, walk):
        """Raises for an input ``tensor`` that is not a model input, naming the
        layers through which the output being walked depends on it: the nodes
        the walk is inside of, outermost (the output's) first."""
        output = walk.output
        found = f"input {tensor.name!r} (layer {tensor._keras_history.layer.name!r})"
        if walk.visiting:
            path = [tensor._keras_history.layer] + [node.outbound_layer for node in reversed(walk.visiting.values())]
            found = f"it depends on {found} through {' -> '.join(layer.name for layer in path)}, and that input is not"
        else:
            found = f"it is {found} itself, which is not"
        raise DisconnectedOutputError(output,
            f"Output tensor {output.name!r} (from layer {output._keras_history.layer.name!r}) is not "
            f"reachable from the model inputs {[t.name for t in self.inputs]}: {found} one of them. "
            f"Add {tensor.name!r} to the model's inputs, or build the output from the given inputs."
        )

    def _order_nodes(self):
        """Topological order of the Nodes between inputs and outputs (iterative DFS)."""
        walk = _Walk({id(t) for t in self.inputs})
        done, visiting, order, producer = walk.done, walk.visiting, walk.order, self._producer
        for output in self.outputs:
            walk.output = output
            node = producer(output, walk)
            stack = [] if node is None or id(node) in done else [node]
            while stack:  # a node on top is entered, or left when it was entered (its parents are done)
                node = stack[-1]
                key = id(node)
                if key in visiting:
                    stack.pop()
                    del visiting[key]
                    done.add(key)
                    order.append(node)
                    continue
                if key in done:  # reached twice before it was entered
                    stack.pop()
                    continue
                visiting[key] = node
                for tensor in reversed(node.input_tensors):
                    parent = producer(tensor, walk)
                    if parent is not None and id(parent) not in done:
                        if id(parent) in visiting:
                            raise ValueError(f"The graph has a cycle through layer {parent.outbound_layer.name!r}.")
                        stack.append(parent)
        return order

    def _plan_frees(self):
        last_reader = {}
        for index, step in enumerate(self.steps):
            for slot in step.in_slots:
                last_reader[slot] = index
            for slot in step.out_slots:
                last_reader.setdefault(slot, index)  # unread outputs die at once
        keep = set(self.output_slots)
        frees = {}
        for slot, index in last_reader.items():
            if slot not in keep:
                frees.setdefault(index, []).append(slot)
        for index, slots in frees.items():
            self.steps[index].free_slots = tuple(slots)

    def _unique_layers(self):
        layers, seen = [], set()
        for tensor in self.inputs:
            layer = tensor._keras_history.layer
            if id(layer) not in seen:
                seen.add(id(layer))
                layers.append(layer)
        for step in self.steps:
            if id(step.layer) not in seen:
                seen.add(id(step.layer))
                layers.append(step.layer)
        return layers

    # ------------------------------------------------------------- execution
    def replay(self, inputs, action, steps=None):
        """Walks the steps on other values (symbolic ones: shape propagation,
        cloning): ``action(step, inputs, extra_args, kwargs)`` gives each step's
        flat outputs from its arguments. ``steps``: the plan's steps in another
        order where each comes after those it reads (graph surgery's rewire).
        Returns the flat outputs of the plan."""
        values = [None] * len(self.tensors)
        values[: len(inputs)] = inputs
        for step in self.steps if steps is None else steps:
            for slot, value in zip(step.out_slots, action(step, *step.arguments.fill_in(values, step.in_slots))):
                values[slot] = value
        return [values[slot] for slot in self.output_slots]

    def run(self, arrays, training=False, masks=None):
        """Inference: flat input arrays in, flat output arrays out. ``masks``
        are the inputs' masks (a flat list, None where an input has none)."""
        return self._walk(arrays, training, None, masks)[0]

    def forward(self, arrays, training=True, masks=None):
        """Training forward: returns (flat outputs, Tape), the tape holding what
        ``backward`` needs and the activity-regularization loss of the pass."""
        tape = Tape(len(self.steps), len(self.tensors))
        return self._walk(arrays, training, tape, masks)[0], tape

    def output_masks(self, arrays, masks=None):
        """The masks of the flat outputs (None where an output has none) for
        these inputs and their masks (a nested model's ``compute_mask``)."""
        return self._walk(arrays, False, None, masks)[1]

    def _walk(self, arrays, training, tape, input_masks=None):
        """The one loop over the plan. Each step reads its values, computes its
        outputs and frees what no later step reads; the per-step action is the
        only difference between uses: ``call`` for inference, ``forward`` with
        its cache kept on ``tape`` for training. Masks, where the graph makes
        or receives any, ride along: each step gets its inputs' masks and
        writes its outputs' (``compute_mask``). Returns (outputs, their masks)."""
        values = [None] * len(self.tensors)
        values[: len(arrays)] = arrays
        masks = None
        if self.uses_masks or any(m is not None for m in input_masks or ()):
            masks = [None] * len(self.tensors)
            for slot, mask in zip(self.input_slots, input_masks or ()):
                masks[slot] = mask
        for index, step in enumerate(self.steps):
            inputs, extra, kwargs = step.arguments.fill_in(values, step.in_slots)
            if masks is not None:
                mask, mask_kwargs = step.input_masks(masks, kwargs)
                if mask_kwargs:
                    kwargs = {**kwargs, **mask_kwargs}
            try:
                if tape is not None:
                    out, tape.caches[index] = step.layer.forward(inputs, *extra, training=training, **kwargs)
                elif step.sets_call_context:
                    out = step.layer._call(inputs, training, kwargs, extra)
                elif step.passes_training:
                    out = step.layer.call(inputs, *extra, training=training, **kwargs)
                else:
                    out = step.layer.call(inputs, *extra, **kwargs)
            except Exception as error:  # named by the failing layer, as an eager call of it would be
                raise_in_call_context(step.layer, error, inputs, extra, kwargs)
            _store(values, step.out_slots, out)
            if masks is not None:
                step.store_masks(masks, inputs, mask)
            if tape is not None:
                tape.record_outputs(index, step, values)
            for slot in step.free_slots:
                values[slot] = None
                if masks is not None:
                    masks[slot] = None
        out_masks = [None] * len(self.output_slots) if masks is None else [masks[s] for s in self.output_slots]
        return [values[slot] for slot in self.output_slots], out_masks

    def input_gradients_read(self, input_gradients=True):
        """For each step, whether backward needs the gradient of its inputs: a
        step upstream has trainable weights (or a traced call, whose weights
        the plan cannot see), or the step reads a plan input whose gradient is
        asked for (``input_gradients``). A step for which this is False and
        which has no trainable weights is left out of backward; a layer that
        takes ``input_gradient=False`` in its backward skips that product.

        Example:
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> plan = Model(x, Dense(1)(Dense(2)(x))).plan
            >>> plan.input_gradients_read(input_gradients=False)
            [False, True]
        """
        carries = [input_gradients] * len(self.tensors)
        reads = []
        for step in self.steps:
            read = any(carries[slot] for slot in step.in_slots)
            reads.append(read)
            carried = read or _has_trainable_weights(step.layer)
            for slot in step.out_slots:
                carries[slot] = carried
        return reads

    def backward(self, tape, grad_outputs, input_gradients=True):
        """Returns (gradients of the flat inputs, {Variable: gradient}) given the
        gradients of the flat outputs (``None`` for an output without one).
        ``input_gradients=False`` when the caller reads the weights' gradients
        only (``fit``): the gradients of the inputs are then None, and no layer
        computes a gradient that only they would read."""
        reads = self.input_gradients_read(input_gradients)
        grads = [None] * len(self.tensors)
        for slot, grad in zip(self.output_slots, grad_outputs):
            _accumulate(grads, slot, grad)
        weight_grads = {}
        for index in range(len(self.steps) - 1, -1, -1):
            step = self.steps[index]
            regularizer = step.layer.activity_regularizer
            if regularizer is not None:
                for slot in step.out_slots:
                    value = tape.activity_outputs[slot] if tape.reusable else tape.activity_outputs.pop(slot)
                    _accumulate(grads, slot, regularizer.activity_gradient(value) * tape.loss_seed)
            cache = tape.caches[index]
            out_grads = [grads[slot] for slot in step.out_slots]
            if all(g is None for g in out_grads) and not getattr(cache, "has_losses", False):
                continue  # nothing after this step needs its gradient, and it added no loss
            read = reads[index]
            if not read and not _has_trainable_weights(step.layer):
                if not tape.reusable:
                    tape.caches[index] = None
                continue  # no gradient of this step is read
            if isinstance(cache, (Tape, TracedCall)):
                cache.loss_seed = tape.loss_seed  # its added losses count as much as this tape's
            if isinstance(cache, Tape):
                cache.reusable = tape.reusable
            for position, slot in enumerate(step.out_slots):
                if out_grads[position] is None:
                    shape, dtype = tape.specs[slot]
                    out_grads[position] = np.zeros(shape, dtype)
                grads[slot] = None
            if len(out_grads) == 1 and not isinstance(step.node.outputs, (list, tuple, dict)):
                grad_out = out_grads[0]
            else:
                grad_out = tree.pack_as(step.node.outputs, out_grads)
            if read or not step.skips_input_gradient:
                grad_in, grad_w = step.layer.backward(cache, grad_out)
            else:
                grad_in, grad_w = step.layer.backward(cache, grad_out, input_gradient=False)
            if not tape.reusable:
                tape.caches[index] = None
            if read:
                _accumulate_inputs(grads, step, grad_in)
            if step.layer.trainable:
                for variable, grad in grad_w.items():
                    if variable.trainable:
                        weight_grads[variable] = grad + weight_grads[variable] if variable in weight_grads else grad
        return [grads[slot] for slot in self.input_slots], weight_grads


class Tape:
    """What one training forward pass leaves for backward: each step's cache,
    each tensor's shape and dtype, the outputs that activity regularizers
    penalize, and the losses the layers added (activity penalties and
    ``add_loss``, nested models' included): their total, whether there are
    any, and ``loss_seed``, the gradient backward gives that total (1 in
    ``fit``; under a GradientTape, what the user's target makes it). A
    ``reusable`` tape keeps its caches through backward, which can then run
    again (several GradientTapes, or a persistent one); else each cache is
    freed as soon as backward has used it."""

    __slots__ = ("caches", "specs", "activity_outputs", "activity_loss", "has_losses", "loss_seed", "inputs",
                 "reusable")

    def __init__(self, num_steps, num_tensors):
        self.caches = [None] * num_steps
        self.specs = [None] * num_tensors
        self.activity_outputs = {}
        self.activity_loss = 0.0
        self.has_losses = False
        self.loss_seed = 1.0
        self.inputs = None
        self.reusable = False

    def record_outputs(self, index, step, values):
        """After step ``index`` ran: the shape and dtype of its outputs, their
        activity penalty, and the losses of a nested model or a traced call."""
        cache = self.caches[index]
        if isinstance(cache, (Tape, TracedCall)) and cache.has_losses:
            self.activity_loss += cache.activity_loss
            self.has_losses = True
        regularizer = step.layer.activity_regularizer
        for slot in step.out_slots:
            value = values[slot]
            self.specs[slot] = (np.shape(value), np.result_type(value))
            if regularizer is not None:
                self.activity_outputs[slot] = value
                self.activity_loss += regularizer.activity_penalty(value)
                self.has_losses = True


class _Walk:
    """State of one graph mapping: the output being walked, the nodes done and
    the nodes the walk is inside of (``visiting``, by id in the order entered:
    the path from the output to the node being walked)."""

    def __init__(self, input_ids):
        self.input_ids = input_ids
        self.output = None
        self.done, self.visiting, self.order = set(), {}, []


def _nested_calls(inputs):
    """``{id(input tensor of a nested model): (model, [(node, fed tensor), ...])}``
    for the calls of functional models reached by walking forward from
    ``inputs`` along outbound nodes, into nested models too: how a tensor made
    inside a nested model is tied to the tensor the model was called on. Models
    keep no record of where they are used, so this is read off the graph."""
    calls, seen_tensors, seen_nodes = {}, set(), set()
    stack = list(inputs)
    while stack:
        tensor = stack.pop()
        if id(tensor) in seen_tensors or tensor._keras_history is None or tensor._keras_history.layer is None:
            continue
        seen_tensors.add(id(tensor))
        for node in tensor._keras_history.layer._outbound_nodes:
            if id(node) in seen_nodes or not any(t is tensor for t in node.input_tensors):
                continue
            seen_nodes.add(id(node))
            stack.extend(node.output_tensors)
            if node.fed_inputs is None:
                continue
            model = node.outbound_layer
            for inner, fed in zip(model.plan.inputs, node.fed_inputs):
                calls.setdefault(id(inner), (model, []))[1].append((node, fed))
                stack.append(inner)
    return calls


def _tensor_name(tensor):
    """``dense[1][0]``: the layer, call and output that made ``tensor`` (its own name when no layer did)."""
    history = tensor._keras_history
    if history is None or history.layer is None:
        return tensor.name
    return f"{history.layer.name}[{history.node_index}][{history.tensor_index}]"


def _has_trainable_weights(layer):
    """Whether backward computes gradients of ``layer``'s weights: it has
    trainable ones, or its call is traced (the tape finds the weights it uses)."""
    return not layer._has_backward() or bool(layer.trainable_weights)


@functools.cache
def _step_traits(layer_class):
    """What a step of a ``layer_class`` call passes: ``(training, mask, whether its backward can leave out the
    input gradient when no earlier step reads it)`` (Conv, Dense, BN can), looked up once per class."""
    return (_accepts_training(layer_class), "mask" in call_parameters(layer_class),
            "input_gradient" in backward_parameters(layer_class))


@functools.cache
def _one_tensor_step(layer_class):
    """What a step of a call of ``layer_class`` on one tensor reads, the same for every such call:
    ``(its shared BoundArguments, *_step_traits, the names of the <argument>_mask parameters its tensor feeds)``."""
    arguments = one_tensor_call(first_argument_name_of(layer_class))
    masks = tuple(name for name, _, _ in arguments.argument_masks(layer_class))
    return (arguments, *_step_traits(layer_class), masks)


@functools.cache
def backward_parameters(layer_class):
    """The parameter names of ``layer_class.backward``.

    >>> from layers import Conv2D, ReLU
    >>> "input_gradient" in backward_parameters(Conv2D), "input_gradient" in backward_parameters(ReLU)
    (True, False)
    """
    return frozenset(inspect.signature(layer_class.backward).parameters)


def _store(values, out_slots, out):
    if len(out_slots) == 1 and not isinstance(out, (list, tuple, dict)):
        values[out_slots[0]] = out
    else:
        for slot, array in zip(out_slots, tree.flatten(out)):
            values[slot] = array


def _accumulate_inputs(grads, step, grad_in):
    """Adds the gradients of ``step``'s arguments (its backward's ``grad_in``) to those of the slots it reads."""
    if step.arguments.single and type(grad_in) is np.ndarray:
        _accumulate(grads, step.in_slots[0], grad_in)
    else:
        for slot, grad in zip(step.in_slots, step.arguments.route(step.layer, grad_in)):
            _accumulate(grads, slot, grad)


def _accumulate(grads, slot, grad):
    if grad is None:
        return
    grads[slot] = grad if grads[slot] is None else grads[slot] + grad
