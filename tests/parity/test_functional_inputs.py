"""How a functional model takes its inputs, and InputLayer, each compared with
Keras 3: dict inputs matched by the keys the model was built with (nested
structures, extra keys, Input names as the fallback), dtype casts and rank
standardization, optional inputs, InputLayer's arguments and conflicts, output
shapes for given input shapes and tuple outputs (the cases of Keras'
functional_test.py and input_layer_test.py that apply to a NumPy engine,
rewritten, plus those issue 12 lists)."""

import warnings

import keras
import numpy as np
import pytest

from engine import Input, InputLayer, KerasTensor, Layer, Model, load_model
from engine.network.gradient_check import gradient_check
from layers import Concatenate, Dense, TimeDistributed
from tests.parity.errors import same_error

KL = keras.layers
STRUCTURE_WARNING = "The structure of `inputs` doesn't match the expected structure"


def _warnings_of(call):
    """(result of ``call()``, the messages of the UserWarnings it raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def _structure_warnings(messages):
    return [m for m in messages if m.startswith(STRUCTURE_WARNING)]


def _both(build):
    """``build(Input, Model, layers)`` with our API and with Keras'."""
    import layers as ours

    return build(Input, Model, ours), build(keras.Input, keras.Model, KL)


def _copy_weights(ours, theirs):
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


# ----------------------------------------------------------- dict inputs
def _keyed(I, M, L):
    """Inputs whose names ('a_in', 'b_in') differ from the model's keys ('x', 'y')."""
    a, b = I(shape=(2,), name="a_in"), I(shape=(3,), name="b_in")
    return M({"x": a, "y": b}, L.Dense(2, name="head")(L.Concatenate()([a, b])))


XY = {"x": np.random.rand(5, 2).astype("float32"), "y": np.random.rand(5, 3).astype("float32")}


def test_dict_inputs_match_the_keys_the_model_was_built_with():
    ours, theirs = _quiet(lambda: _both(_keyed))
    _copy_weights(ours, theirs)
    expected = np.asarray(theirs(XY))
    np.testing.assert_allclose(ours(XY), expected, rtol=1e-6)
    np.testing.assert_allclose(ours.predict(XY, verbose=0), theirs.predict(XY, verbose=0), rtol=1e-6)
    swapped = {"y": XY["y"], "x": XY["x"]}  # the order of the keys does not matter
    np.testing.assert_allclose(ours(swapped), expected, rtol=1e-6)
    by_name = {"a_in": XY["x"], "b_in": XY["y"]}  # Input names do not stand in for the keys
    error = same_error(lambda: ours(by_name), lambda: theirs(by_name), 'Missing data for input "x"')
    assert "Expected the following keys: ['x', 'y']" in str(error)


def test_fit_on_dict_inputs_trains_like_keras():
    ours, theirs = _quiet(lambda: _both(_keyed))
    _copy_weights(ours, theirs)
    y = np.random.rand(5, 2).astype("float32")
    ours.compile(optimizer="sgd", loss="mse")
    theirs.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse")
    our_losses = ours.fit(XY, y, epochs=3, batch_size=5, shuffle=False, verbose=0).history["loss"]
    their_losses = theirs.fit(XY, y, epochs=3, batch_size=5, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-5)
    assert our_losses[-1] < our_losses[0]
    assert ours.evaluate(XY, y, verbose=0) == pytest.approx(theirs.evaluate(XY, y, verbose=0), rel=1e-5)


def test_extra_keys_are_ignored_with_keras_warning():
    ours, theirs = _quiet(lambda: _both(_keyed))
    _copy_weights(ours, theirs)
    extra = {**XY, "z": np.ones((5, 7))}
    for model in (ours, theirs):
        result, messages = _warnings_of(lambda m=model: m(extra))
        assert len(_structure_warnings(messages)) == 1, messages
        np.testing.assert_allclose(result, theirs(XY), rtol=1e-6)
    _, messages = _warnings_of(lambda: ours.predict(extra, verbose=0))
    assert len(_structure_warnings(messages)) == 1 and "The keys ['z'] match no input" in messages[0]


def test_an_extra_key_sorting_before_the_model_keys_still_matches_by_key():
    # Keras flattens the dict in sorted order, so an extra 'a' shifts its values onto the
    # wrong inputs; here every value goes to the input of its key.
    ours = _quiet(lambda: _keyed(Input, Model, __import__("layers")))
    with pytest.warns(UserWarning, match=STRUCTURE_WARNING):
        shifted = ours({**XY, "a": np.full((5, 2), 9.0)})
    np.testing.assert_array_equal(shifted, ours(XY))


def test_nested_structures_dict_of_lists_and_list_of_dicts():
    def dict_of_lists(I, M, L):
        a, b, c = I(shape=(2,), name="a"), I(shape=(3,), name="b"), I(shape=(1,), name="c")
        return M({"p": [a, b], "q": c}, L.Concatenate()([a, b, c]))

    def list_of_dicts(I, M, L):
        a, b, c = I(shape=(2,), name="a"), I(shape=(3,), name="b"), I(shape=(1,), name="c")
        return M([{"u": a}, {"v": b, "w": c}], L.Concatenate()([a, b, c]))

    a, b, c = np.ones((4, 2)), 2 * np.ones((4, 3)), 3 * np.ones((4, 1))
    for build, data in ((dict_of_lists, {"q": c, "p": [a, b]}), (list_of_dicts, [{"u": a}, {"w": c, "v": b}])):
        ours, theirs = _quiet(lambda b=build: _both(b))
        expected = np.asarray(theirs(data))
        np.testing.assert_array_equal(ours(data), expected)
        np.testing.assert_array_equal(ours.predict(data, verbose=0), theirs.predict(data, verbose=0))
        ours.compile(optimizer="sgd", loss="mse")
        assert ours.fit(data, np.zeros((4, 6)), verbose=0).history["loss"][0] == pytest.approx(
            float(np.mean(expected ** 2)))


def test_a_dict_fed_to_a_model_built_from_a_list_matches_input_names():
    def listed(I, M, L):
        a, b = I(shape=(2,), name="input_a"), I(shape=(3,), name="input_b")
        return M([a, b], L.Concatenate()([a, b]))

    ours, theirs = _both(listed)
    data = {"input_b": np.ones((2, 3)), "input_a": np.zeros((2, 2)), "unused": np.ones((2, 9))}
    for model in (ours, theirs):
        result, messages = _warnings_of(lambda m=model: m(data))
        assert not _structure_warnings(messages)  # as in Keras, extra keys pass silently here
        np.testing.assert_array_equal(result, np.concatenate([np.zeros((2, 2)), np.ones((2, 3))], axis=1))
    same_error(lambda: ours({"input_a": np.zeros((2, 2))}), lambda: theirs({"input_a": np.zeros((2, 2))}),
                "Missing data for input")
    single_ours, single_theirs = _both(lambda I, M, L: (lambda x: M(x, x * 2.0))(I(shape=(2,), name="solo")))
    np.testing.assert_array_equal(single_ours({"solo": np.ones((1, 2))}), single_theirs({"solo": np.ones((1, 2))}))


def test_a_list_fed_to_a_dict_model_warns_or_raises_as_keras():
    def sorted_keys(I, M, L):
        i1, i2 = I(shape=(2,), name="i1"), I(shape=(2,), name="i2")
        return M({"i1": i1, "i2": i2}, L.Subtract()([i1, i2]))

    def unsorted_keys(I, M, L):
        x1, x2 = I(shape=(2,), name="IT"), I(shape=(2,), name="IS")
        return M({"IT": x1, "IS": x2}, L.Subtract()([x1, x2]))

    pair = [np.ones((2, 2)), np.zeros((2, 2))]
    for model in _both(sorted_keys):
        result, messages = _warnings_of(lambda m=model: m.predict(pair, verbose=0))
        assert len(_structure_warnings(messages)) == 1, messages
        np.testing.assert_array_equal(result, np.ones((2, 2)))  # taken in sorted-key order
    ours, theirs = _both(unsorted_keys)
    same_error(lambda: ours(pair), lambda: theirs(pair), STRUCTURE_WARNING)
    np.testing.assert_array_equal(ours({"IT": pair[0], "IS": pair[1]}), theirs({"IT": pair[0], "IS": pair[1]}))


def test_lists_and_tuples_are_interchangeable_without_warning():
    ours, theirs = _both(lambda I, M, L: (lambda a, b: M([a, b], L.Add()([a, b])))(I(shape=(2,)), I(shape=(2,))))
    for model in (ours, theirs):
        result, messages = _warnings_of(lambda m=model: m.predict((np.ones((2, 2)), np.ones((2, 2))), verbose=0))
        assert not _structure_warnings(messages)
        np.testing.assert_array_equal(result, 2 * np.ones((2, 2)))


def test_symbolic_call_with_dict_keys_and_unused_inputs():
    def unused(I, M, L):
        i1, i2 = I(shape=(2,), name="input1"), I(shape=(2,), name="input2")
        return M({"input1": i1, "input2": i2}, {"output1": i1 * 2.0, "output2": i2})

    ours, theirs = _both(unused)
    symbolic = ours({"input1": Input(shape=(2,)), "input2": Input(shape=(2,))})
    expected = theirs({"input1": keras.Input(shape=(2,)), "input2": keras.Input(shape=(2,))})
    assert {k: v.shape for k, v in symbolic.items()} == {k: tuple(v.shape) for k, v in expected.items()}
    data = {"input1": np.ones((2, 2)), "input2": np.zeros((2, 2))}
    for key, value in ours(data).items():
        np.testing.assert_array_equal(value, theirs(data)[key])


def test_gradients_of_a_nested_dict_model_flow_back_by_key():
    a, b = Input(shape=(2,), name="a_in"), Input(shape=(3,), name="b_in")
    inner = Model({"x": a, "y": b}, Dense(2, name="mix")(Concatenate()([a, b])), name="inner")
    p, q = Input(shape=(2,), name="p"), Input(shape=(3,), name="q")
    outer = Model([p, q], Dense(1, name="top")(inner({"y": Dense(3, name="pre")(q), "x": p})))
    report = gradient_check(outer, [np.random.rand(4, 2), np.random.rand(4, 3)])
    assert report.max_error < 1e-6, str(report)
    with pytest.warns(UserWarning, match=r"The keys \['z'\] match no input of the model and are ignored"):
        _, tape = inner.forward({"x": np.ones((1, 2)), "y": np.ones((1, 3)), "z": 1.0})
    grads, _ = inner.backward(tape, np.ones((1, 2)))
    assert set(grads) == {"x", "y", "z"} and grads["z"] is None and grads["x"].shape == (1, 2)


# --------------------------------------------------- dtypes and ranks
def test_inputs_are_cast_to_the_input_dtype_as_keras():
    def typed(I, M, L):
        half, whole, default = I(shape=(2,), dtype="float16"), I(shape=(2,), dtype="int32"), I(shape=(2,))
        return M((half, whole, default), (half + 2, whole + 2, default * 1.0))

    ours, theirs = _both(typed)
    data = (np.ones((2, 2)), np.array([[1.7, 2.2], [0.0, -1.5]]), np.ones((2, 2), "float64"))
    for got, want in zip(ours(data), theirs(data)):
        assert got.dtype == np.dtype(keras.backend.standardize_dtype(want.dtype))
        np.testing.assert_array_equal(got, np.asarray(want))
    for got, want in zip(ours.predict(data, verbose=0), theirs.predict(data, verbose=0)):
        assert got.dtype == want.dtype


def test_a_trailing_axis_of_one_is_squeezed_or_added_as_keras():
    for shape, data_shape in (((3,), (2, 3, 1)), ((3, 1), (2, 3))):
        ours, theirs = _both(lambda I, M, L, s=shape: (lambda x: M(x, L.Dense(4)(x)))(I(shape=s)))
        _copy_weights(ours, theirs)
        data = np.random.rand(*data_shape).astype("float32")
        np.testing.assert_allclose(ours(data), theirs(data), rtol=1e-6)
        np.testing.assert_allclose(ours.predict(data, verbose=0), theirs.predict(data, verbose=0), rtol=1e-6)


def test_other_rank_differences_raise_naming_the_input_and_its_path():
    ours, theirs = _both(lambda I, M, L: (lambda x: M(x, L.Dense(3)(x)))(I(shape=(3,), name="foo")))
    error = same_error(lambda: ours(np.ones((2, 3, 4))), lambda: theirs(np.ones((2, 3, 4))), "Invalid input shape")
    assert "name 'foo' and path ''" in str(error)

    def nested(I, M, L):
        inputs = [{"foo": I(shape=(3,), name="my_input")}]
        return M(inputs, L.Dense(3)(inputs[0]["foo"]))

    ours, theirs = _both(nested)
    error = same_error(lambda: ours(np.ones(())), lambda: theirs(np.ones(())), "Invalid input shape")
    assert "name 'my_input' and path '0.foo'" in str(error)


def test_rank_adjusted_inputs_get_gradients_of_their_own_shape():
    x = Input(shape=(3, 1), name="column")
    inner_in = Input(shape=(3,), name="flat")
    inner = Model(inner_in, Dense(2, name="d")(inner_in), name="inner")
    outer = Model(x, inner(x))
    assert outer(np.ones((4, 3, 1))).shape == (4, 2)
    report = gradient_check(outer, np.random.rand(4, 3, 1))
    assert report.max_error < 1e-6, str(report)


# -------------------------------------------------------- optional inputs
def _optional_model(I, M, L, base, optional=True):
    class OptionalAdd(base):
        def call(self, x, y=None):
            return x if y is None else x + y

        def compute_output_shape(self, x_shape):
            return x_shape

    i1, i2 = I(shape=(2,), name="input1"), I(shape=(2,), name="input2", optional=optional)
    return M({"input1": i1, "input2": i2}, L.Dense(1, name="head")(OptionalAdd()(i1, i2)))


def test_an_optional_input_may_be_none_and_its_layers_receive_none():
    ours = _optional_model(Input, Model, __import__("layers"), Layer)
    theirs = _optional_model(keras.Input, keras.Model, KL, KL.Layer)
    _copy_weights(ours, theirs)
    x = np.random.rand(4, 2).astype("float32")
    for data in ({"input1": x, "input2": None}, [x, None]):
        expected = np.asarray(_quiet(lambda d=data: theirs(d)))
        np.testing.assert_allclose(_quiet(lambda d=data: ours(d)), expected, rtol=1e-6)
        np.testing.assert_allclose(_quiet(lambda d=data: ours.predict(d, verbose=0)), expected, rtol=1e-6)
    np.testing.assert_allclose(ours({"input1": x, "input2": x}), theirs({"input1": x, "input2": x}), rtol=1e-6)
    ours.compile(optimizer="sgd", loss="mse")
    theirs.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse")
    y = np.ones((4, 1), "float32")
    our_losses = ours.fit({"input1": x, "input2": None}, y, epochs=3, batch_size=4, verbose=0).history["loss"]
    their_losses = theirs.fit({"input1": x, "input2": None}, y, epochs=3, batch_size=4, verbose=0).history["loss"]
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-5)


def test_none_for_a_required_input_raises_as_keras():
    ours = _optional_model(Input, Model, __import__("layers"), Layer, optional=False)
    theirs = _optional_model(keras.Input, keras.Model, KL, KL.Layer, optional=False)
    data = {"input1": np.ones((2, 2)), "input2": None}
    error = same_error(lambda: ours(data), lambda: theirs(data), "is not optional, but None was passed")
    assert "Input(..., optional=True)" in str(error)
    ours.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="'input2' is not optional"):
        ours.fit(data, np.ones((2, 1)), verbose=0)


def test_keys_and_optional_inputs_survive_saving(tmp_path):
    a, b = Input(shape=(2,), name="a_in"), Input(shape=(3,), name="b_in", optional=True)
    model = Model({"x": a, "y": b}, Dense(2, name="head")(a))
    model.save(tmp_path / "keyed.nw")
    loaded = load_model(tmp_path / "keyed.nw")
    assert list(loaded.input) == ["x", "y"] and loaded.get_layer("b_in").optional
    data = {"x": np.random.rand(3, 2), "y": None}
    np.testing.assert_array_equal(loaded(data), model(data))


def test_optional_is_in_the_input_layer_config_as_keras():
    ours = Input(shape=(2,), name="maybe", optional=True)._keras_history.layer
    theirs = keras.Input(shape=(2,), name="maybe", optional=True)._keras_history.operation
    their_config = theirs.get_config()
    assert ours.get_config() == {**their_config, "batch_shape": list(their_config["batch_shape"])}
    assert InputLayer.from_config(their_config).optional is True


# ------------------------------------------------------------- InputLayer
CONFLICTS = [
    (dict(shape=(2, 3), batch_shape=(2, 3)), "cannot pass both `shape` and `batch_shape`"),
    (dict(batch_size=4, batch_shape=(2, 3)), "cannot pass both `batch_size` and `batch_shape`"),
    (dict(shape=None, batch_shape=None), "pass a `shape` argument"),
    (dict(shape=(2, 3), batch_size=4, input_tensor=np.zeros((2, 3))), "Argument `input_tensor` must be a KerasTensor"),
    (dict(shape=(2, 4), input_tensor="tensor"), "cannot provide an incompatible `shape`"),
    (dict(batch_shape=(2, 4), input_tensor="tensor"), "cannot provide an incompatible `batch_shape`"),
    (dict(batch_size=5, input_tensor="tensor"), "cannot provide an incompatible `batch_size`"),
    (dict(dtype="float16", input_tensor="tensor"), "cannot provide an incompatible `dtype`"),
    (dict(shape=("3",)), "Cannot convert"),
    (dict(shape=3), "Cannot convert"),
]


@pytest.mark.parametrize("arguments, phrase", CONFLICTS)
def test_input_layer_conflicts_raise_as_keras(arguments, phrase):
    def make(layer_class, tensor_class):
        kwargs = dict(arguments)
        if isinstance(kwargs.get("input_tensor"), str):
            kwargs["input_tensor"] = tensor_class(shape=(2, 3), dtype="float32")
        return lambda: layer_class(**kwargs)

    same_error(make(InputLayer, KerasTensor), make(KL.InputLayer, keras.KerasTensor), phrase)


def test_input_layer_arguments_as_keras_accepts_them():
    for kwargs in (dict(shape=(2, 3), batch_size=4, dtype="float32", sparse=False, ragged=False),
                   dict(batch_shape=(4, 2, 3)), dict(batch_input_shape=[4, 2, 3]),
                   dict(shape=(np.int64(2), 3), batch_size=4)):
        ours, theirs = InputLayer(**kwargs), KL.InputLayer(**kwargs)
        assert ours.batch_shape == tuple(theirs.batch_shape) == (4, 2, 3)
        assert ours.output.shape == (4, 2, 3) and ours.dtype == theirs.dtype == "float32"
        assert (ours.sparse, ours.ragged, ours.optional, ours.trainable) == (False, False, False, True)
    for layer_class in (InputLayer, KL.InputLayer):
        with pytest.warns(UserWarning, match="Argument `input_shape` is deprecated. Use `shape` instead."):
            layer = layer_class(input_shape=(2, 3), batch_size=4, dtype="int32")
        assert tuple(layer.batch_shape) == (4, 2, 3) and layer.dtype == "int32"
    assert InputLayer(shape=(32,)).call() is None


def test_an_input_tensor_made_directly_becomes_the_input():
    tensor = KerasTensor((2, 3), dtype="int32")
    layer = InputLayer(shape=(3,), batch_size=2, sparse=False, dtype="int32", input_tensor=tensor)
    assert layer.output is tensor and layer.batch_shape == (2, 3) and layer.dtype == "int32"
    assert Input(tensor=KerasTensor((None, 4))).shape == (None, 4)
    used = Input(shape=(3,), name="used")
    with pytest.raises(ValueError, match="already comes from layer 'used'"):
        InputLayer(input_tensor=used)


@pytest.mark.parametrize("argument", ["sparse", "ragged"])
def test_sparse_or_ragged_true_is_refused_by_name(argument):
    with pytest.raises(ValueError, match=rf"^`{argument}=True` is not supported by InputLayer: nodeweave runs on "
                                         rf"dense NumPy arrays\. Pass {argument}=False"):
        Input(shape=(3,), **{argument: True})
    with pytest.raises(ValueError, match=rf"You cannot provide an incompatible `{argument}` with `input_tensor`"):
        InputLayer(input_tensor=KerasTensor((None, 3)), **{argument: True})
    tensor = Input(shape=(3,))
    assert tensor.sparse is False and tensor.ragged is False


def test_keras_input_layer_configs_rebuild_the_same_input():
    for config in (KL.InputLayer(shape=(5,), batch_size=2, dtype="int32", name="ids").get_config(),
                   {"batch_input_shape": [None, 7], "dtype": "float32", "sparse": False, "ragged": False,
                    "name": "keras2"}):
        layer = InputLayer.from_config(config)
        theirs = KL.InputLayer.from_config(config)
        assert layer.batch_shape == tuple(theirs.batch_shape) and layer.dtype == theirs.dtype
        assert layer.name == theirs.name


# --------------------------------------------- output shapes and tuples
def test_compute_output_shape_as_keras():
    def ragged_time(I, M, L):
        x = I(shape=(None, 4))
        return M(x, L.Dense(3)(x))

    def two_heads(I, M, L):
        x = I(shape=(4,))
        return M(x, [L.Dense(3)(x), L.Dense(2)(x)])

    def keyed_pair(I, M, L):
        a, b = I(shape=(2,), name="a"), I(shape=(3,), name="b")
        return M({"p": [a], "q": b}, (L.Concatenate()([a, b]), L.Dense(1)(b)))

    cases = [(ragged_time, (2, 7, 4)), (two_heads, (None, 4)), (keyed_pair, {"p": [(4, 2)], "q": (4, 3)})]
    for build, shape in cases:
        ours, theirs = _quiet(lambda b=build: _both(b))
        assert ours.compute_output_shape(shape) == theirs.compute_output_shape(shape)
    ours, theirs = _both(two_heads)
    same_error(lambda: ours.compute_output_shape((None, 5)), lambda: theirs.compute_output_shape((None, 5)),
                "expected shape")


def test_time_distributed_takes_a_functional_model():
    def sub(I, M, L):
        x = I(shape=(6, 4))
        return M(x, L.Dense(3)(L.Flatten()(x)))

    ours, theirs = _both(sub)
    _copy_weights(ours, theirs)
    our_td, their_td = TimeDistributed(ours), KL.TimeDistributed(theirs)
    assert our_td(Input(shape=(5, 6, 4))).shape == tuple(their_td(keras.Input(shape=(5, 6, 4))).shape)
    data = np.random.rand(2, 5, 6, 4).astype("float32")
    np.testing.assert_allclose(our_td(data), their_td(data), rtol=1e-5, atol=1e-6)
    report = gradient_check(our_td, data.astype("float64"))
    assert report.max_error < 1e-6, str(report)


def test_a_symbolic_call_propagates_the_given_shapes():
    def pair(I, M, L):
        a, b = I(shape=(3,), name="input_a"), I(shape=(None,), name="input_b")
        return M([a, b], [L.Dense(4)(a), b * 2.0])

    ours, theirs = _both(pair)
    our_out = ours([Input(shape=(3,), batch_size=2), Input(shape=(5,), batch_size=2)])
    their_out = theirs([keras.Input(shape=(3,), batch_size=2), keras.Input(shape=(5,), batch_size=2)])
    assert [t.shape for t in our_out] == [tuple(t.shape) for t in their_out] == [(2, 4), (2, 5)]


def test_tuple_outputs_come_back_as_tuples():
    ours, theirs = _both(lambda I, M, L: (lambda x: M(x, (L.Dense(2)(x), L.Dense(3)(x))))(I(shape=(3,))))
    _copy_weights(ours, theirs)
    data = np.random.rand(4, 3).astype("float32")
    for our_result, their_result in ((ours(data), theirs(data)),
                                     (ours.predict(data, verbose=0), theirs.predict(data, verbose=0)),
                                     (ours(Input(shape=(3,))), theirs(keras.Input(shape=(3,))))):
        assert type(our_result) is type(their_result) is tuple
    for got, want in zip(ours(data), theirs(data)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
