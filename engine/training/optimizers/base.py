"""The optimizer template: unscale, accumulate and clip the gradients, decay the
weights, update each weight with its slots, average the weights, apply
constraints, count the step."""

import math
import numbers
import warnings

import numpy as np

from engine.network.naming import to_snake_case, unique_name
from engine.training.optimizers import schedules
from engine.files.serialization import serialize
from engine.network.variable import Variable

# Elements per slice of an in-place update (see ``update_chunks``): 128 KB of float32 per array.
UPDATE_CHUNK = 1 << 15


class Optimizer:
    """Base class: subclasses create their per-weight slots in ``_create_slots``
    and update one weight in ``update_step``.

    Args:
        learning_rate: A non-negative float or a ``LearningRateSchedule``.
        weight_decay: If set, each weight ``w`` becomes
            ``w - w * weight_decay * learning_rate`` before its update.
        clipnorm: If set, each gradient is rescaled so its L2 norm is at most this.
        clipvalue: If set, each gradient is clipped to ``[-clipvalue, clipvalue]``.
        global_clipnorm: If set, all gradients are rescaled together so their
            joint L2 norm is at most this.
        use_ema: Whether to keep an exponential moving average of the weights
            (slots ``average``), which ``finalize_variable_values`` (called
            by ``fit`` at its end) copies into the weights.
        ema_momentum: The average's momentum: ``average = ema_momentum *
            average + (1 - ema_momentum) * w`` (``average = w`` at the first update).
        ema_overwrite_frequency: If set (with ``use_ema``), the weights are
            overwritten by their average every this many updates.
        loss_scale_factor: If set, gradients are divided by it: ``fit``
            computes them from the loss multiplied by it (``scale_loss``).
        gradient_accumulation_steps: If set (an int >= 2), gradients are summed
            (slots ``gradient_accumulator``) and the weights updated on every
            this many ``apply`` calls, with the mean of the summed gradients;
            ``iterations`` then counts updates, the learning-rate schedule
            counts calls.
        name: Prefix of the slot paths; ``"sgd"``, ``"adam_1"``, ... by default.

    Example:
        >>> import numpy as np
        >>> from engine.training.optimizers import SGD
        >>> from engine.network.variable import Variable
        >>> w = Variable(np.ones(2, "float32"), name="w", path="dense/w")
        >>> SGD(learning_rate=0.5).apply_gradients([(np.ones(2, "float32"), w)])
        >>> w.value
        array([0.5, 0.5], dtype=float32)
    """

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if kwargs:
            raise ValueError(
                f"Argument(s) not recognized by {type(self).__name__}: {kwargs}. Supported arguments: learning_rate, "
                "weight_decay, clipnorm, clipvalue, global_clipnorm, use_ema, ema_momentum, ema_overwrite_frequency, "
                "loss_scale_factor, gradient_accumulation_steps, name and the optimizer's own hyperparameters."
            )
        self._check_extras(use_ema, ema_momentum, ema_overwrite_frequency, loss_scale_factor,
                           gradient_accumulation_steps)
        if sum(arg is not None for arg in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
                f"Received: clipnorm={clipnorm}, clipvalue={clipvalue}, global_clipnorm={global_clipnorm}"
            )
        self.name = name or unique_name(to_snake_case(type(self).__name__))
        self.weight_decay = weight_decay
        self.clipnorm = clipnorm
        self.clipvalue = clipvalue
        self.global_clipnorm = global_clipnorm
        self.use_ema = use_ema
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.built = False
        self._trainable_variables = []
        self._indices = {}
        self._iterations = Variable(np.array(0, "int64"), name="iteration", path=f"{self.name}/iteration",
                                    trainable=False)
        self._variables = [self._iterations]
        if isinstance(learning_rate, (dict, schedules.LearningRateSchedule)):
            self._learning_rate = schedules.get(learning_rate)
        else:
            self._learning_rate = Variable(np.array(self._checked_learning_rate(learning_rate), "float64"),
                                           name="learning_rate", path=f"{self.name}/learning_rate", trainable=False)
            self._variables.append(self._learning_rate)
        self._unbuilt_size = len(self._variables)

    def _check_extras(self, use_ema, ema_momentum, ema_overwrite_frequency, loss_scale_factor,
                      gradient_accumulation_steps):
        """Refuses the values of the averaging, scaling and accumulation arguments Keras refuses, and scale factors
        that would turn the gradients infinite."""
        name = type(self).__name__
        if gradient_accumulation_steps and not _is_int(gradient_accumulation_steps, minimum=2):
            raise ValueError(f"{name}: `gradient_accumulation_steps` must be an integer >= 2 (or None to update on "
                             f"every step). Received: gradient_accumulation_steps={gradient_accumulation_steps!r}")
        if loss_scale_factor is not None and not (isinstance(loss_scale_factor, numbers.Real)
                                                  and 0 < loss_scale_factor < math.inf):
            raise ValueError(f"{name}: `loss_scale_factor` must be a positive finite float (or None). "
                             f"Received: loss_scale_factor={loss_scale_factor!r}")
        if not use_ema:
            return
        if not (isinstance(ema_momentum, numbers.Real) and 0 <= ema_momentum <= 1):
            raise ValueError(f"{name}: `ema_momentum` must be in the range [0, 1]. "
                             f"Received: ema_momentum={ema_momentum!r}")
        if ema_overwrite_frequency and not _is_int(ema_overwrite_frequency, minimum=1):
            raise ValueError(f"{name}: `ema_overwrite_frequency` must be an integer >= 1 or None. "
                             f"Received: ema_overwrite_frequency={ema_overwrite_frequency!r}")

    def _checked_learning_rate(self, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0 or math.isinf(value):
            raise ValueError(
                f"{type(self).__name__} expects `learning_rate` to be a non-negative float or a "
                f"LearningRateSchedule. Received: learning_rate={value!r}"
            )
        return float(value)

    @property
    def iterations(self) -> int:
        """How many times ``apply`` has updated the weights (with
        ``gradient_accumulation_steps``, the calls divided by it)."""
        calls = int(self._iterations.value)
        return calls // self.gradient_accumulation_steps if self.gradient_accumulation_steps else calls

    @property
    def learning_rate(self) -> float:
        """The learning rate for the next update (the schedule's value at the
        number of ``apply`` calls so far)."""
        if isinstance(self._learning_rate, schedules.LearningRateSchedule):
            return float(self._learning_rate(int(self._iterations.value)))
        return float(self._learning_rate.value)

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(self._learning_rate, schedules.LearningRateSchedule):
            raise TypeError(
                "This optimizer was created with a `LearningRateSchedule` object as its `learning_rate` constructor "
                "argument, hence its learning rate is not settable. If you need the learning rate to be settable, "
                "you should instantiate the optimizer with a float `learning_rate` argument."
            )
        self._learning_rate.value = np.array(self._checked_learning_rate(value), "float64")

    @property
    def variables(self) -> list:
        """The optimizer's state in Keras' order: the iteration count, the
        learning rate (unless it is a schedule), the weights' averages and
        gradient accumulators (if used), then the optimizer's own slots."""
        return list(self._variables)

    def build(self, variables):
        """Creates the slots (moments, accumulators) for ``variables``; later calls do nothing.

        The first update builds the optimizer on its variables; build it by
        hand to load saved state before training.

        Args:
            variables: the Variables the optimizer will update.

        Example:
            >>> import numpy as np
            >>> from engine.training.optimizers import Adam
            >>> from engine.network.variable import Variable
            >>> optimizer = Adam()
            >>> optimizer.build([Variable(np.zeros(2, "float32"), name="w", path="dense/w")])
            >>> len(optimizer.variables)  # iterations, learning rate, two moments
            4
        """
        if self.built:
            return
        self._trainable_variables = list(variables)
        self._indices = {id(variable): i for i, variable in enumerate(self._trainable_variables)}
        self._ema_averages = self._add_slots(self._trainable_variables, "average")[0] if self.use_ema else []
        self._gradient_accumulators = self._add_slots(self._trainable_variables, "gradient_accumulator")[0] \
            if self.gradient_accumulation_steps else []
        self._create_slots(self._trainable_variables)
        self.built = True

    def _create_slots(self, variables):
        """Subclasses add their per-weight state here with ``_add_slots``."""

    def _add_slots(self, variables, *names, initial_value=0.0):
        """One slot per name for each weight, interleaved weight by weight as
        Keras orders them; returns one list per name, indexed like ``variables``.
        ``initial_value`` is a float, or a tuple of one per name."""
        initial_values = initial_value if isinstance(initial_value, tuple) else (initial_value,) * len(names)
        slots = [[] for _ in names]
        for variable in variables:
            for name, value, column in zip(names, initial_values, slots):
                column.append(self._add_slot(f"{variable.path.replace('/', '_')}_{name}",
                                             np.full(variable.shape, value, variable.dtype)))
        return slots

    def _add_slot(self, name, value):
        """One slot named ``name`` holding ``value``, appended to ``variables``."""
        slot = Variable(value, name=name, path=f"{self.name}/{name}", trainable=False)
        self._variables.append(slot)
        return slot

    def _slot(self, slots, variable):
        return slots[self._indices[id(variable)]]

    def apply_gradients(self, grads_and_vars):
        """Applies one update from ``(gradient, variable)`` pairs.

        Args:
            grads_and_vars: an iterable of ``(gradient, Variable)`` pairs.

        Example:
            >>> import numpy as np
            >>> from engine.training.optimizers import SGD
            >>> from engine.network.variable import Variable
            >>> w = Variable(np.ones(2, "float32"), name="w", path="dense/w")
            >>> SGD(learning_rate=0.5).apply_gradients([(np.array([1.0, -1.0], "float32"), w)])
            >>> w.numpy()
            array([0.5, 1.5], dtype=float32)
        """
        pairs = list(grads_and_vars)
        self.apply([grad for grad, _ in pairs], [variable for _, variable in pairs])

    def apply(self, grads, variables=None):
        """Applies one update; ``variables`` may be left out once the optimizer is built.

        Gradients are unscaled (``loss_scale_factor``), accumulated
        (``gradient_accumulation_steps``: only every N-th call goes on) and
        clipped (``clipnorm``...), weights decayed, each variable updated by
        ``update_step``, the averages updated (``use_ema``), and each variable
        projected by its constraint.

        Args:
            grads: one gradient per variable, in order (None skips a variable).
            variables: the Variables; default: those the optimizer was built on.

        Example:
            >>> import numpy as np
            >>> from engine.training.optimizers import SGD
            >>> from engine.network.variable import Variable
            >>> w = Variable(np.ones(2, "float32"), name="w", path="dense/w")
            >>> SGD(learning_rate=0.5).apply([np.array([1.0, -1.0], "float32")], [w])
            >>> w.numpy()
            array([0.5, 1.5], dtype=float32)
        """
        grads = list(grads)
        if not grads:
            return
        variables = self._known_variables(grads, variables)
        grads, variables = self._with_gradients(grads, variables)
        if self.loss_scale_factor is not None:
            grads = [grad / self.loss_scale_factor for grad in grads]
        if self.gradient_accumulation_steps:
            grads = self._accumulate(grads, variables)
        if grads is not None:
            learning_rate = self.learning_rate
            grads = self._clip_gradients(grads)
            self._apply_weight_decay(variables, learning_rate)
            self._update_steps(grads, variables, learning_rate)
        if self.use_ema:
            self._update_averages()
        for variable in variables:
            if variable.constraint is not None:
                variable.assign(variable.constraint(variable.value))
        self._iterations.value = self._iterations.value + 1

    def _known_variables(self, grads, variables):
        if variables is None:
            if not self.built:
                raise ValueError(
                    "When passing `grads` without `variables`, the optimizer must already be built on a list of "
                    "variables. Call `optimizer.build(trainable_variables)` first."
                )
            variables = self._trainable_variables
        variables = list(variables)
        if len(grads) != len(variables):
            raise ValueError(
                f"{type(self).__name__} received {len(grads)} gradients for {len(variables)} variables: pass exactly "
                "one gradient (or None) per variable."
            )
        self.build(variables)
        for variable in variables:
            if id(variable) not in self._indices:
                raise ValueError(
                    f"Unknown variable: {variable}. This optimizer can only be called for the variables it was "
                    "originally built with. When working with a new set of variables, you should recreate a new "
                    "optimizer instance."
                )
        return variables

    def _accumulate(self, grads, variables):
        """Adds ``grads`` to the accumulators; on every N-th call instead returns
        the mean gradients of the last N calls and zeroes the accumulators
        (None on the other calls)."""
        steps = self.gradient_accumulation_steps
        accumulators = [self._slot(self._gradient_accumulators, variable) for variable in variables]
        if (int(self._iterations.value) + 1) % steps:
            for accumulator, grad in zip(accumulators, grads):
                accumulator.value = accumulator.value + grad
            return None
        means = [(grad + accumulator.value) / steps for grad, accumulator in zip(grads, accumulators)]
        for accumulator in accumulators:
            accumulator.value = np.zeros_like(accumulator.value)
        return means

    def _update_averages(self):
        """Moves each weight's average towards it (to it at the first update)
        and, every ``ema_overwrite_frequency`` updates, copies the averages
        into the weights."""
        momentum = self.ema_momentum if self.iterations else 0.0
        for variable, average in zip(self._trainable_variables, self._ema_averages):
            kept = variable.dtype.type(momentum)
            average.value = kept * average.value + (1 - kept) * variable.value
        if self.ema_overwrite_frequency and (self.iterations + 1) % self.ema_overwrite_frequency == 0:
            self._overwrite_with_averages(self._trainable_variables)

    def _overwrite_with_averages(self, variables):
        if len(variables) != len(self._ema_averages):
            raise ValueError(
                f"Optimizer '{self.name}' keeps the averages of {len(self._ema_averages)} variables but received "
                f"{len(variables)} variables to overwrite with them: pass the variables it was built on (the "
                "model's trainable weights)."
            )
        for variable, average in zip(variables, self._ema_averages):
            variable.assign(average.value)

    def finalize_variable_values(self, var_list):
        """Ends training: with ``use_ema``, copies the averages into the
        weights (``fit`` calls this after its last epoch, as Keras' does).

        Args:
            var_list: the Variables the optimizer was built on, in order.

        Example:
            >>> import numpy as np
            >>> from engine.training.optimizers import SGD
            >>> from engine.network.variable import Variable
            >>> w = Variable(np.zeros(1, "float32"), name="w", path="dense/w")
            >>> optimizer = SGD(learning_rate=1.0, use_ema=True, ema_momentum=0.5)
            >>> for _ in range(2):
            ...     optimizer.apply([np.ones(1, "float32")], [w])
            >>> optimizer.finalize_variable_values([w])  # average of -1 and -2
            >>> w.numpy()
            array([-1.5], dtype=float32)
        """
        if self.use_ema and self.built:
            self._overwrite_with_averages(list(var_list))

    def scale_loss(self, loss):
        """The loss times ``loss_scale_factor`` (the loss itself without one);
        ``apply`` divides the gradients of the scaled loss by the factor.

        Args:
            loss: a float or an array.

        Example:
            >>> from engine.training.optimizers import SGD
            >>> SGD(loss_scale_factor=128.0).scale_loss(0.5)
            64.0
        """
        return loss if self.loss_scale_factor is None else loss * self.loss_scale_factor

    @staticmethod
    def _with_gradients(grads, variables):
        """Drops the variables whose gradient is None (with Keras' warning) and
        casts each gradient to its variable's dtype."""
        kept = [(grad, variable) for grad, variable in zip(grads, variables) if grad is not None]
        if not kept:
            raise ValueError("No gradients provided for any variable.")
        missing = [variable.path for grad, variable in zip(grads, variables) if grad is None]
        if missing:
            warnings.warn(
                f"Gradients do not exist for variables {missing} when minimizing the loss. If using "
                "`model.compile()`, did you forget to provide a `loss` argument?",
                stacklevel=3,
            )
        cast = []
        for grad, variable in kept:
            grad = np.asarray(grad, dtype=variable.dtype)
            if grad.shape != variable.shape:
                raise ValueError(
                    f"The gradient for variable {variable.path!r} has shape {grad.shape} but the variable has shape "
                    f"{variable.shape}: pass one gradient per variable, shaped like it."
                )
            cast.append(grad)
        return cast, [variable for _, variable in kept]

    def _clip_gradients(self, grads):
        if self.clipnorm and self.clipnorm > 0:
            norms = [np.sqrt(np.sum(np.square(grad))) for grad in grads]
            return [grad * self.clipnorm / np.maximum(norm, self.clipnorm) for grad, norm in zip(grads, norms)]
        if self.global_clipnorm and self.global_clipnorm > 0:
            norm = float(np.sqrt(sum(np.sum(np.square(grad)) for grad in grads)))
            scale = self.global_clipnorm / max(norm, self.global_clipnorm) if math.isfinite(norm) else math.nan
            return [grad * scale for grad in grads]
        if self.clipvalue and self.clipvalue > 0:
            return [np.clip(grad, -self.clipvalue, self.clipvalue) for grad in grads]
        return grads

    def _apply_weight_decay(self, variables, learning_rate):
        if self.weight_decay is None:
            return
        for variable in variables:
            variable.value = variable.value - variable.value * self.weight_decay * learning_rate

    def _update_steps(self, grads, variables, learning_rate):
        for grad, variable in zip(grads, variables):
            self.update_step(grad, variable, learning_rate)

    def update_step(self, gradient, variable, learning_rate):
        """Updates ``variable`` (and its slots) from ``gradient``, in the variable's dtype.

        Override it (and ``_create_slots`` for per-weight state) to write an optimizer.

        Args:
            gradient: the variable's gradient (clipped).
            variable: the Variable to update.
            learning_rate: the learning rate of this step (a schedule already evaluated).

        Example:
            >>> import numpy as np
            >>> from engine.training.optimizers import Optimizer
            >>> from engine.network.variable import Variable
            >>> class SignDescent(Optimizer):
            ...     def update_step(self, gradient, variable, learning_rate):
            ...         variable.assign(variable.value - learning_rate * np.sign(gradient))
            >>> w = Variable(np.zeros(2, "float32"), name="w", path="dense/w")
            >>> SignDescent(learning_rate=0.1).apply([np.array([3.0, -0.5], "float32")], [w])
            >>> w.numpy()
            array([-0.1,  0.1], dtype=float32)
        """
        raise NotImplementedError(f"Optimizer '{type(self).__name__}' must override `update_step`.")

    def save_own_variables(self, store: dict):
        """Writes ``variables`` into ``store`` under the keys ``"0"``, ``"1"``, ... (as Keras does).

        Args:
            store: a dict to fill with arrays.

        Example:
            >>> from engine.training.optimizers import SGD
            >>> store = {}
            >>> SGD().save_own_variables(store)
            >>> sorted(store)  # iterations and learning rate
            ['0', '1']
        """
        for i, variable in enumerate(self._variables):
            store[str(i)] = np.array(variable.value)

    def load_own_variables(self, store: dict):
        """Reads the state written by ``save_own_variables`` (ours or Keras').

        Slots are made when the optimizer is built, at its first update, so one
        saved before then holds only its iteration count and learning rate.
        Loaded into a built optimizer, that state also resets every slot to its
        initial value, as the saved optimizer's first update would have made it.

        Args:
            store: the dict ``save_own_variables`` filled.

        Example:
            >>> import numpy as np
            >>> from engine.training.optimizers import Adam
            >>> from engine.network.variable import Variable
            >>> store = {}
            >>> Adam().save_own_variables(store)
            >>> resumed = Adam()
            >>> resumed.build([Variable(np.zeros(2, "float32"), name="w", path="dense/w")])
            >>> resumed.load_own_variables(store)
            >>> len(store), len(resumed.variables)
            (2, 4)
        """
        saved_unbuilt = len(store) == self._unbuilt_size
        if saved_unbuilt and self.built:
            self._make_fresh_slots()
        if not saved_unbuilt and len(store) != len(self._variables):
            hint = " Build it first with `optimizer.build(model.trainable_weights)`." if not self.built else ""
            raise ValueError(
                f"Cannot load the state of optimizer '{self.name}': it has {len(self._variables)} variables whereas "
                f"the saved optimizer has {len(store)} variables.{hint}"
            )
        for i, variable in enumerate(self._variables[:len(store)]):
            variable.assign(store[str(i)])

    def _make_fresh_slots(self):
        variables = self._trainable_variables
        del self._variables[self._unbuilt_size:]
        self.built = False
        self.build(variables)

    def get_config(self) -> dict:
        """The arguments that recreate this optimizer (without its state).

        Example:
            >>> from engine.training.optimizers import SGD
            >>> SGD(learning_rate=0.5, momentum=0.9).get_config()["momentum"]
            0.9
        """
        if isinstance(self._learning_rate, schedules.LearningRateSchedule):
            learning_rate = serialize(self._learning_rate)
        else:
            learning_rate = self.learning_rate
        return {
            "name": self.name,
            "learning_rate": learning_rate,
            "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm,
            "global_clipnorm": self.global_clipnorm,
            "clipvalue": self.clipvalue,
            "use_ema": self.use_ema,
            "ema_momentum": self.ema_momentum,
            "ema_overwrite_frequency": self.ema_overwrite_frequency,
            "loss_scale_factor": self.loss_scale_factor,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
        }

    @classmethod
    def from_config(cls, config: dict):
        """Creates an optimizer from what ``get_config`` returned.

        Args:
            config: the dict of ``__init__`` arguments.

        Example:
            >>> from engine.training.optimizers import SGD
            >>> SGD.from_config(SGD(learning_rate=0.5).get_config()).learning_rate
            0.5
        """
        return cls(**config)


def flat_pair(variable):
    """``(current, new)``: the value of ``variable`` flat, and a flat array of its size for
    the updated value, which ``variable`` takes with ``take_new``. Updates write beside the
    arrays they read, never into them, so that an array read before a step (by the
    trainer, to undo an interrupted step, or by a user) keeps its value.

    Example:
        >>> w = Variable(np.ones((2, 2), "float32"), name="w")
        >>> current, new = flat_pair(w)
        >>> np.multiply(current, 3.0, out=new)[0]
        np.float32(3.0)
    """
    return variable.value.reshape(-1), np.empty(variable.value.size, variable.value.dtype)


def take_new(pairs):
    """Gives each variable of ``{variable: (current, new)}`` its new value."""
    for variable, (_, new) in pairs.items():
        variable.value = new.reshape(variable.value.shape)


def joined_pair(variables):
    """``(current, new)`` for variables of one dtype laid end to end: their values
    joined flat (the value itself, flat, for one variable) and a flat array of the
    same size for the updated values, which the variables take with ``take_joined``.

    Example:
        >>> a, b = Variable(np.ones(2, "float32"), name="a"), Variable(np.zeros((1, 1), "float32"), name="b")
        >>> current, new = joined_pair([a, b])
        >>> current
        array([1., 1., 0.], dtype=float32)
    """
    if len(variables) == 1:
        return flat_pair(variables[0])
    current = np.concatenate([variable.value.reshape(-1) for variable in variables])
    return current, np.empty_like(current)


def take_joined(variables, new):
    """Gives each of ``variables`` its part of ``new`` (laid out as ``joined_pair`` joined them), in its shape.

    Example:
        >>> a, b = Variable(np.ones(2, "float32"), name="a"), Variable(np.zeros((1, 1), "float32"), name="b")
        >>> take_joined([a, b], np.arange(3, dtype="float32"))
        >>> a.value, b.value
        (array([0., 1.], dtype=float32), array([[2.]], dtype=float32))
    """
    start = 0
    for variable in variables:
        value = variable.value
        variable.value = new[start:start + value.size].reshape(value.shape)
        start += value.size


def update_chunks(size):
    """Slices of at most ``UPDATE_CHUNK`` elements covering ``range(size)``: an update
    runs all its operations on one slice of a weight, its gradient and its slots
    before the next, so that they stay in the cache between operations (the new
    values then cost no more memory traffic than an update in place).

    Example:
        >>> update_chunks(UPDATE_CHUNK + 1)
        [slice(0, 32768, None), slice(32768, 32769, None)]
    """
    return [slice(start, min(start + UPDATE_CHUNK, size)) for start in range(0, size, UPDATE_CHUNK)]


def scratch(size, dtype, count=1):
    """``count`` temporary arrays for one chunk of an update of ``size`` elements."""
    return np.empty((count, min(size, UPDATE_CHUNK)), dtype)


def _is_int(value, minimum):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= minimum
