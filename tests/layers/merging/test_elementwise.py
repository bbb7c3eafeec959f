import numpy as np
import pytest

from engine import Input, KerasTensor, tree
from engine.network.gradient_check import gradient_check
from layers.merging import (Add, Average, Maximum, Minimum, Multiply, Subtract, add, average, maximum,
                            minimum, multiply, subtract)
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

LAYERS = [(Add, "Add"), (Subtract, "Subtract"), (Multiply, "Multiply"), (Average, "Average"),
          (Maximum, "Maximum"), (Minimum, "Minimum")]
HELPERS = [(add, "add"), (subtract, "subtract"), (multiply, "multiply"), (average, "average"),
           (maximum, "maximum"), (minimum, "minimum")]
# Same shapes, three inputs, and Keras' broadcasting: lower ranks gain axes after the batch axis.
SHAPES = [[(3, 4), (3, 4)], [(2, 3, 4)] * 3, [(2, 4), (2, 3, 4)], [(2, 1, 4), (2, 3, 1)], [(2,), (2, 3)]]


def _inputs(shapes, seed=0, dtype="float32"):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(dtype) for shape in shapes]


def _cases():
    for cls, keras_name in LAYERS:
        for shapes in SHAPES:
            if cls is Subtract and len(shapes) != 2:
                continue
            yield cls, keras_name, shapes


@pytest.mark.parametrize("cls, keras_name, shapes", list(_cases()))
def test_forward_matches_keras(cls, keras_name, shapes):
    out = assert_matches_keras(cls(), getattr(keras.layers, keras_name)(), _inputs(shapes))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("helper, keras_name", HELPERS)
def test_functional_helpers_build_the_layer(helper, keras_name):
    x = _inputs([(2, 3), (2, 3)])
    expected = np.asarray(getattr(keras.layers, keras_name)(x))
    np.testing.assert_allclose(helper(x), expected, rtol=1e-6, atol=1e-6)
    y = helper([Input(shape=(3,)), Input(shape=(3,))], name="merged")
    assert isinstance(y, KerasTensor) and y.shape == (None, 3)


@pytest.mark.parametrize("cls, keras_name, shapes", list(_cases()))
def test_gradients(cls, keras_name, shapes):
    # Continuous normals have no ties, so Maximum/Minimum stay away from their kinks.
    assert_gradients(cls(), [x.astype("float64") for x in _inputs(shapes, seed=1)])


# Ties (the last column) go to the first input.
@pytest.mark.parametrize("cls, expected", [(Maximum, [[10.0, 0.0, 30.0], [0.0, 20.0, 0.0]]),
                                           (Minimum, [[0.0, 20.0, 30.0], [10.0, 0.0, 0.0]])])
def test_extremum_gradient_goes_to_the_winning_input(cls, expected):
    layer = cls()
    x = [np.array([[3.0, 1.0, 2.0]]), np.array([[1.0, 3.0, 2.0]])]
    _, cache = layer.forward(x)
    grads, _ = layer.backward(cache, np.array([[10.0, 20.0, 30.0]]))
    np.testing.assert_array_equal(np.concatenate(grads), expected)


def test_multiply_gradient_with_zero_input_and_broadcasting():
    x = [np.array([[0.0, 2.0]]), np.array([[3.0], [4.0]]).reshape(1, 2, 1), np.array([[5.0, -1.0]])]
    report = gradient_check(Multiply(), x)
    assert report.max_error < 1e-6, report


@pytest.mark.parametrize("cls, keras_name", LAYERS)
def test_config_round_trip_and_symbolic_shape(cls, keras_name):
    layer = cls(name="merge", dtype="float64")
    assert_config_round_trip(layer)
    assert_symbolic_shape_matches_eager(cls(), _inputs([(2, 4), (2, 3, 4)]))


def test_symbolic_shape_broadcasts_unknown_sizes():
    y = Add()([Input(shape=(None, 3)), Input(shape=(4, 1)), Input(shape=(3,))])
    assert y.shape == (None, 4, 3)
    assert Add().compute_output_shape([(5, 1, 3), (None, 2, 1)]) == (5, 2, 3)


def test_bad_inputs():
    x = _inputs([(2, 3)])[0]
    with pytest.raises(ValueError, match="expects at least 2 inputs, but it received 1 input"):
        Add()([x])
    with pytest.raises(ValueError, match="expects at most 2 inputs, but it received 3 inputs"):
        Subtract()([x, x, x])
    with pytest.raises(ValueError, match=r"incompatible shapes. Received shapes \[\(2, 3\), \(2, 4\)\]"):
        Multiply()([x, np.ones((2, 4), "float32")])
    with pytest.raises(ValueError, match="Cannot merge tensors with different batch sizes"):
        Average()([x, np.ones((1, 3), "float32")])
    with pytest.raises(ValueError, match="Inputs have incompatible shapes"):
        Maximum()([Input(shape=(3, 2)), Input(shape=(4, 2))])


@pytest.mark.parametrize("masks", [
    [np.array([[1, 1, 0, 0], [1, 0, 1, 0]], bool), np.array([[1, 0, 1, 0], [0, 0, 0, 1]], bool)],
    [np.array([[1, 1, 0, 0], [1, 0, 1, 0]], bool), None],
])
def test_multiply_counts_masked_steps_as_one_as_keras_with_checked_gradients(masks):
    from keras.src.backend.common.masking import set_keras_mask

    a, b = _inputs([(2, 4, 3), (2, 4, 3)], seed=3)
    keras_inputs = []
    for x, mask in zip((a, b), masks):
        tensor = keras.ops.convert_to_tensor(x)
        if mask is not None:  # Keras reads the masks attached to its tensors
            set_keras_mask(tensor, keras.ops.convert_to_tensor(mask))
        keras_inputs.append(tensor)
    expected = np.asarray(keras.layers.Multiply()(keras_inputs))
    np.testing.assert_allclose(Multiply()([a, b], mask=masks), expected, rtol=1e-6)
    assert not np.allclose(Multiply()([a, b]), expected)
    report = gradient_check(Multiply(), [a.astype("float64"), b.astype("float64")], call_kwargs={"mask": masks})
    assert report.max_error < 1e-6, str(report)


@pytest.mark.parametrize("cls, keeps_values", [(Add, False), (Subtract, False), (Average, False), (Multiply, True),
                                               (Maximum, True)])
def test_sums_keep_only_their_inputs_shapes_for_backward(cls, keeps_values):
    a, b = _inputs([(2, 3, 4), (2, 1, 4)])
    _, cache = cls().forward([a, b])
    arrays = [x for x in tree.flatten(cache) if isinstance(x, np.ndarray)]
    bases = {id(x.base if x.base is not None else x): x.base if x.base is not None else x for x in arrays}
    assert (sum(base.nbytes for base in bases.values()) >= a.nbytes) is keeps_values
    if not keeps_values:
        assert [x.shape for x in cache[0]] == [a.shape, b.shape] and cache[1] is None
