"""``keras.random`` on NumPy: seeded draws, as Keras 3 names and seeds them.

Every function takes ``seed``, which picks the NumPy generator it draws from:

- an integer: a generator made from it for this one call, so the same integer
  gives the same numbers at every call (as in Keras);
- a ``SeedGenerator``: its generator, which each draw advances, so two
  generators made with the same seed give the same sequence;
- None: the global generator that ``engine.utils.set_random_seed`` seeds, the
  one initializers and Dropout draw from.

The numbers are NumPy's, not Keras': the same seed gives the same sequence here,
not the one Keras gives. ``dropout`` takes traced inputs (it multiplies them by
a drawn mask), so it trains under a ``GradientTape``.
"""

import math

import numpy as np

from engine.autodiff import untraced
from engine.utils.random_state import random_generator
from engine.network.variable import Variable


class SeedGenerator:
    """A stateful source of random draws: a layer's, or one passed as ``seed=``.

    With a ``seed``, it owns a NumPy generator seeded once, and each draw advances
    it, so two SeedGenerators with the same seed draw the same sequence. Its
    ``state`` is a non-trainable Variable ``[seed, draws]``, as Keras keeps one, so
    that a layer holding it lists it in ``variables``. Without a seed it has no
    state: every draw uses the global generator of ``engine.utils`` at draw time,
    so ``engine.utils.set_random_seed`` makes the run reproducible.

    Args:
        seed: a non-negative integer, or None for the global generator.
        name: the name (default ``seed_generator``); the state is ``<name>_state``.

    Example:
        >>> a, b = SeedGenerator(7), SeedGenerator(7)
        >>> bool((normal((3,), seed=a) == normal((3,), seed=b)).all())
        True
        >>> a.state.numpy()
        array([7, 1])
    """

    def __init__(self, seed: int | None = None, name: str | None = None):
        if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool)):
            raise ValueError(f"Expected `seed` to be an integer or None. Received: seed={seed!r}")
        if seed is not None and seed < 0:
            raise ValueError(f"Expected `seed` to be non-negative (NumPy seeds its generators so). Received: seed={seed}")
        self.name = name or "seed_generator"
        self._generator = None if seed is None else random_generator(seed)
        self.state = None if seed is None else Variable(np.array([seed, 0], "int64"), trainable=False,
                                                        name=f"{self.name}_state")

    def next(self) -> np.ndarray:
        """The state before this draw, ``[seed, draws]``, counting the draw (Keras' ``SeedGenerator.next``).

        Raises:
            ValueError: a generator without a seed (it draws from the global generator).
        """
        if self.state is None:
            raise ValueError(f"SeedGenerator {self.name!r} has no seed: it draws from the global generator. "
                             "Give it a seed for a state of its own.")
        current = self.state.numpy().copy()
        self.state.assign(current + np.array([0, 1]))
        return current

    @property
    def generator(self) -> np.random.Generator:
        """The NumPy generator the next draw uses (its own, the draw counted in ``state``; or the global one)."""
        if self.state is None:
            return random_generator()
        self.next()
        return self._generator

    def __repr__(self) -> str:
        return f"<SeedGenerator name={self.name!r}{' (global)' if self._generator is None else ''}>"


def _generator(seed) -> np.random.Generator:
    if seed is None:
        return random_generator()
    if isinstance(seed, SeedGenerator):
        return seed.generator
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.random.default_rng(seed)
    raise ValueError(f"Argument `seed` must be an integer, a `keras.random.SeedGenerator` instance or None. "
                     f"Received: seed={seed!r} (of type {type(seed).__name__}).")


def _float_dtype(dtype) -> np.dtype:
    return np.dtype("float32" if dtype is None else dtype)


def _shape(shape) -> tuple:
    return tuple(int(n) for n in shape) if np.iterable(shape) else (int(shape),)


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None) -> np.ndarray:
    """Draws from a normal distribution.

    Args:
        shape: the shape of the result.
        mean: the mean of the distribution.
        stddev: its standard deviation.
        dtype: a float dtype (default float32).
        seed: an integer, a ``SeedGenerator`` or None (the global generator).

    Example:
        >>> normal((2, 3), seed=1).shape
        (2, 3)
    """
    return _generator(seed).normal(mean, stddev, _shape(shape)).astype(_float_dtype(dtype))


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None) -> np.ndarray:
    """Draws uniformly from ``[minval, maxval)``.

    Args:
        shape: the shape of the result.
        minval: the lower bound (included).
        maxval: the upper bound (excluded).
        dtype: a float dtype (default float32).
        seed: an integer, a ``SeedGenerator`` or None (the global generator).

    Example:
        >>> float(uniform((1000,), minval=2.0, maxval=3.0, seed=1).min()) >= 2.0
        True
    """
    dtype = _float_dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"uniform draws floats; received dtype={dtype.name!r}. Use keras.random.randint for "
                         f"integers.")
    return _generator(seed).uniform(minval, maxval, _shape(shape)).astype(dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None) -> np.ndarray:
    """Draws from a normal distribution, redrawing values more than two standard deviations from the mean.

    Args:
        shape: the shape of the result.
        mean: the mean of the distribution before truncation.
        stddev: its standard deviation before truncation.
        dtype: a float dtype (default float32).
        seed: an integer, a ``SeedGenerator`` or None (the global generator).

    Example:
        >>> bool(abs(truncated_normal((1000,), seed=1)).max() <= 2.0)
        True
    """
    rng, shape = _generator(seed), _shape(shape)
    values = rng.normal(mean, stddev, math.prod(shape))
    outside = np.flatnonzero(np.abs(values - mean) > 2 * stddev)
    while outside.size:
        values[outside] = rng.normal(mean, stddev, outside.size)
        outside = outside[np.abs(values[outside] - mean) > 2 * stddev]
    return values.reshape(shape).astype(_float_dtype(dtype))


def randint(shape, minval, maxval, dtype="int32", seed=None) -> np.ndarray:
    """Draws integers uniformly from ``[minval, maxval)``.

    Args:
        shape: the shape of the result.
        minval: the lowest integer drawn.
        maxval: one more than the highest integer drawn.
        dtype: an integer dtype.
        seed: an integer, a ``SeedGenerator`` or None (the global generator).

    Example:
        >>> sorted(set(randint((100,), 0, 3, seed=1).tolist()))
        [0, 1, 2]
    """
    return _generator(seed).integers(minval, maxval, _shape(shape)).astype(dtype)


def shuffle(x, axis=0, seed=None) -> np.ndarray:
    """``x`` with its slices along ``axis`` in a random order, each slice kept whole (as TensorFlow does; Keras'
    JAX and NumPy backends shuffle each column on its own).

    Args:
        x: an array.
        axis: the axis to shuffle along.
        seed: an integer, a ``SeedGenerator`` or None (the global generator).

    Example:
        >>> shuffle(np.arange(6).reshape(3, 2), seed=3).tolist()  # rows stay whole
        [[4, 5], [2, 3], [0, 1]]
    """
    return _generator(seed).permutation(np.asarray(untraced(x)), axis=axis)


def dropout(inputs, rate, noise_shape=None, seed=None):
    """Zeroes each entry of ``inputs`` with probability ``rate`` and scales the rest by ``1 / (1 - rate)``.

    Traced inputs stay traced (the mask multiplies them), so it trains under a ``GradientTape``.

    Args:
        inputs: an array or a traced array.
        rate: the fraction to drop, in [0, 1].
        noise_shape: the shape of the mask, broadcast against ``inputs``; None
            entries take the input's size (``(batch, 1, features)`` drops whole
            features across timesteps).
        seed: an integer, a ``SeedGenerator`` or None (the global generator).

    Example:
        >>> dropout(np.ones((2, 4), "float32"), 0.5, seed=1)
        array([[0., 0., 2., 0.],
               [2., 2., 0., 2.]], dtype=float32)
    """
    if not 0 <= rate <= 1:
        raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                         f"Received: rate={rate}")
    shape = np.shape(untraced(inputs))
    if noise_shape is None:
        noise_shape = shape
    else:
        noise_shape = tuple(n if n is not None else shape[i] for i, n in enumerate(noise_shape))
    dtype = np.result_type(untraced(inputs))
    if rate == 1:
        return inputs * np.zeros(noise_shape, dtype)
    keep = 1.0 - rate
    mask = (_generator(seed).random(noise_shape) < keep).astype(dtype) / dtype.type(keep)
    return inputs * mask


def categorical(logits, num_samples, dtype="int32", seed=None) -> np.ndarray:
    """Draws class indices from the categorical distributions that ``logits`` (batch, classes) give.

    Args:
        logits: unnormalized log-probabilities, of shape (batch, classes).
        num_samples: how many indices to draw per row.
        dtype: an integer dtype.
        seed: an integer, a ``SeedGenerator`` or None (the global generator).

    Returns:
        An array of shape (batch, num_samples).

    Example:
        >>> categorical(np.array([[-1e9, 0.0], [0.0, -1e9]]), 3, seed=1).tolist()
        [[1, 1, 1], [0, 0, 0]]
    """
    logits = np.asarray(untraced(logits), "float64")
    if logits.ndim != 2:
        raise ValueError(f"`logits` should be a 2-D tensor with shape [batch_size, num_classes]. Received: "
                         f"logits.shape={logits.shape}")
    gumbel = _generator(seed).gumbel(size=(logits.shape[0], num_samples, logits.shape[1]))
    return np.argmax(logits[:, None, :] + gumbel, axis=-1).astype(dtype)  # the Gumbel-max trick


def gamma(shape, alpha, dtype=None, seed=None) -> np.ndarray:
    """Draws from a gamma distribution of shape parameter ``alpha`` (and scale 1).

    Args:
        shape: the shape of the result.
        alpha: the shape parameter (concentration), > 0.
        dtype: a float dtype (default float32).
        seed: an integer, a ``SeedGenerator`` or None (the global generator).

    Example:
        >>> gamma((2,), alpha=2.0, seed=1).dtype
        dtype('float32')
    """
    return _generator(seed).gamma(alpha, 1.0, _shape(shape)).astype(_float_dtype(dtype))


def beta(shape, alpha, beta, dtype=None, seed=None) -> np.ndarray:
    """Draws from a beta distribution with parameters ``alpha`` and ``beta``.

    Args:
        shape: the shape of the result.
        alpha: the first concentration, > 0.
        beta: the second concentration, > 0.
        dtype: a float dtype (default float32).
        seed: an integer, a ``SeedGenerator`` or None (the global generator).

    Example:
        >>> bool(((b := beta((100,), 2.0, 3.0, seed=1)) > 0).all() and (b < 1).all())
        True
    """
    return _generator(seed).beta(alpha, beta, _shape(shape)).astype(_float_dtype(dtype))


def binomial(shape, counts, probabilities, dtype=None, seed=None) -> np.ndarray:
    """Draws the number of successes in ``counts`` trials of success probability ``probabilities``.

    Args:
        shape: the shape of the result.
        counts: the number of trials (broadcast against ``shape``).
        probabilities: the probability of success of each trial.
        dtype: the result's dtype (default float32, as in Keras).
        seed: an integer, a ``SeedGenerator`` or None (the global generator).

    Example:
        >>> binomial((3,), counts=5, probabilities=1.0, seed=1).tolist()
        [5.0, 5.0, 5.0]
    """
    return _generator(seed).binomial(counts, probabilities, _shape(shape)).astype(_float_dtype(dtype))


__all__ = ["SeedGenerator", "beta", "binomial", "categorical", "dropout", "gamma", "normal", "randint", "shuffle",
           "truncated_normal", "uniform"]
