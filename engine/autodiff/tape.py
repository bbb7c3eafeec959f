"""The tape: what was computed, in order, and the backward pass that walks it in reverse.

A ``GradientTape`` records steps. A step is either one traced NumPy call (its
derivative rule comes from ``rules.py``) or a whole operation with a hand-written
backward, recorded by ``record_op`` (a Dense layer, a functional model): both are
one entry, ``(input slots, output slot(s), rule, arguments, name)``, so the two
sources of gradients meet on one tape. A traced ufunc keeps its per-argument
rules and ``arguments = (ans, *values)``, and the tape calls ``rule[i](g, ans,
*values)`` for its traced arguments only; every other step keeps a ``vjp(g)``
returning one gradient per input slot, with ``arguments = None``.

Every value on a tape has a *slot*, its index in recording order; a step's
outputs have higher slots than its inputs, so walking the steps in reverse
visits each value after everything that read it.

The stack of recording tapes is a ``ContextVar``: each thread, and each asyncio
task, has its own, and never sees another's operations. A tape keeps recording
steps on its own values after its ``with`` block, until ``gradient`` releases a
non-persistent tape; a released tape's values are constants to every later step.

Tapes nest, each at its *level* (the order tapes were entered in): a Variable
used while several tapes record becomes a leaf of each that watches it (a tape
made with ``watch_accessed_variables=False`` watches only what it was given with
``watch``), the inner tape's leaf holding the outer tape's, and a step is
recorded on every tape its inputs are traced on (``traced.py``), so
``with GradientTape() as g, GradientTape() as d:`` gives both tapes everything.
``gradient`` called while outer tapes record runs the derivative rules on the
outer tapes' values, unpaused, so those tapes record the backward pass and can
differentiate the gradient again; a step with a hand-written backward (a
built-in layer) computes on plain arrays, so its gradient there is marked: an
outer tape asked to differentiate through it raises ``TracingError``.
"""

import contextlib
import itertools

import numpy as np

from engine import tree
from engine.network import variable as _variable
from engine.autodiff import active
from engine.autodiff import traced as _traced
from engine.autodiff.rules import TracingError

_STACK = active.TAPES
_LEVELS = itertools.count()


def recording() -> bool:
    """True while a tape records in this thread (or asyncio task)."""
    return any(tape._ops is not None for tape in _STACK.get())


@contextlib.contextmanager
def paused():
    """Within it no tape records in this context: code with a hand-written
    gradient (a layer's ``forward`` and ``backward``, a backward pass) runs on
    plain arrays, its Variables read as constants."""
    token = _STACK.set(())
    try:
        yield
    finally:
        _STACK.reset(token)


@contextlib.contextmanager
def _only(tapes):
    """Within it, only ``tapes`` record in this context."""
    token = _STACK.set(tuple(tapes))
    try:
        yield
    finally:
        _STACK.reset(token)


def _outer_value(variable, level):
    """``variable`` as the recording tapes outside ``level`` see it: its leaf on the innermost of them that
    watches it, else its value."""
    for tape in reversed(_STACK.get()):
        if tape._level < level:
            leaf = tape._variable_leaf(variable)
            if leaf is not None:
                return leaf
    return variable.value


class GradientTape:
    """Records NumPy computations for automatic differentiation, as ``tf.GradientTape``.

    Inside ``with GradientTape() as tape:``, trainable Variables used in NumPy
    calls become leaves of the tape, and ``tape.watch(x)`` makes an array one.
    ``tape.gradient(target, sources)`` returns d(sum of target)/d(source) in the
    structure of ``sources``, None where a source does not reach the target.
    A tape answers one ``gradient`` call and then frees what it recorded, unless
    it is ``persistent``.

    Args:
        persistent: allow several ``gradient`` calls (what was recorded is
            kept until the tape is garbage collected).
        watch_accessed_variables: make every trainable Variable used inside the
            ``with`` block a leaf; False watches only what ``watch`` is given.

    Example:
        >>> import numpy as np
        >>> from engine import Variable
        >>> w = Variable(np.array([[2.0]], "float32"), name="w", path="toy/w")
        >>> with GradientTape() as tape:
        ...     x = tape.watch(np.array([[3.0]], "float32"))
        ...     y = np.tanh(x @ w)
        >>> dw, dx = tape.gradient(y, [w, x])
        >>> dw.dtype, dx.shape
        (dtype('float32'), (1, 1))
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._ops = []     # one (input slots, output slot or slots, rule, arguments, name) per step; None once released
        self._meta = []    # (shape, dtype) of every slot, to shape and cast the gradients
        self._leaves = {}  # Variable -> its Traced leaf on this tape, in first-use order
        self._tokens = []
        self._level = next(_LEVELS)  # a tape inside another has a higher level: its values hold the outer ones

    def __enter__(self):
        if not self._meta:
            self._level = next(_LEVELS)
        self._tokens.append(_STACK.set(_STACK.get() + (self,)))
        return self

    def __exit__(self, *exc_info):
        _STACK.reset(self._tokens.pop())

    def watch(self, x):
        """Makes ``x`` (an array or a Variable) a leaf of this tape and returns it.

        A Traced of this tape is returned as it is; one of an outer tape that
        still records becomes a leaf that stays traced on the outer tape (so
        the outer tape can differentiate this tape's gradients); one of any
        other tape a leaf with the same value, detached from that tape.

        Args:
            x: an array (or anything ``np.asarray`` takes), a Variable or a Traced.

        Returns:
            The leaf, a Traced array: compute with it inside the ``with`` block.

        Raises:
            RuntimeError: the tape was already used by ``gradient`` (not persistent).

        Example:
            >>> import numpy as np
            >>> with GradientTape() as tape:
            ...     x = tape.watch(np.array([1.0, 2.0], "float32"))
            ...     y = np.sum(x ** 2)
            >>> tape.gradient(y, x)
            array([2., 4.], dtype=float32)
        """
        self._check_live("watch")
        if isinstance(x, _variable.Variable):
            leaf = self._leaves.get(x)
            if leaf is None:
                leaf = self._leaves[x] = self._leaf(_outer_value(x, self._level))
            return leaf
        if type(x) is _traced.Traced:
            if x._tape is self:
                return x
            if x._tape._ops is not None and x._tape._level < self._level:
                return self._leaf(x)
            return self.watch(x._value)
        return self._leaf(np.asarray(x))

    def watched_variables(self) -> list:
        """The Variables that became leaves of this tape, in the order they were first used.

        Example:
            >>> import numpy as np
            >>> from layers import Dense
            >>> layer = Dense(1)
            >>> with GradientTape() as tape:
            ...     y = layer(np.ones((2, 3), "float32"))
            >>> [variable.name for variable in tape.watched_variables()]
            ['kernel', 'bias']
        """
        return list(self._leaves)

    def gradient(self, target, sources, output_gradients=None):
        """Gradients of ``target`` (summed over its entries) with respect to each source.

        Args:
            target: a Traced, or a nested structure of them; anything else is a
                constant, whose gradients are all None.
            sources: Variables and Traced values of this tape, nested in lists,
                tuples or dicts.
            output_gradients: the gradient flowing into each target, in the
                target's structure; None (for all, or one) means ones.

        Returns:
            The gradients in the structure of ``sources``, each in its source's
            shape and dtype; None for a source the target does not depend on.

        Raises:
            RuntimeError: a second call on a tape that is not persistent.

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> model = Model(x, Dense(1)(x))
            >>> with GradientTape() as tape:
            ...     loss = np.mean(model(np.ones((4, 3), "float32")) ** 2)
            >>> grads = tape.gradient(loss, model.trainable_variables)
            >>> [g.shape for g in grads]
            [(3, 1), (1,)]
        """
        if self._ops is None:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of gradients; what it recorded "
                "was released after the first call to gradient(). Create it with GradientTape(persistent=True) to "
                "call gradient() more than once.")
        seeds = {}
        targets = tree.flatten(target)
        wanted = tree.flatten(output_gradients) if output_gradients is not None else [None] * len(targets)
        if len(wanted) != len(targets):
            raise ValueError(f"output_gradients must have the structure of target: got {len(wanted)} gradients "
                             f"for {len(targets)} targets.")
        for t, g in zip(targets, wanted):
            slot = _slot_on(t, self)  # a value of an inner tape holds this tape's value of the same step
            if slot is not None:
                shape, dtype = self._meta[slot]
                if g is None:
                    g = np.ones(shape, dtype)
                elif type(g) is not _traced.Traced:
                    g = np.broadcast_to(np.asarray(g, dtype), shape)
                seeds[slot] = g if slot not in seeds else seeds[slot] + g
        slots = [self._source_slot(s) for s in tree.flatten(sources)]
        keep = {s for s in slots if s is not None}
        outer = [tape for tape in _STACK.get() if tape._ops is not None and tape._level < self._level]
        with _only(outer) if outer else paused():  # outer tapes record the backward pass: gradients of gradients
            grads = self._backward(seeds, keep, traced=bool(outer)) if seeds and keep else {}
        if not self._persistent:
            self._ops = self._meta = None
        results, seen = [], set()
        for s in slots:  # each result its own writeable array: rules pass one gradient on to several inputs
            g = None if s is None else grads.get(s)
            if type(g) is np.ndarray and (id(g) in seen or not g.flags.writeable):
                g = np.array(g)
            seen.add(id(g))
            results.append(g)
        return tree.pack_as(sources, results)

    def _source_slot(self, source):
        if isinstance(source, _variable.Variable):
            leaf = self._leaves.get(source)
            return None if leaf is None else leaf._slot
        if type(source) is _traced.Traced:
            return _slot_on(source, self)
        raise TypeError(f"gradient() sources must be Variables or Traced values; received {type(source).__name__}. "
                        f"Pass the Traced that tape.watch(x) returned rather than the array x itself.")

    def _check_live(self, action):
        if self._ops is None:
            raise RuntimeError(f"Cannot {action} on a non-persistent GradientTape after its gradient() was computed; "
                               f"it released what it recorded. Use a new tape, or GradientTape(persistent=True).")

    # ------------------------------------------------------------ recording

    def _leaf(self, value):
        self._meta.append((value.shape, value.dtype))
        return _traced.Traced(value, self, len(self._meta) - 1)

    def _variable_leaf(self, variable):
        """The leaf of ``variable`` on this tape, made now if the tape watches accessed variables; else None."""
        if self._ops is None:
            return None
        leaf = self._leaves.get(variable)
        if leaf is None and self._watch_accessed and variable.trainable:
            leaf = self._leaves[variable] = self._leaf(_outer_value(variable, self._level))
        return leaf

    def _record(self, ans, in_slots, rule, args, name):
        """Records one step whose result is ``ans`` and returns it traced."""
        meta = self._meta
        meta.append((ans.shape, ans.dtype))
        self._ops.append((in_slots, len(meta) - 1, rule, args, name))
        return _traced.Traced(ans, self, len(meta) - 1)

    def _record_many(self, results, in_slots, vjp, name):
        """Records one step with several results (a list or tuple); ``vjp`` gets the list of their gradients."""
        first = len(self._meta)
        self._meta.extend((r.shape, r.dtype) if type(r) is _traced.Traced else (np.shape(r), np.result_type(r))
                          for r in results)
        self._ops.append((in_slots, tuple(range(first, len(self._meta))), vjp, None, name))
        return type(results)(_traced.Traced(r, self, first + i) for i, r in enumerate(results))

    # ------------------------------------------------------------ backward

    def _backward(self, seeds, keep, traced=False):
        """Walks the steps in reverse from the ``seeds`` ({slot: gradient}); returns {slot: gradient} for ``keep``.

        ``traced``: outer tapes record, and the rules run on the values as recorded (those of outer tapes
        traced); else on plain arrays, and every gradient is plain.
        """
        grads, meta = dict(seeds), self._meta
        top, bottom = max(seeds), min(keep)
        for in_slots, out, rule, args, name in reversed(self._ops):
            if type(out) is int:
                if out > top:
                    continue
                if out < bottom:
                    break
                g = grads.get(out) if out in keep else grads.pop(out, None)
                if g is None:
                    continue
            else:
                if out[0] > top:
                    continue
                if out[-1] < bottom:
                    break
                g = [grads.get(o) if o in keep else grads.pop(o, None) for o in out]
                if all(x is None for x in g):
                    continue
                g = [np.zeros(*meta[o]) if x is None else x for o, x in zip(out, g)]
            if args is None:
                grads_in = rule(g)
            else:
                if not traced and type(args[0]) is _traced.Traced:  # a step also recorded on outer tapes
                    args = [_traced.untraced(a) for a in args]
                grads_in = [None if slot is None else grad(g, *args) for grad, slot in zip(rule, in_slots)]
            for slot, grad in zip(in_slots, grads_in):
                if slot is None or grad is None:
                    continue
                if callable(grad):  # computed only now that its input is known to be traced
                    grad = grad()
                # summed over the axes the input was broadcast along, in the input's dtype, added up
                shape, dtype = meta[slot]
                if type(grad) is _traced.Traced:
                    if not traced:  # a rule's closure read values of an outer tape
                        grad = grad.value
                elif type(grad) is not np.ndarray:
                    grad = np.asarray(grad)
                if grad.shape != shape:
                    grad = _fit(grad, shape, name)
                if grad.dtype is not dtype and grad.dtype != dtype:
                    grad = grad.astype(dtype)
                previous = grads.get(slot)
                grads[slot] = grad if previous is None else previous + grad
        return grads


def _fit(grad, shape, name):
    """``grad`` in its input's ``shape``: summed over the axes the input was broadcast along, or broadcast up to
    it (a reduction's rule returns the keepdims shape)."""
    if grad.ndim > len(shape):
        grad = grad.sum(tuple(range(grad.ndim - len(shape))))
    if grad.ndim == len(shape):
        summed = tuple(k for k, (n, m) in enumerate(zip(shape, grad.shape)) if n == 1 and m != 1)
        grad = grad.sum(summed, keepdims=True) if summed else grad
    if grad.shape == shape:
        return grad
    if type(grad) is _traced.Traced:
        return np.broadcast_to(grad, shape)
    full = np.empty(shape, grad.dtype)  # np.broadcast_to is several times slower on small arrays
    try:
        full[...] = grad
    except ValueError:
        raise ValueError(f"The backward of {_traced._function_name(name)} returned a gradient of shape {grad.shape} "
                         f"for an input of shape {shape}; it must have the input's shape, or broadcast to it.") from None
    return full


def record_op(backward, inputs, outputs, variables=(), name: str = "op"):
    """Records an operation with a hand-written backward as one step of the tape.

    Args:
        backward: ``backward(grad_outputs) -> (grad_inputs, {Variable: grad})``;
            ``grad_outputs`` is a list of arrays aligned with ``outputs`` (zeros
            where an output got no gradient), ``grad_inputs`` one entry per
            input (None allowed). Called once per ``gradient`` call, and once
            per tape when several record the operation.
        inputs: the operation's inputs, Traced or plain arrays (constants).
        outputs: the arrays the caller already computed (from plain arrays).
        variables: the Variables ``backward`` differentiates; their gradients
            add up on the tape as if they had been used as leaves.
        name: for error messages (the layer's name).

    Returns:
        ``outputs`` as a list, the floating ones traced on every tape that
        records the operation: each live tape its inputs are traced on, and
        each recording tape that watches one of ``variables``; unchanged when
        nothing records.

    Example:
        >>> import numpy as np
        >>> with GradientTape() as tape:
        ...     x = tape.watch(np.array([1.0, -2.0]))
        ...     (y,) = record_op(lambda gs: ([gs[0] * 3],  {}), [x], [x.value * 3], name="triple")
        >>> tape.gradient(y, x)
        array([3., 3.])
    """
    tapes = {}  # an ordered set
    for x in inputs:
        while type(x) is _traced.Traced:
            if x._tape._ops is not None:
                tapes[x._tape] = None
            x = x._value
    for tape in _STACK.get():
        if tape._ops is not None and tape not in tapes and any(tape._variable_leaf(v) is not None for v in variables):
            tapes[tape] = None
    results = list(outputs)
    for tape in sorted(tapes, key=lambda t: t._level):  # outer tapes first: each level holds the one before
        slots = [_slot_on(x, tape) for x in inputs]
        leaves = [(v, leaf) for v in variables if (leaf := tape._variable_leaf(v)) is not None]
        if all(s is None for s in slots) and not leaves:
            continue
        nested = any(type(r) is _traced.Traced for r in results)
        recorded = tape._record_many(results, slots + [leaf._slot for _, leaf in leaves],
                                     _step_vjp(backward, len(slots), variables, leaves, nested, name), name)
        results = [r if np.result_type(o).kind == "f" else o for r, o in zip(recorded, outputs)]
    return results


def _slot_on(x, tape):
    """The slot of ``x`` on ``tape``, whichever level of ``x`` belongs to it; None if none does."""
    while type(x) is _traced.Traced:
        if x._tape is tape:
            return x._slot
        x = x._value
    return None


def _step_vjp(backward, num_inputs, variables, leaves, nested, name):
    """The vjp of a ``record_op`` step on one tape: ``backward`` on plain arrays, its gradients checked and
    ordered as the step's input slots. While outer tapes record (a gradient of a gradient), a gradient that
    should depend on their values (the step's inputs were traced on them too, or so are the gradients flowing
    in) is marked so that differentiating it raises: a hand-written backward runs on plain arrays."""
    def vjp(grad_outputs):
        traced = any(type(g) is _traced.Traced for g in grad_outputs)
        grad_inputs, grad_variables = backward([_traced.untraced(g) for g in grad_outputs])
        if len(grad_inputs) != num_inputs:
            raise ValueError(f"The backward of {_traced._function_name(name)} returned {len(grad_inputs)} input "
                             f"gradients for its {num_inputs} inputs; return one per input, None where an input "
                             f"has none.")
        stray = [v for v in grad_variables if not any(v is w for w in variables)]
        if stray:
            raise ValueError(f"The backward of {_traced._function_name(name)} returned gradients for Variables it "
                             f"was not recorded with: {[v.path for v in stray]}; pass them in "
                             f"record_op(..., variables=...).")
        grads = [*grad_inputs, *(grad_variables.get(v) for v, _ in leaves)]
        outer = _STACK.get()
        if (traced or nested) and any(tape._ops is not None for tape in outer):
            grads = [None if g is None else _untraceable(np.asarray(g), name) for g in grads]
        return grads
    return vjp


def _untraceable(grad, name):
    """``grad`` traced on the innermost recording tape by a step whose own gradient raises ``TracingError``."""
    def refuse(grad_outputs):
        raise TracingError(f"the gradient of {_traced._function_name(name)}", hint=(
            "that gradient was computed by a GradientTape inside this one, through a hand-written backward (a "
            "built-in layer's or a model's), which runs on plain arrays, so this tape cannot differentiate it "
            "again (a second derivative). Compute the inner gradient through code the tape traces: a custom "
            "layer whose call uses NumPy functions on its inputs and Variables (`x @ self.kernel`)"))
    tape = next(tape for tape in reversed(_STACK.get()) if tape._ops is not None)
    (traced,) = tape._record_many([grad], [], refuse, name)
    return traced
