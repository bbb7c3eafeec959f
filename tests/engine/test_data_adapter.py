"""Training data: batch sizes, dtype casts, empty data and batching, targets."""

import numpy as np
import pytest

from engine import Input, Model
from engine.data.data_adapter import TrainingData, cast_input, check_batch_size, prepare
from layers import Dense


def test_batch_size_is_a_positive_int_and_none_means_the_default():
    assert check_batch_size(None) == 32
    assert check_batch_size(np.int64(4)) == 4 and type(check_batch_size(np.int64(4))) is int
    for bad in (0, -3):
        with pytest.raises(ValueError, match=rf"batch_size must be a positive integer \(or None for the default 32\); "
                                             rf"received batch_size={bad}\. Pass the number of samples per gradient"):
            check_batch_size(bad)
    for bad, kind in ((1.5, "float"), ("8", "str"), (True, "bool")):
        with pytest.raises(TypeError, match=rf"received batch_size={bad!r} of type {kind}"):
            check_batch_size(bad)


def test_numbers_are_cast_between_kinds_and_other_values_are_refused_by_name():
    ints = cast_input(np.array([[1, 2]]), "float32", "Input 0 of model 'm'")
    assert ints.dtype == np.float32
    assert cast_input(np.array([True, False]), "int32", "x").dtype == np.int32
    assert cast_input(np.ones(2, "float64"), "float16", "x").dtype == np.float16  # to the Input's dtype, as Keras
    floats = np.ones(2, "float32")
    assert cast_input(floats, "float32", "x") is floats  # no copy when the dtype already fits
    words = np.array(["a", "b"], dtype="S1")
    assert cast_input(words, "S2", "x") is words  # an input made for strings takes strings
    cases = [
        (np.ones(2, complex), r"dtype complex128\. Complex values are never cast silently"),
        (np.array([b"1"]), r"dtype \|S1\. Convert the strings to numbers first"),
        (np.array([1.0], object), r"dtype object\. Convert it to a numeric array first"),
        (np.array(["2024-01-01"], "datetime64[D]"), r"dtype datetime64\[D\]\. Pass an array of bool, int or float"),
    ]
    for value, message in cases:
        with pytest.raises(ValueError, match=r"^Input 0 of model 'm' expects float32 values \(arrays of bool, int or "
                                             r"float are cast to it\), but received an array of " + message):
            cast_input(value, "float32", "Input 0 of model 'm'")


def test_empty_data_is_one_empty_batch_and_other_data_is_cut_in_order():
    empty = TrainingData([np.zeros((0, 3))], None, [None])
    assert empty.steps(8) == 1
    assert [b.x[0].shape for b in empty.batches(8)] == [(0, 3)]
    data = TrainingData([np.arange(10)[:, None]], [np.arange(10)], [None])
    assert data.steps(4) == 3
    batches = list(data.batches(4))
    assert [len(b.x[0]) for b in batches] == [4, 4, 2]
    np.testing.assert_array_equal(np.concatenate([b.y[0] for b in batches]), np.arange(10))


def _model():
    x = Input(shape=(2,), name="x")
    return Model(x, Dense(1, name="out")(x), name="m")


def test_require_samples_names_the_call_and_the_model():
    model = _model()
    TrainingData([np.zeros((1, 2))], None, [None]).require_samples(model, "fit()")
    with pytest.raises(ValueError, match=r"^fit\(\) of model 'm' received 0 samples \(the data is empty along axis "
                                         r"0\)\. Pass at least one sample \(predict\(\) takes empty data"):
        TrainingData([np.zeros((0, 2))], None, [None]).require_samples(model, "fit()")


def test_prepare_casts_inputs_and_refuses_non_numeric_targets_by_output_name():
    data = prepare(_model(), np.ones((3, 2), "int64"), np.ones((3, 1), bool))
    assert data.x[0].dtype == np.float32 and data.y[0].dtype == bool and data.size == 3
    for target, message in ((np.array([["a"]] * 3), r"dtype <U1\. Convert the strings"),
                            (np.ones((3, 1), complex), r"dtype complex128\. Complex values"),
                            (np.ones((3, 1)).astype(object), r"dtype object\. Convert it")):
        with pytest.raises(ValueError, match=r"^Targets for output 'out' of model 'm' must be numbers \(bool, int or "
                                             r"float\), but received an array of " + message):
            prepare(_model(), np.ones((3, 2)), target)


def test_sizes_must_agree_between_inputs_and_between_inputs_and_targets():
    a, b = Input(shape=(2,), name="a"), Input(shape=(3,), name="b")
    two = Model([a, b], Dense(1)(a) + Dense(1)(b), name="two")
    with pytest.raises(ValueError, match=r"^Model 'two' received inputs with different batch sizes: \{'a': 4, 'b': 5\}"):
        prepare(two, [np.ones((4, 2)), np.ones((5, 3))])
    with pytest.raises(ValueError, match=r"Data cardinality is ambiguous: 'x' sizes: \[4, 4\]; 'y' sizes: \[3\]"):
        prepare(two, [np.ones((4, 2)), np.ones((4, 3))], np.ones((3, 1)))


def test_steps_are_positive_ints_or_none_named_in_their_errors():
    from engine.data.data_adapter import check_steps

    assert check_steps(None, "steps_per_epoch") is None and check_steps(np.int32(3), "validation_steps") == 3
    with pytest.raises(ValueError, match=r"^validation_steps must be a positive integer \(or None for one pass over "
                                         r"the data per epoch\); received validation_steps=0\. Pass the number of "
                                         r"batches per epoch, e.g\. validation_steps=100\."):
        check_steps(0, "validation_steps")
    with pytest.raises(TypeError, match=r"received steps_per_epoch=2\.5 of type float"):
        check_steps(2.5, "steps_per_epoch")


def test_batches_unpack_as_keras_unpacks_x_y_and_sample_weight():
    from engine.data.data_adapter import unpack_batch

    x, y, w = np.ones(2), np.zeros(2), np.full(2, 0.5)
    assert unpack_batch(x, "the generator") == (x, None, None)
    assert unpack_batch([x, y], "the generator")[:2] == (x, y)
    assert unpack_batch((x, y, w), "the generator")[2] is w
    with pytest.raises(ValueError, match=r"^Data is expected to be in format `x`, `\(x,\)`, `\(x, y\)`, or "
                                         r"`\(x, y, sample_weight\)`, found: a tuple of 0 items from the generator"):
        unpack_batch((), "the generator")
