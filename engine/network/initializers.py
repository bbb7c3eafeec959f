"""Weight initializers, by name or as objects, with Keras 3 names and formulas."""

import functools
import math

import numpy as np

from engine.files.serialization import deserialize
from engine.files.serialization import serialize as _serialize
from engine.utils import random_generator


class Initializer:
    """Base class: ``initializer(shape, dtype)`` returns a new array."""

    def __call__(self, shape, dtype="float32"):
        raise NotImplementedError

    def cost(self, shape, dtype="float32"):
        """What drawing a weight of ``shape`` and ``dtype`` costs beside the
        weight itself: ``(bytes of temporary arrays at their peak, arithmetic
        operations)``, which a load charges before drawing (``engine.files.load_limits``).

        Example:
            >>> Orthogonal().cost((512, 512))
            (8388608, 536870912)
        """
        return 0, math.prod(shape)

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Zeros(Initializer):
    def __call__(self, shape, dtype="float32"):
        return np.zeros(shape, dtype=dtype)


class Ones(Initializer):
    def __call__(self, shape, dtype="float32"):
        return np.ones(shape, dtype=dtype)


class Constant(Initializer):
    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype="float32"):
        return np.full(shape, self.value, dtype=dtype)

    def get_config(self):
        return {"value": self.value}


class RandomInitializer(Initializer):
    """Base class of the initializers that draw: ``seed`` picks the generator
    (``engine.utils.random_generator``), ``sample`` draws from a given one."""

    seed = None

    def __call__(self, shape, dtype="float32"):
        return self.sample(random_generator(self.seed), shape, dtype)

    def sample(self, rng, shape, dtype="float32"):
        """A new array of ``shape`` and ``dtype`` drawn from the NumPy generator ``rng``.

        Example:
            >>> import numpy as np
            >>> a = RandomNormal().sample(np.random.default_rng(0), (2,))
            >>> bool((a == RandomNormal().sample(np.random.default_rng(0), (2,))).all())
            True
        """
        raise NotImplementedError


class RandomNormal(RandomInitializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def sample(self, rng, shape, dtype="float32"):
        return _normal(rng, self.mean, self.stddev, shape, dtype)

    def cost(self, shape, dtype="float32"):
        return _sampling_bytes(shape, dtype), math.prod(shape)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(RandomInitializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def sample(self, rng, shape, dtype="float32"):
        return _uniform(rng, self.minval, self.maxval, shape, dtype)

    def cost(self, shape, dtype="float32"):
        return _sampling_bytes(shape, dtype), math.prod(shape)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


def compute_fans(shape):
    """Returns (fan_in, fan_out) as Keras does: kernels are (..., in, out)."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


class VarianceScaling(RandomInitializer):
    """Samples with variance ``scale / n``, n being fan_in, fan_out or their mean.

    ``distribution`` is ``"truncated_normal"`` (cut at two standard deviations),
    ``"untruncated_normal"`` or ``"uniform"``.
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if scale <= 0:
            raise ValueError(f"VarianceScaling expects scale > 0, received scale={scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(
                f"VarianceScaling expects mode in ('fan_in', 'fan_out', 'fan_avg'), received {mode!r}."
            )
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(
                "VarianceScaling expects distribution in ('truncated_normal', "
                f"'untruncated_normal', 'uniform'), received {distribution!r}."
            )
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def sample(self, rng, shape, dtype="float32"):
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * variance)
            return _uniform(rng, -limit, limit, shape, dtype)
        if self.distribution == "untruncated_normal":
            return _normal(rng, 0.0, math.sqrt(variance), shape, dtype)
        # Standard deviation of a unit normal truncated to [-2, 2].
        stddev = math.sqrt(variance) / 0.87962566103423978
        return _truncated_normal(rng, stddev, shape, dtype)

    def cost(self, shape, dtype="float32"):
        """The truncated normal also keeps the indices of the values it redraws:
        4.6% of them, 8 bytes each, held twice while they are gathered."""
        size = math.prod(shape)
        if self.distribution != "truncated_normal":
            return _sampling_bytes(shape, dtype), size
        return _sampling_bytes(shape, dtype) + size + _CHUNK * 9, 2 * size

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed}


def _sampling_dtype(dtype):
    """The dtype to draw in: float64 when asked for, else float32, which the generator
    draws directly (half the memory and time of drawing float64 and casting)."""
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _sampling_bytes(shape, dtype):
    """The bytes of the draw when it is cast to another dtype afterwards (float16, integers), else 0."""
    draw = np.dtype(_sampling_dtype(dtype))
    return 0 if draw == np.dtype(dtype) else math.prod(shape) * draw.itemsize


def _uniform(rng, low, high, shape, dtype):
    values = rng.random(shape, dtype=_sampling_dtype(dtype))
    values *= high - low
    values += low
    return values.astype(dtype, copy=False)


def _normal(rng, mean, stddev, shape, dtype):
    values = rng.standard_normal(shape, dtype=_sampling_dtype(dtype))
    values *= stddev
    values += mean
    return values.astype(dtype, copy=False)


def _truncated_normal(rng, stddev, shape, dtype):
    """Unit normals redrawn until they fall in [-2, 2], times ``stddev``."""
    draw = _sampling_dtype(dtype)
    values = rng.standard_normal(shape, dtype=draw)
    flat = values.reshape(-1)
    outside = _outside(flat)
    while outside.size:  # only the redrawn values are checked again
        flat[outside] = rng.standard_normal(outside.size, dtype=draw)
        outside = outside[np.abs(flat[outside]) > 2.0]
    values *= stddev
    return values.astype(dtype, copy=False)


# Values checked at a time for falling outside [-2, 2]: the check's temporaries stay this small.
_CHUNK = 2**16


def _outside(flat):
    """The indices of the values of ``flat`` outside [-2, 2], in order."""
    found = [np.flatnonzero(np.abs(flat[start:start + _CHUNK]) > 2.0) + start for start in range(0, flat.size, _CHUNK)]
    return np.concatenate(found) if found else np.empty(0, np.intp)


class GlorotUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class GlorotNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class HeUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class HeNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class LecunNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class Orthogonal(RandomInitializer):
    """An orthogonal matrix (rows or columns orthonormal), scaled by ``gain``."""

    def __init__(self, gain=1.0, seed=None):
        self.gain, self.seed = gain, seed

    def sample(self, rng, shape, dtype="float32"):
        if len(shape) < 2:
            raise ValueError(
                f"Orthogonal initializer expects a shape of at least 2 dimensions, received {tuple(shape)}."
            )
        rows, cols = math.prod(shape[:-1]), shape[-1]
        flat = rng.standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(flat)
        del flat
        q *= np.sign(np.diag(r))
        q *= self.gain
        q = q.astype(dtype)
        return (q.T if rows < cols else q).reshape(shape)

    def cost(self, shape, dtype="float32"):
        """A float64 draw of the matrix, two copies of it in the QR factorization
        and the triangle R; about 4 m n^2 operations for an m x n matrix (m >= n)."""
        if len(shape) < 2:
            return 0, 0  # drawing raises
        rows, cols = math.prod(shape[:-1]), shape[-1]
        long, short = max(rows, cols), min(rows, cols)
        return 8 * (3 * long * short + short * short), 4 * long * short * short

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


_CLASSES = {
    cls.__name__: cls
    for cls in (Zeros, Ones, Constant, RandomNormal, RandomUniform, VarianceScaling, GlorotUniform,
                GlorotNormal, HeUniform, HeNormal, LecunNormal, Orthogonal)
}
_ALIASES = {
    "zeros": "Zeros",
    "ones": "Ones",
    "constant": "Constant",
    "random_normal": "RandomNormal",
    "random_uniform": "RandomUniform",
    "uniform": "RandomUniform",
    "normal": "RandomNormal",
    "variance_scaling": "VarianceScaling",
    "glorot_uniform": "GlorotUniform",
    "glorot_normal": "GlorotNormal",
    "he_uniform": "HeUniform",
    "he_normal": "HeNormal",
    "lecun_normal": "LecunNormal",
    "orthogonal": "Orthogonal",
}


def get(identifier):
    """Returns an initializer from a name, a config dict, an Initializer, a callable or None.

    Initializers hold only their arguments, so one instance per name is shared."""
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str):
        return _by_name(identifier)
    return deserialize("initializer", identifier, _CLASSES, _ALIASES)


@functools.lru_cache(maxsize=None)
def _by_name(name):
    return deserialize("initializer", name, _CLASSES, _ALIASES)


def serialize(initializer):
    """Returns ``initializer`` as a JSON-friendly ``{"class_name", "config"}`` dict."""
    if type(initializer) not in _CLASSES.values():
        raise ValueError(f"Initializer {initializer!r} is not a built-in initializer and cannot be serialized.")
    return _serialize(initializer)
