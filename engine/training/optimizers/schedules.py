"""Learning-rate schedules: the learning rate as a function of the optimizer step."""

import bisect
import math

from engine.files.serialization import deserialize


class LearningRateSchedule:
    """``schedule(step)`` returns the learning rate (a float) at optimizer step ``step``.

    Pass a schedule as an optimizer's ``learning_rate``: the optimizer calls it
    with its ``iterations`` count before each update. Subclasses define
    ``__call__(step)`` and ``get_config()``.

    Example:
        >>> class Halving(LearningRateSchedule):
        ...     def __call__(self, step):
        ...         return 1.0 / 2 ** step
        ...     def get_config(self):
        ...         return {}
        >>> Halving()(3)
        0.125
    """

    def __call__(self, step):
        """The learning rate at a step: override it in every schedule.

        Args:
            step: the optimizer's update count (0 before the first update).

        Returns:
            The learning rate, a float.

        Example:
            >>> ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)(10)
            0.05
        """
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `__call__(self, step)`."
        )

    def get_config(self):
        """The arguments that recreate this schedule: override it to save the schedule.

        Example:
            >>> PiecewiseConstantDecay([10], [1.0, 0.5]).get_config()["values"]
            [1.0, 0.5]
        """
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `get_config()` in order to be serializable."
        )

    @classmethod
    def from_config(cls, config):
        """Creates a schedule from what ``get_config`` returned.

        Args:
            config: the dict of ``__init__`` arguments.

        Example:
            >>> CosineDecay.from_config(CosineDecay(0.1, decay_steps=100).get_config())(100)
            0.0
        """
        return cls(**config)


def _check_positive_steps(schedule, decay_steps):
    if decay_steps <= 0:
        raise ValueError(
            f"{type(schedule).__name__}: argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}"
        )


class ExponentialDecay(LearningRateSchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``; with
    ``staircase=True`` the exponent is floored, so the rate drops in steps.

    Args:
        initial_learning_rate: the rate at step 0.
        decay_steps: steps over which the rate is multiplied by ``decay_rate`` (> 0).
        decay_rate: the factor per ``decay_steps``.
        staircase: floor ``step / decay_steps``.
        name: the schedule's name.

    Raises:
        ValueError: ``decay_steps <= 0``.

    Example:
        >>> ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)(20)
        0.025
    """

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="ExponentialDecay"):
        _check_positive_steps(self, decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step):
        exponent = step / self.decay_steps
        if self.staircase:
            exponent = math.floor(exponent)
        return float(self.initial_learning_rate * self.decay_rate**exponent)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[1]`` while
    ``step <= boundaries[1]``, ..., and ``values[-1]`` after the last boundary.

    Args:
        boundaries: increasing step numbers.
        values: the rates, one more than ``boundaries``.
        name: the schedule's name.

    Raises:
        ValueError: lengths that do not fit, or boundaries out of order.

    Example:
        >>> schedule = PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
        >>> schedule(10), schedule(11), schedule(25)
        (1.0, 0.5, 0.1)
    """

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. "
                f"Received: boundaries={boundaries} of length {len(boundaries)}, "
                f"and values={values} of length {len(values)}."
            )
        if list(boundaries) != sorted(boundaries):
            raise ValueError(f"PiecewiseConstantDecay expects increasing boundaries. Received: boundaries={boundaries}")
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step):
        return float(self.values[bisect.bisect_left(self.boundaries, step)])

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Half a cosine from the start rate down to ``alpha`` times it over
    ``decay_steps``, then flat. With ``warmup_target``, the rate first rises
    linearly from ``initial_learning_rate`` to ``warmup_target`` over
    ``warmup_steps`` and the cosine starts from ``warmup_target``.

    Args:
        initial_learning_rate: the rate at step 0.
        decay_steps: steps the cosine takes (> 0).
        alpha: the final rate, as a fraction of the start rate.
        name: the schedule's name.
        warmup_target: the rate the warmup rises to, or None for no warmup.
        warmup_steps: steps of the warmup.

    Raises:
        ValueError: ``decay_steps <= 0``.

    Example:
        >>> CosineDecay(0.1, decay_steps=100)(50)
        0.05
    """

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay", warmup_target=None,
                 warmup_steps=0):
        _check_positive_steps(self, decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        if self.warmup_target is None:
            return self._decay(min(step, self.decay_steps), self.initial_learning_rate)
        step = min(step, self.decay_steps + self.warmup_steps)
        if step < self.warmup_steps:
            rise = self.warmup_target - self.initial_learning_rate
            return float(self.initial_learning_rate + rise * step / self.warmup_steps)
        return self._decay(step - self.warmup_steps, self.warmup_target)

    def _decay(self, step, start):
        cosine = 0.5 * (1.0 + math.cos(math.pi * step / self.decay_steps))
        return float(start * ((1 - self.alpha) * cosine + self.alpha))

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "alpha": self.alpha,
            "name": self.name,
            "warmup_target": self.warmup_target,
            "warmup_steps": self.warmup_steps,
        }


_CLASSES = {cls.__name__: cls for cls in (ExponentialDecay, PiecewiseConstantDecay, CosineDecay)}


def get(identifier):
    """Returns a schedule from a ``{"class_name", "config"}`` dict or the schedule itself.

    Args:
        identifier: the dict (as ``engine.training.optimizers.serialize`` writes it), or a schedule.

    Returns:
        The schedule.

    Example:
        >>> get({"class_name": "ExponentialDecay",
        ...      "config": {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.5}})(10)
        0.05
    """
    if isinstance(identifier, LearningRateSchedule):
        return identifier
    return deserialize("learning rate schedule", identifier, _CLASSES)
