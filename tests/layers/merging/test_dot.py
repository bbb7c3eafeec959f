import numpy as np
import pytest

from engine import Input
from engine.network.gradient_check import gradient_check
from layers.merging import Dot, dot
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

# (shapes, axes): vectors, matrices on either axis, unequal ranks, pairs, negative axes, rank 4.
CASES = [
    ([(3, 4), (3, 4)], 1),
    ([(2, 3, 4), (2, 5, 4)], 2),
    ([(2, 3, 4), (2, 5, 4)], -1),
    ([(2, 3, 4), (2, 3, 5)], 1),
    ([(2, 3, 4), (2, 4, 5)], (2, 1)),
    ([(2, 4), (2, 3, 4)], (1, 2)),
    ([(2, 3, 4), (2, 4)], (-1, -1)),
    ([(2, 2, 3, 4), (2, 4, 3, 5)], (3, 1)),
]


def _inputs(shapes, seed=0, dtype="float32"):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(dtype) for shape in shapes]


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("shapes, axes", CASES)
def test_forward_matches_keras(shapes, axes, normalize):
    out = assert_matches_keras(Dot(axes, normalize=normalize), keras.layers.Dot(axes, normalize=normalize),
                               _inputs(shapes))
    assert out[0].dtype == np.float32


def test_normalize_gives_cosine_similarity_and_keeps_zero_vectors_finite():
    x = np.array([[3.0, 4.0], [0.0, 0.0]], "float32")
    y = np.array([[4.0, 3.0], [1.0, 1.0]], "float32")
    np.testing.assert_allclose(Dot(1, normalize=True)([x, y]), [[24 / 25], [0.0]], rtol=1e-6)
    assert_matches_keras(Dot(1, normalize=True), keras.layers.Dot(1, normalize=True), [x, y])


def test_functional_helper():
    x = _inputs([(2, 3, 4), (2, 5, 4)])
    np.testing.assert_allclose(dot(x, axes=2), np.asarray(keras.layers.dot(x, axes=2)), rtol=1e-5, atol=1e-6)
    y = dot([Input(shape=(3, 4)), Input(shape=(5, 4))], axes=-1, normalize=True, name="cosine")
    assert y.shape == (None, 3, 5)


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("shapes, axes", CASES)
def test_gradients(shapes, axes, normalize):
    assert_gradients(Dot(axes, normalize=normalize), _inputs(shapes, seed=1, dtype="float64"))


def test_normalize_gradient_where_the_norm_is_clamped():
    # Norms below epsilon=1e-7 are clamped, so the map is x / 1e-7 there; steps stay in that region.
    x, y = _inputs([(2, 4), (2, 4)], seed=2, dtype="float64")
    report = gradient_check(Dot(1, normalize=True), [x * 1e-10, y], epsilon=1e-13)
    assert report.errors["input 0"] < 1e-6, report


def test_config_round_trip_and_symbolic_shape():
    assert assert_config_round_trip(Dot(axes=(2, 1), normalize=True, name="d")).axes == (2, 1)
    assert assert_config_round_trip(Dot(axes=-1)).axes == -1
    assert_symbolic_shape_matches_eager(Dot((2, 1)), _inputs([(2, 3, 4), (2, 4, 5)]))
    assert_symbolic_shape_matches_eager(Dot(1), _inputs([(2, 4), (2, 4)]))
    assert Dot(1)([Input(shape=(None,)), Input(shape=(4, 2))]).shape == (None, 2)


def test_bad_config():
    with pytest.raises(TypeError, match="it should be a list or an int. Received: axes=1.0"):
        Dot(1.0)
    with pytest.raises(ValueError, match=r"it should contain two elements. Received: axes=\(1, 2, 3\)"):
        Dot((1, 2, 3))
    with pytest.raises(ValueError, match="list elements should be integers"):
        Dot((1, "2"))


def test_bad_inputs():
    x, y = _inputs([(2, 3, 4), (2, 5, 4)])
    with pytest.raises(ValueError, match="Cannot perform batch_dot over axis 0"):
        Dot(0)([x, y])
    with pytest.raises(ValueError, match="Cannot perform batch_dot over axis 0"):
        Dot(-3)([x, y])
    with pytest.raises(ValueError, match=r"Incompatible input shapes: axis values 3 \(at axis 1\) != 5"):
        Dot(1)([x, y])
    with pytest.raises(ValueError, match=r"received axes=\(3, 2\), out of range"):
        Dot((3, 2))([x, y])
    with pytest.raises(ValueError, match="different batch sizes"):
        Dot(2)([x, y[:1]])
    with pytest.raises(ValueError, match="rank < 2"):
        Dot(1)([np.ones(3, "float32"), np.ones(3, "float32")])
    with pytest.raises(ValueError, match="Incompatible input shapes"):
        Dot(-1)([Input(shape=(3,)), Input(shape=(4,))])
    with pytest.raises(ValueError, match="expects at most 2 inputs"):
        Dot(2)([x, y, y])
