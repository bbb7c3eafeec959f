"""BatchNormalization: normalize with the batch's moments in training, the moving ones in inference."""

import functools
import math

import numpy as np

from engine import InputSpec
from engine.network import initializers
from layers.convolutional._runs import over_runs, shares
from layers.normalization._base import _AffineNormalization, resolve_axes

# Elements per block of rows (1 MB of float32): the passes over a block after the first one read the cache, not
# memory, in a few large NumPy calls. Blocks of 64K elements (256 KB) took 2-12% longer on one thread (a core
# with 1 MB of L2 cache) and gained 5-12% from a second thread (their many small calls queued for the
# interpreter's lock); these took a third less time on two threads than on one, on inputs of 8 MB or more.
BLOCK_ELEMENTS = 1 << 18
# Elements per row of the widened view (see ``feature_rows``): NumPy's loops that broadcast a
# per-feature vector along a row run at full speed once rows are this long.
ROW_WIDTH = 1024
# Blocks per thread at least: a smaller share costs more to hand over than it saves.
SHARE_BLOCKS = 2


class BatchNormalization(_AffineNormalization):
    """Normalizes each feature with statistics taken over the batch (and every other axis).

    In training (``training=True``) the layer normalizes with the mean and
    biased variance of the current batch, over all axes but ``axis``, and
    updates ``moving = moving * momentum + batch_statistic * (1 - momentum)``.
    An empty batch has no statistics: it is normalized with the moving ones and
    leaves them unchanged (Keras 3 would fill them with NaN).
    In inference, and whenever the layer is frozen (``trainable = False``),
    it normalizes with the moving statistics, as Keras 3 does.

    Args:
        axis: the feature axis (an int) or axes (a list of ints).
        momentum: momentum of the moving averages.
        epsilon: added to the variance before its square root.
        center, scale: whether to learn the offset ``beta`` and the scale ``gamma``.
        beta_initializer, gamma_initializer, moving_mean_initializer,
            moving_variance_initializer: initializers of the weights.
        beta_regularizer, gamma_regularizer: penalties on the weights.
        beta_constraint, gamma_constraint: projections applied after each update.

    Weights, in order: ``gamma``, ``beta`` (trainable, when ``scale`` /
    ``center``), ``moving_mean``, ``moving_variance``, each of the shape of the
    ``axis`` sizes, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> layer = BatchNormalization(momentum=0.9)
        >>> y = layer(np.array([[0.0, 1.0], [2.0, 3.0]]), training=True)
        >>> layer.moving_mean.value
        array([0.1, 0.2], dtype=float32)
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", moving_mean_initializer="zeros",
                 moving_variance_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
                         gamma_regularizer, beta_constraint, gamma_constraint, **kwargs)
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError(
                "Received an invalid value for `momentum`, expected a number between 0 and 1. "
                f"Received: momentum={momentum!r}"
            )
        self.momentum = float(momentum)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)

    def build(self, input_shape):
        self._param_axes = resolve_axes(self.axis, input_shape, self.name)
        shape = self._param_shape(input_shape)
        self._add_scale_and_offset(shape, self.scale, self.center)
        self.moving_mean = self.add_weight(shape=shape, initializer=self.moving_mean_initializer,
                                           name="moving_mean", trainable=False)
        self.moving_variance = self.add_weight(shape=shape, initializer=self.moving_variance_initializer,
                                               name="moving_variance", trainable=False)
        self.input_spec = InputSpec(ndim=len(input_shape), axes={a: input_shape[a] for a in self._param_axes})

    def forward(self, inputs, training=True):
        """Returns the outputs and the cache ``(inputs, mean, inv_std, batch_statistics)``,
        which holds no array of the inputs' size but the inputs (PyTorch keeps the same)."""
        rows, groups = feature_rows(inputs, self._param_axes)
        if bool(training) and self.trainable and inputs.size > 0:
            mean, variance = feature_moments(rows, groups)
            self._update_moving_statistics(mean, variance)
            batch_statistics = True
        else:
            mean, variance = self.moving_mean.value.reshape(-1), self.moving_variance.value.reshape(-1)
            batch_statistics = False
        mean = mean.astype(inputs.dtype)
        inv_std = (1.0 / np.sqrt(variance.astype(inputs.dtype) + self.epsilon)).astype(inputs.dtype)
        # Keras' folded form: outputs = inputs * scale + (beta - mean * scale).
        scale = self._times_gamma(inv_std)
        shift = -mean * scale if self.beta is None else self.beta.value.reshape(-1) - mean * scale
        scale, shift = np.tile(scale, groups), np.tile(shift, groups)
        outputs = np.empty_like(rows)

        def normalize(start, stop):
            for block in row_blocks(rows[start:stop], start):
                np.multiply(rows[block], scale, out=outputs[block])
                outputs[block] += shift

        over_runs(normalize, row_shares(rows))
        return unfeature_rows(outputs, inputs.shape, self._param_axes), (inputs, mean, inv_std, batch_statistics)

    def call(self, inputs, training=False):
        if bool(training) and self.trainable and inputs.size > 0:
            return self.forward(inputs, training=training)[0]
        # Inference: the moving statistics, gamma and beta folded into one scale and one shift per
        # feature, two passes over the inputs instead of four (Keras on jax folds them the same way).
        scale = 1.0 / np.sqrt(self.moving_variance.value + self.epsilon)
        if self.gamma is not None:
            scale = scale * self.gamma.value
        shift = -self.moving_mean.value * scale
        if self.beta is not None:
            shift = shift + self.beta.value
        shape = [1] * inputs.ndim
        for axis in self._param_axes:
            shape[axis] = inputs.shape[axis]
        return inputs * scale.reshape(shape) + shift.reshape(shape)

    def backward(self, cache, grad_outputs, input_gradient=True):
        """With ``dy`` the output gradient, ``c = x - mean``, ``a = gamma * inv_std`` and
        ``n`` positions per feature: ``dbeta = sum(dy)``, ``dgamma = inv_std * sum(dy * c)``
        and, with the batch's statistics,
        ``dx = a * dy + c * (-a * inv_std**2 * sum(dy * c) / n) - a * dbeta / n``
        (with the moving ones, ``dx = a * dy``): one pass for the sums, one for ``dx``,
        left out (None) with ``input_gradient=False`` (the plan's, when no earlier
        layer reads it)."""
        inputs, mean, inv_std, batch_statistics = cache
        rows, groups = feature_rows(inputs, self._param_axes)
        grad_rows, _ = feature_rows(grad_outputs, self._param_axes)
        scale = self._times_gamma(inv_std)
        grads = {}
        if batch_statistics or self.gamma is not None or self.beta is not None:
            grad_sum, grad_dot = gradient_sums(grad_rows, rows, np.tile(mean, groups), groups)
            if self.gamma is not None:
                grads[self.gamma] = (grad_dot * inv_std).reshape(self.gamma.shape)
            if self.beta is not None:
                grads[self.beta] = grad_sum.reshape(self.beta.shape)
        if not input_gradient:
            return None, grads
        if not batch_statistics:
            grad_inputs = grad_rows * np.tile(scale, groups)
        else:
            count = len(rows) * groups
            centered_scale = -scale * np.square(inv_std) * grad_dot / count
            shift = np.tile(-scale * grad_sum / count - mean * centered_scale, groups)
            scale, centered_scale = np.tile(scale, groups), np.tile(centered_scale, groups)
            grad_inputs = np.empty_like(grad_rows)

            def input_gradient(start, stop):
                blocks = row_blocks(grad_rows[start:stop], start)
                buffer = np.empty_like(grad_rows[blocks[0]])
                for block in blocks:
                    out, term = grad_inputs[block], buffer[:block.stop - block.start]
                    np.multiply(grad_rows[block], scale, out=out)
                    np.multiply(rows[block], centered_scale, out=term)
                    out += term
                    out += shift

            over_runs(input_gradient, row_shares(grad_rows))
        return unfeature_rows(grad_inputs, inputs.shape, self._param_axes), grads

    def flops(self, input_shapes, output_shapes):
        """At inference, 2 per element: the moving statistics, gamma and beta fold into one
        scale and one shift per channel."""
        return 2 * math.prod(input_shapes[0])

    def _times_gamma(self, inv_std):
        return inv_std if self.gamma is None else inv_std * self.gamma.value.reshape(-1)

    def _update_moving_statistics(self, mean, variance):
        for moving, batch in ((self.moving_mean, mean), (self.moving_variance, variance)):
            moving.assign(moving.value * self.momentum + batch.reshape(moving.shape) * (1.0 - self.momentum))

    def get_config(self):
        config = super().get_config()
        config.update(
            momentum=self.momentum,
            moving_mean_initializer=initializers.serialize(self.moving_mean_initializer),
            moving_variance_initializer=initializers.serialize(self.moving_variance_initializer),
        )
        return config


def feature_rows(x, feature_axes):
    """``x`` as a 2-D array ``(rows, groups * features)`` whose rows hold the features of
    ``groups`` consecutive positions, with ``groups``: a view when the feature axes are
    the last ones (channels-last), else a copy. Wide rows keep NumPy's loops long when
    features are few; a per-feature vector is then tiled ``groups`` times.

    Args:
        x: an array.
        feature_axes: the feature axes, non-negative and sorted.

    >>> rows, groups = feature_rows(np.zeros((2, 3, 3, 16)), (3,))
    >>> rows.shape, groups
    ((1, 288), 18)
    """
    features = len(feature_axes)
    moved = np.moveaxis(x, feature_axes, range(x.ndim - features, x.ndim))
    width = math.prod(moved.shape[x.ndim - features:])
    positions = x.size // width
    groups = _groups(positions, width)
    return moved.reshape(positions // groups, groups * width), groups


@functools.lru_cache(maxsize=256)
def _groups(positions, width):
    """The largest divisor of ``positions`` that keeps ``groups * width`` within ``ROW_WIDTH``."""
    return next(d for d in range(max(1, ROW_WIDTH // width), 0, -1) if positions % d == 0)


def unfeature_rows(rows, shape, feature_axes):
    """Inverse of ``feature_rows`` for an array of ``shape``.

    >>> x = np.arange(24.0).reshape(2, 3, 4)
    >>> bool((unfeature_rows(feature_rows(x, (1,))[0], x.shape, (1,)) == x).all())
    True
    """
    moved = [n for a, n in enumerate(shape) if a not in feature_axes] + [shape[a] for a in feature_axes]
    features = len(feature_axes)
    return np.moveaxis(rows.reshape(moved), range(len(shape) - features, len(shape)), feature_axes)


def row_blocks(rows, offset=0):
    """Slices of consecutive rows of a 2-D array, about ``BLOCK_ELEMENTS`` elements each,
    shifted by ``offset`` (``rows`` being a share of a larger array starting there).

    >>> row_blocks(np.zeros((5, BLOCK_ELEMENTS // 2)))
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    step = max(1, BLOCK_ELEMENTS // max(rows.shape[1], 1))
    return [slice(offset + start, offset + min(start + step, len(rows))) for start in range(0, len(rows), step)]


def row_shares(rows):
    """``shares`` of the rows for ``over_runs``: a thread's share is at least
    ``SHARE_BLOCKS`` blocks, below which handing it over costs more than it saves."""
    return shares(len(rows), SHARE_BLOCKS * max(1, BLOCK_ELEMENTS // max(rows.shape[1], 1)))


def feature_moments(rows, groups):
    """The mean and biased variance of each feature of ``feature_rows``' ``rows``, reading
    memory once: per block the mean of each column (a product with a ones vector) and
    its sum of squared deviations, merged over blocks, over the threads' shares
    (``over_runs``) and then over the ``groups`` of each feature with Chan's formula,
    in float64 (per feature only).

    >>> feature_moments(np.array([[1.0, 0.0, 3.0, 0.0]], "float32"), 2)
    (array([2., 0.]), array([1., 0.]))
    """
    count, mean, squares = functools.reduce(
        _merged, over_runs(lambda start, stop: _column_moments(rows[start:stop]), row_shares(rows)))
    means = mean.reshape(groups, -1)
    feature_mean = means.mean(axis=0)
    squares = squares.reshape(groups, -1).sum(axis=0) + count * np.square(means - feature_mean).sum(axis=0)
    return feature_mean, squares / (count * groups)


def _column_moments(rows):
    """``(count, mean, sum of squared deviations)`` of each column of ``rows``, block by block."""
    blocks = row_blocks(rows)
    ones = np.ones(blocks[0].stop, rows.dtype)
    buffer = np.empty_like(rows[blocks[0]])
    moments = (0, np.zeros(rows.shape[1]), np.zeros(rows.shape[1]))
    for block in blocks:
        size = block.stop - block.start
        block_mean = ones[:size] @ rows[block] / size
        centered = np.subtract(rows[block], block_mean, out=buffer[:size])
        np.square(centered, out=centered)
        moments = _merged(moments, (size, block_mean, ones[:size] @ centered))
    return moments


def _merged(first, second):
    """Chan's formula: the ``(count, mean, squares)`` of two parts' union."""
    (count, mean, squares), (size, part_mean, part_squares) = first, second
    delta = part_mean - mean
    total = count + size
    return total, mean + delta * (size / total), squares + part_squares + np.square(delta) * (count * size / total)


def gradient_sums(grad_rows, rows, tiled_mean, groups):
    """Per feature, ``sum(grad)`` and ``sum(grad * (x - mean))`` over the positions, in
    one pass over ``feature_rows``' ``grad_rows`` and ``rows``, the threads' shares added up.

    >>> gradient_sums(np.ones((2, 1), "float32"), np.array([[1.0], [5.0]], "float32"), np.array([3.0], "float32"), 1)
    (array([2.], dtype=float32), array([0.], dtype=float32))
    """
    def share_sums(start, stop):
        blocks = row_blocks(rows[start:stop], start)
        ones = np.ones(blocks[0].stop - blocks[0].start if blocks else 0, rows.dtype)
        buffer = np.empty_like(rows[blocks[0]]) if blocks else None
        grad_sum, grad_dot = np.zeros(rows.shape[1], rows.dtype), np.zeros(rows.shape[1], rows.dtype)
        for block in blocks:
            size = block.stop - block.start
            centered = np.subtract(rows[block], tiled_mean, out=buffer[:size])
            centered *= grad_rows[block]
            grad_sum += ones[:size] @ grad_rows[block]
            grad_dot += ones[:size] @ centered
        return grad_sum, grad_dot

    parts = over_runs(share_sums, row_shares(rows))
    grad_sum, grad_dot = sum(part[0] for part in parts), sum(part[1] for part in parts)
    return grad_sum.reshape(groups, -1).sum(axis=0), grad_dot.reshape(groups, -1).sum(axis=0)
