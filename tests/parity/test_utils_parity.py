"""The helpers Keras examples call, compared with Keras 3: to_categorical,
normalize, pad_sequences, split_dataset, the lowercase regularizer names, and
Variable's constructor and assign_add / assign_sub."""

import random

import keras
import numpy as np
import pytest
from keras.src.utils import dataset_utils

import engine.utils
from engine import Variable
from engine.network import initializers
from engine.training import regularizers
from engine.utils import clear_session, set_random_seed  # the names that predate the helpers still import

RNG = np.random.default_rng(0)


# ----------------------------------------------------------------- to_categorical
@pytest.mark.parametrize("labels, num_classes", [
    ([0, 1, 2, 3], 4), ([0, 2, 1], None), (np.array([[1], [0], [2]]), None), (np.array([[1, 0], [2, 2]]), 3),
    (np.array([1.0, 0.0]), 2), (np.array([[0, 1], [1, 0]])[..., None], 2), ([], 3),
])
def test_to_categorical_matches_keras(labels, num_classes):
    expected = keras.utils.to_categorical(labels, num_classes)
    received = engine.utils.to_categorical(labels, num_classes)
    assert received.dtype == expected.dtype and received.shape == expected.shape
    np.testing.assert_array_equal(received, expected)


def test_to_categorical_refuses_labels_out_of_range_and_fractions():
    with pytest.raises(IndexError):
        keras.utils.to_categorical([0, 3], 3)
    with pytest.raises(IndexError, match=r"to_categorical received label 3, outside the range \[0, 3\)"):
        engine.utils.to_categorical([0, 3], 3)
    # Keras wraps -1 to the last class (NumPy indexing); a negative class is refused here.
    with pytest.raises(IndexError, match="received label -1"):
        engine.utils.to_categorical([0, -1], 3)
    with pytest.raises(ValueError, match="expects integer class labels, received an array of dtype float64"):
        engine.utils.to_categorical([0.5, 1.0])


# ---------------------------------------------------------------------- normalize
@pytest.mark.parametrize("order", [1, 2, np.inf])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normalize_matches_keras(order, dtype):
    x = RNG.normal(size=(4, 3)).astype(dtype)
    x[1] = 0  # a zero row stays zero
    expected = keras.utils.normalize(x, axis=-1, order=order)
    received = engine.utils.normalize(x, axis=-1, order=order)
    assert received.dtype == expected.dtype
    np.testing.assert_allclose(received, expected, rtol=1e-6)


def test_normalize_along_another_axis():
    x = RNG.normal(size=(4, 3))
    square = RNG.normal(size=(3, 3))
    # Keras' NumPy path normalizes along axis 0 but divides along the last axis; the square case shows it.
    np.testing.assert_allclose(np.linalg.norm(engine.utils.normalize(x, axis=0), axis=0), np.ones(3))
    expected = square / np.linalg.norm(square, axis=0, keepdims=True)
    np.testing.assert_allclose(engine.utils.normalize(square, axis=0), expected)


# ------------------------------------------------------------------ pad_sequences
SEQUENCES = [[1], [2, 3], [4, 5, 6, 7], []]


@pytest.mark.parametrize("kwargs", [
    {}, {"maxlen": 2}, {"maxlen": 5}, {"padding": "post"}, {"truncating": "post", "maxlen": 3},
    {"padding": "post", "truncating": "post", "maxlen": 2, "value": -1}, {"dtype": "float32", "value": 0.5},
    {"dtype": "int64", "maxlen": 3, "padding": "pre", "truncating": "pre"},
])
def test_pad_sequences_matches_keras(kwargs):
    expected = keras.utils.pad_sequences(SEQUENCES, **kwargs)
    received = engine.utils.pad_sequences(SEQUENCES, **kwargs)
    assert received.dtype == expected.dtype
    np.testing.assert_array_equal(received, expected)


def test_pad_sequences_of_vectors_and_strings_match_keras():
    steps = [RNG.normal(size=(n, 2)) for n in (1, 3, 2)]
    for kwargs in ({"dtype": "float32"}, {"dtype": "float32", "maxlen": 2, "padding": "post"}):
        np.testing.assert_array_equal(engine.utils.pad_sequences(steps, **kwargs),
                                      keras.utils.pad_sequences(steps, **kwargs))
    words = [["a"], ["b", "c"]]
    np.testing.assert_array_equal(engine.utils.pad_sequences(words, dtype=object, value="<pad>"),
                                  keras.utils.pad_sequences(words, dtype=object, value="<pad>"))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"padding": "middle"}, ValueError, 'Padding type "middle" not understood'),
    ({"truncating": "both"}, ValueError, 'Truncating type "both" not understood'),
    ({"value": "x"}, ValueError, "`dtype` int32 is not compatible with `value`'s type"),
])
def test_pad_sequences_refuses_what_keras_refuses(kwargs, error, message):
    with pytest.raises(error):
        keras.utils.pad_sequences([[1, 2, 3]], maxlen=2, **kwargs)
    with pytest.raises(error, match=message):
        engine.utils.pad_sequences([[1, 2, 3]], maxlen=2, **kwargs)
    with pytest.raises(ValueError, match="`sequences` must be a list of iterables. Found non-iterable: 3"):
        engine.utils.pad_sequences([[1], 3])


# ------------------------------------------------------------------ split_dataset
def _keras_split(dataset, left_size, right_size, shuffle, seed):
    """Keras' split (its own helpers, as its tf.data path runs them) before tf.data wraps the parts."""
    spec = dataset_utils._get_type_spec(dataset)
    samples = dataset_utils._convert_dataset_to_list(dataset, spec)
    if shuffle:
        random.seed(seed)
        random.shuffle(samples)
    left, right = dataset_utils._rescale_dataset_split_sizes(left_size, right_size, len(samples))
    return tuple(dataset_utils._restore_dataset_from_list(part, spec, dataset)
                 for part in (samples[:left], samples[-right:]))


@pytest.mark.parametrize("left_size, right_size", [(0.6, None), (None, 0.25), (3, None), (None, 7), (0.5, 0.2), (4, 5)])
@pytest.mark.parametrize("shuffle", [False, True])
def test_split_dataset_gives_keras_samples_in_keras_order(left_size, right_size, shuffle):
    x, y = RNG.normal(size=(10, 3)), np.arange(10)
    for dataset in ((x, y), [x, y]):  # tuples and lists of arrays give tuples of arrays
        ours = engine.utils.split_dataset(dataset, left_size, right_size, shuffle=shuffle, seed=7)
        theirs = _keras_split(dataset, left_size, right_size, shuffle, 7)
        for our_part, their_part in zip(ours, theirs):
            assert type(our_part) is type(their_part) is tuple
            for a, b in zip(our_part, their_part, strict=True):
                np.testing.assert_array_equal(a, b)
    ours = engine.utils.split_dataset(x, left_size, right_size, shuffle=shuffle, seed=7)
    for our_part, their_part in zip(ours, _keras_split(x, left_size, right_size, shuffle, 7), strict=True):
        np.testing.assert_array_equal(our_part, np.asarray(their_part))


def test_split_dataset_shuffle_without_seed_follows_set_random_seed():
    data = np.arange(20)
    set_random_seed(3)
    first = engine.utils.split_dataset(data, left_size=0.5, shuffle=True)
    set_random_seed(3)
    np.testing.assert_array_equal(engine.utils.split_dataset(data, left_size=0.5, shuffle=True)[0], first[0])
    assert sorted(np.concatenate(first).tolist()) == list(range(20))


@pytest.mark.parametrize("left_size, right_size", [
    (None, None), (0, 0), (1.5, None), (10, None), (-1, None), (0.7, 0.6), (6, 5), ("a", None), (None, [1]),
    (0.01, None),
])
def test_split_dataset_refuses_sizes_keras_refuses(left_size, right_size):
    data = np.arange(10)
    with pytest.raises((ValueError, TypeError)) as theirs:
        if left_size is None and right_size is None:
            keras.utils.split_dataset(data)
        dataset_utils._rescale_dataset_split_sizes(left_size, right_size, 10)
    with pytest.raises(type(theirs.value)):
        engine.utils.split_dataset(data, left_size, right_size)


def test_split_dataset_refuses_arrays_of_different_lengths():
    with pytest.raises(ValueError, match=r"same number of samples, received lengths \[4, 3\]"):
        engine.utils.split_dataset((np.zeros(4), np.zeros(3)), left_size=0.5)


def test_session_helpers_still_import_from_engine_utils():
    clear_session()
    set_random_seed(0)
    assert callable(engine.utils.random_generator)


# ------------------------------------------------------------------- regularizers
@pytest.mark.parametrize("name, args", [("l1", (0.3,)), ("l2", (0.2,)), ("l1_l2", ()), ("l1_l2", (0.1, 0.4)),
                                        ("L1L2", (0.1,)), ("l1", ()), ("l2", ())])
def test_lowercase_regularizers_are_keras_classes_with_keras_configs(name, args):
    ours, theirs = getattr(regularizers, name)(*args), getattr(keras.regularizers, name)(*args)
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.get_config() == pytest.approx(theirs.get_config())
    x = RNG.normal(size=(3, 4)).astype("float32")
    assert ours(x) == pytest.approx(float(theirs(x)), rel=1e-5)
    clone = regularizers.get(regularizers.serialize(ours))
    assert type(clone) is type(ours) and clone.get_config() == ours.get_config()
    loaded = regularizers.get(keras.regularizers.serialize(theirs))
    assert loaded.get_config() == pytest.approx(theirs.get_config())


@pytest.mark.parametrize("name", ["l1", "l2", "l1l2", "L1L2", "L1", "L2"])
def test_regularizer_names_resolve_as_in_keras(name):
    ours, theirs = regularizers.get(name), keras.regularizers.get(name)
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.get_config() == pytest.approx(theirs.get_config())


@pytest.mark.parametrize("value", [-1, "a", float("nan"), float("inf")])
def test_bad_penalties_raise_keras_value_error(value):
    with pytest.raises(ValueError):
        keras.regularizers.l1(value)
    with pytest.raises(ValueError, match="Invalid value for argument l1: expected a non-negative float"):
        regularizers.l1(value)


# ----------------------------------------------------------------------- Variable
@pytest.mark.parametrize("initializer, kwargs", [
    ("zeros", {"shape": (2, 3)}), ("ones", {"shape": (4,), "dtype": "float16"}),
    (initializers.Constant(2.5), {"shape": (2,)}), ([1.0, 2.0], {}), ([1, 2], {}), (np.float32(3.0), {}),
    (np.ones((2, 2), "float32"), {"dtype": "float16"}), ([[1, 2]], {"dtype": "float32"}),
])
def test_variable_constructor_matches_keras(initializer, kwargs):
    theirs = keras.Variable(initializer if not isinstance(initializer, initializers.Constant)
                            else keras.initializers.Constant(2.5), trainable=False, name="w", **kwargs)
    ours = Variable(initializer, trainable=False, name="w", **kwargs)
    assert (ours.shape, ours.dtype, ours.name, ours.path, ours.trainable) == \
        (theirs.shape, theirs.dtype, theirs.name, theirs.path, theirs.trainable)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_assign_add_and_assign_sub_return_the_new_value_as_keras():
    ours, theirs = Variable([1.0, 2.0]), keras.Variable([1.0, 2.0])
    for method, value in (("assign_add", [1.0, 1.0]), ("assign_sub", np.array([0.5, 3.0])), ("assign", [7, 8])):
        received, expected = getattr(ours, method)(value), getattr(theirs, method)(value)
        np.testing.assert_array_equal(received, np.asarray(expected))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert received.dtype == np.float32
    with pytest.raises(ValueError, match=r"Cannot assign a value of shape \(3,\) .* `variable\.assign\(value\)` "
                                         r"must match"):
        ours.assign_add(np.ones(3))


def test_variables_get_unique_default_names():
    first, second = Variable(1.0), Variable(2.0)
    assert first.name != second.name and first.name.startswith("variable") and first.path == first.name


@pytest.mark.parametrize("kwargs, message", [
    ({"initializer": "zeros"},
     "When creating a Variable from an initializer, the `shape` argument should be specified"),
    ({"initializer": "zeros", "shape": (None, 2)}, r"Shapes used to initialize variables must be fully-defined \(no "
                                                   r"`None` dimensions\)\. Received: shape=\(None, 2\)"),
    ({"initializer": 1.0, "name": "a/b"}, "Argument `name` must be a string and cannot contain character `/`"),
    ({"initializer": 1.0, "name": 3}, "Argument `name` must be a string"),
    ({"initializer": "nope", "shape": (2,)}, "Unknown initializer: 'nope'"),
])
def test_variable_arguments_keras_refuses_raise_value_error(kwargs, message):
    with pytest.raises(ValueError):
        keras.Variable(**kwargs)
    with pytest.raises(ValueError, match=message):
        Variable(**kwargs)


def test_a_layer_weight_keeps_its_layer_path():
    from layers import Dense

    layer = Dense(2, name="d")
    layer.build((None, 3))
    assert [v.path for v in layer.weights] == ["d/kernel", "d/bias"]



def test_the_submodules_keras_scripts_reach_through_the_package_are_there_after_one_import():
    """``import keras`` then ``keras.optimizers.Adam()``: a fresh process, so that no other test imported them."""
    import subprocess
    import sys

    names = ("losses", "metrics", "optimizers", "utils", "regularizers", "initializers", "constraints", "callbacks")
    script = f"import engine; print([n for n in {names!r} if not hasattr(engine, n)])"
    missing = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout
    assert missing.strip() == "[]" and all(hasattr(keras, name) for name in names)
