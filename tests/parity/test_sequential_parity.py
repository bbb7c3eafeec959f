"""Sequential build rules, its Keras errors and the Model surface, each compared
with Keras 3 (the cases of keras/src/models/sequential_test.py that apply to a
NumPy engine, rewritten, plus those issue 12 lists)."""

import keras
import numpy as np
import pytest

from engine import Input, Layer, Model, Sequential
from engine.network.gradient_check import gradient_check
from engine.network.input_layer import InputLayer
from layers import Conv2D, Dense, Flatten, TimeDistributed
from tests.parity.errors import raised, same_error

KL = keras.layers


def _copy_weights(ours, theirs):
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])


# ------------------------------------------------------------------ building
def test_compile_before_build_then_fit_evaluate_and_predict_build_it():
    x = np.random.rand(16, 3).astype("float32")
    y = np.random.rand(16, 1).astype("float32")
    ours = Sequential([Dense(4, activation="tanh"), Dense(1)])
    theirs = keras.Sequential([KL.Dense(4, activation="tanh"), KL.Dense(1)])
    for model in (ours, theirs):
        model.compile(optimizer=keras.optimizers.SGD(0.1) if model is theirs else "sgd", loss="mse",
                      metrics=["mae"])
        assert not model.built
        model.evaluate(x, y, verbose=0)  # builds
        assert model.built and len(model.weights) == 4
    _copy_weights(ours, theirs)
    np.testing.assert_allclose(ours.evaluate(x, y, verbose=0), theirs.evaluate(x, y, verbose=0), rtol=1e-5)
    ours.optimizer.learning_rate = 0.1
    ours.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    theirs.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    np.testing.assert_allclose(ours.predict(x, verbose=0), theirs.predict(x, verbose=0), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("run", [lambda model, x, y: model.fit(x, y, verbose=0),
                                 lambda model, x, y: model.predict(x, verbose=0),
                                 lambda model, x, y: model.train_on_batch(x, y),
                                 lambda model, x, y: model.test_on_batch(x, y)],
                         ids=["fit", "predict", "train_on_batch", "test_on_batch"])
def test_each_entry_point_builds_an_unbuilt_compiled_model(run):
    x, y = np.ones((4, 2), "float32"), np.ones((4, 1), "float32")
    for model in (Sequential([Dense(3), Dense(1)]), keras.Sequential([KL.Dense(3), KL.Dense(1)])):
        model.compile(optimizer="sgd", loss="mse")
        run(model, x, y)
        assert model.built and model.input_shape[1:] == (2,) and model.output_shape[1:] == (1,)


def test_input_shape_on_the_first_layer_builds_at_once_and_later_ones_are_ignored():
    ours = Sequential([Dense(4, input_shape=(2,)), Dense(5, input_shape=(3, 4))])
    theirs = keras.Sequential([KL.Dense(4, input_shape=(2,)), KL.Dense(5, input_shape=(3, 4))])
    assert ours.built and theirs.built
    assert len(ours.weights) == len(theirs.weights) == 4
    assert len(ours.layers) == len(theirs.layers) == 2
    assert ours.input_shape == theirs.input_shape == (None, 2)
    assert ours.get_config()["build_input_shape"] == list(theirs.get_config()["build_input_shape"])


def test_an_input_first_builds_as_layers_are_added():
    ours, theirs = Sequential(name="seq"), keras.Sequential(name="seq")
    ours.add(Input(shape=(2,), batch_size=3))
    theirs.add(keras.Input(shape=(2,), batch_size=3))
    assert ours.built is theirs.built is False
    for model, dense in ((ours, Dense), (theirs, KL.Dense)):
        model.add(dense(4))
        model.add(dense(5))
    assert ours.built and theirs.built
    assert len(ours.layers) == len(theirs.layers) == 2
    assert len(ours.weights) == len(theirs.weights) == 4
    _copy_weights(ours, theirs)
    x = np.random.rand(3, 2).astype("float32")
    np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-6)
    # Each layer is called once, so its output is defined and feeds a feature extractor.
    extractor = Model(ours.inputs, [layer.output for layer in ours.layers])
    their_extractor = keras.Model(theirs.inputs, [layer.output for layer in theirs.layers])
    for got, want in zip(extractor(x), their_extractor(x)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_pop_and_add_keep_a_built_model_built():
    for sequential, dense, make_input in ((Sequential, Dense, Input), (keras.Sequential, KL.Dense, keras.Input)):
        model = sequential([make_input(shape=(2,), batch_size=3), dense(4), dense(5)])
        popped = model.pop()
        assert popped.units == 5
        assert model.built and len(model.layers) == 1 and len(model.weights) == 2
        assert model(np.random.rand(3, 2)).shape == (3, 4)
        model.add(dense(6))
        assert model.built and len(model.weights) == 4
        assert model(np.random.rand(3, 2)).shape == (3, 6)


def test_a_deferred_model_builds_on_its_first_call_and_keeps_that_shape():
    for sequential, dense in ((Sequential, Dense), (keras.Sequential, KL.Dense)):
        model = sequential([dense(4), dense(5)])
        assert not model.built
        assert model(np.random.rand(3, 2)).shape == (3, 5)
        assert model.built
        model.pop()
        assert model.built and len(model.weights) == 2
        assert model(np.random.rand(3, 2)).shape == (3, 4)
        assert type(raised(lambda: model.build((None, 7)))) is ValueError


def test_build_by_hand():
    ours, theirs = Sequential([Dense(8), Dense(4)]), keras.Sequential([KL.Dense(8), KL.Dense(4)])
    assert ours.weights == [] and list(theirs.weights) == []
    ours.build((None, 16))
    theirs.build((None, 16))
    assert len(ours.weights) == len(theirs.weights) == 4
    assert [w.shape for w in ours.get_weights()] == [tuple(w.shape) for w in theirs.get_weights()]


def test_a_functional_model_first_gives_the_input_shape_and_the_model_trains():
    x = np.random.rand(8, 3).astype("float32")
    inputs = Input((3,))
    ours = Sequential([Model(inputs, Dense(2, activation="relu")(inputs)), Dense(1)])
    their_inputs = keras.Input((3,))
    theirs = keras.Sequential([keras.Model(their_inputs, KL.Dense(2, activation="relu")(their_inputs)), KL.Dense(1)])
    assert ours.built and theirs.built
    assert len(ours.weights) == len(theirs.weights) == 4
    _copy_weights(ours, theirs)
    np.testing.assert_allclose(ours.predict(x, verbose=0), theirs.predict(x, verbose=0), rtol=1e-5)
    ours.compile(optimizer="adam", loss="mse")
    history = ours.fit(x, np.ones((8, 1)), epochs=5, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_a_convolutional_model_or_a_sequential_first_builds_every_layer():
    x = np.random.rand(1, 16, 16, 3).astype("float32")
    inputs = Input((16, 16, 3))
    firsts = [Model(inputs, Conv2D(4, 3, padding="same")(inputs)),
              Sequential([Input((16, 16, 3)), Conv2D(4, 3, padding="same")])]
    for first in firsts:
        model = Sequential([first, Flatten(), Dense(1)])
        assert model.built and all(layer.built for layer in model.layers)
        assert len(model.layers) == 3
        assert model(x).shape == (1, 1)
        assert model(Input(batch_shape=(1, 16, 16, 3))).shape[1:] == (1,)


def test_a_nested_sequential_without_layers_stays_unbuilt():
    ours, theirs = Sequential(), keras.Sequential()
    ours.add(Input(shape=(16,)))
    theirs.add(keras.Input(shape=(16,)))
    assert Sequential([ours]).built is keras.Sequential([theirs]).built is False


# --------------------------------------------------------- unbuilt surface
@pytest.mark.parametrize("name", ["inputs", "outputs", "input_shape", "output_shape", "input", "output"])
def test_an_unbuilt_model_has_no_graph_attributes(name):
    for model in (Sequential(), Sequential([Dense(2)])):
        assert not hasattr(model, name)
        error = raised(lambda: getattr(model, name))
        assert type(error) is AttributeError
        assert f"Sequential model {model.name!r} has no defined" in str(error)
    for model in (keras.Sequential(), keras.Sequential([KL.Dense(2)])):
        assert not hasattr(model, name)
    # Built, Keras has all but input and output (a Sequential is never called itself); we keep those too.
    assert hasattr(Sequential([Input((4,)), Dense(8)]), name)
    if name not in ("input", "output"):
        assert hasattr(keras.Sequential([KL.Input((4,)), KL.Dense(8)]), name)


def test_functional_properties_once_built():
    inputs, their_inputs = Input(shape=(2,)), keras.Input(shape=(2,))
    ours, theirs = Sequential(name="seq"), keras.Sequential(name="seq")
    ours.add(inputs)
    theirs.add(their_inputs)
    ours.add(Dense(4))
    theirs.add(KL.Dense(4))
    assert ours.inputs == [inputs] and theirs.inputs == [their_inputs]
    assert ours.outputs == [ours.layers[-1].output]
    assert ours.input_shape == theirs.input_shape == (None, 2)
    assert ours.output_shape == theirs.output_shape == (None, 4)


# ----------------------------------------------------- compute_output_shape
@pytest.mark.parametrize("shape", [(1, 2), (None, 2), (5, 7, 2)])
def test_compute_output_shape_of_an_unbuilt_model_builds_nothing(shape):
    ours, theirs = Sequential([Dense(4), Dense(8)]), keras.Sequential([KL.Dense(4), KL.Dense(8)])
    assert ours.compute_output_shape(shape) == theirs.compute_output_shape(shape)
    assert ours.built is theirs.built is False


def test_compute_output_shape_of_a_built_model_checks_its_input_shape():
    ours = Sequential([Input((2,)), Dense(4), Dense(8)])
    theirs = keras.Sequential([keras.Input((2,)), KL.Dense(4), KL.Dense(8)])
    assert ours.compute_output_shape((1, 2)) == theirs.compute_output_shape((1, 2)) == (1, 8)
    error = same_error(lambda: ours.compute_output_shape((None, 3)),
                        lambda: theirs.compute_output_shape((None, 3)), "incompatible")
    assert "expected shape=(None, 2)" in str(error)


def test_time_distributed_takes_an_unbuilt_sequential():
    ours, theirs = Sequential([Flatten()]), keras.Sequential([KL.Flatten()])
    assert not ours.built
    x = np.random.rand(2, 3, 4).astype("float32")
    inputs = Input((None, 4))
    model = Model(inputs, TimeDistributed(ours)(inputs))
    their_inputs = keras.Input((None, 4))
    their_model = keras.Model(their_inputs, KL.TimeDistributed(theirs)(their_inputs))
    np.testing.assert_array_equal(model(x), their_model(x))
    assert ours.built and theirs.built


def test_time_distributed_sequential_matches_keras_and_its_gradients():
    x = np.random.rand(2, 5, 4).astype("float32")
    ours = TimeDistributed(Sequential([Dense(3, activation="tanh"), Dense(2)]))
    theirs = KL.TimeDistributed(keras.Sequential([KL.Dense(3, activation="tanh"), KL.Dense(2)]))
    assert ours(Input((5, 4))).shape == theirs(keras.Input((5, 4))).shape == (None, 5, 2)
    _copy_weights(ours, theirs)
    np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-5, atol=1e-6)
    errors = gradient_check(ours, x).errors
    assert max(error for key, error in errors.items() if key != "input 0") < 1e-6, errors
    # The model casts its inputs to its Input's float32 (as Keras does), so the input's
    # finite differences need a step well above float32's resolution.
    assert gradient_check(ours, x, epsilon=1e-3).errors["input 0"] < 1e-4


# ---------------------------------------------------------------- structures
def test_a_dict_or_a_list_reaches_the_first_layer_whole():
    class DictLayer(Layer):
        def call(self, inputs):
            assert isinstance(inputs, dict)
            return inputs["a"] + inputs["b"]

    class ListLayer(Layer):
        def call(self, inputs):
            assert isinstance(inputs, list)
            return inputs[0] * inputs[1]

    a, b = np.random.rand(3, 2), np.random.rand(3, 2)
    model = Sequential([DictLayer(), Dense(2)])
    assert model({"a": a, "b": b}).shape == (3, 2)
    np.testing.assert_allclose(Sequential([ListLayer()])([a, b]), a * b, rtol=1e-6)
    model.summary(print_fn=lambda *args, **kwargs: None)


def test_a_model_with_several_inputs_first_builds_on_its_first_call():
    def make(model_cls, input_fn, dense):
        a, b = input_fn((2,)), input_fn((2,))
        return model_cls([a, b], dense(2)(a) + dense(2)(b))

    ours = Sequential([make(Model, Input, Dense), Dense(1)])
    theirs = keras.Sequential([make(keras.Model, keras.Input, KL.Dense), KL.Dense(1)])
    assert not hasattr(ours, "inputs") and not hasattr(theirs, "inputs")
    x = [np.ones((3, 2)), np.ones((3, 2))]
    assert ours(x).shape == tuple(theirs(x).shape) == (3, 1)


# -------------------------------------------------------------------- errors
def test_only_layers_can_be_added():
    for bad in ({}, 3, "dense"):
        same_error(lambda: Sequential(name="seq").add(bad), lambda: keras.Sequential(name="seq").add(bad),
                    "Only instances of")


def test_layer_names_must_be_unique():
    def add_twice(sequential, dense):
        model = sequential()
        model.add(dense(2, name="dense"))
        model.add(dense(2, name="dense"))

    same_error(lambda: add_twice(Sequential, Dense), lambda: add_twice(keras.Sequential, KL.Dense),
                "should have unique names")
    layer = Dense(2)
    assert len(Sequential([Input((2,)), layer, layer]).layers) == 2  # the same layer twice is allowed, as in Keras


@pytest.mark.parametrize("second", ["input", "input_layer"])
def test_a_second_input_is_refused(second):
    def add(sequential, make_input, input_layer):
        model = sequential()
        model.add(make_input(shape=(2,), batch_size=3))
        model.add(make_input(shape=(2,), batch_size=3) if second == "input" else input_layer(shape=(2,), batch_size=3))

    same_error(lambda: add(Sequential, Input, InputLayer), lambda: add(keras.Sequential, keras.Input, KL.InputLayer),
                "already been configured")


def test_building_for_another_shape_than_configured_is_refused():
    ours = Sequential([Input(shape=(2,), batch_size=3), Dense(2)])
    theirs = keras.Sequential([keras.Input(shape=(2,), batch_size=3), KL.Dense(2)])
    same_error(lambda: ours.build((3, 4)), lambda: theirs.build((3, 4)), "already been configured")
    ours.build((3, 2))
    theirs.build((3, 2))
    assert ours.built and theirs.built


def test_a_model_without_layers_cannot_be_called_or_built():
    x = np.random.rand(3, 2)
    same_error(lambda: Sequential()(x), lambda: keras.Sequential()(x), "no layers")
    same_error(lambda: Sequential().build((None, 2)), lambda: keras.Sequential().build((None, 2)), "no layers")


def test_pop_on_an_empty_model_raises_index_error():
    our_error = raised(lambda: Sequential(name="empty").pop())
    assert type(our_error) is type(raised(lambda: keras.Sequential().pop())) is IndexError
    assert "Sequential model 'empty' has no layers to pop" in str(our_error)


def test_the_layers_attribute_is_reserved():
    our_error = raised(lambda: setattr(Sequential(), "layers", [Dense(4)]))
    their_error = raised(lambda: setattr(keras.Sequential(), "layers", [KL.Dense(4)]))
    assert type(our_error) is type(their_error) is AttributeError
    assert "Use `add()` and `pop()`" in str(our_error) and "reserved" in str(our_error)

    class Subclassed(Model):
        def call(self, inputs):
            return inputs

    class TheirSubclassed(keras.Model):
        def call(self, inputs):
            return inputs

    our_error = raised(lambda: setattr(Subclassed(), "layers", []))
    their_error = raised(lambda: setattr(TheirSubclassed(), "layers", []))
    assert type(our_error) is type(their_error) is AttributeError
    assert "reserved" in str(our_error) and "reserved" in str(their_error)


def test_a_layer_with_several_outputs_then_a_layer_taking_one_is_refused():
    def build(model_cls, input_fn, dense, sequential):
        inputs = input_fn((2,))
        two_outputs = model_cls(inputs, [dense(2)(inputs), dense(3)(inputs)])
        return sequential([input_fn((2,)), two_outputs, dense(1)])

    error = same_error(lambda: build(Model, Input, Dense, Sequential),
                        lambda: build(keras.Model, keras.Input, KL.Dense, keras.Sequential), "expects 1 input")
    assert "received 2 input" in str(error)


def test_a_last_layer_with_several_outputs_gives_several_outputs():
    def build(model_cls, input_fn, dense, sequential):
        inputs = input_fn((2,))
        return sequential([input_fn((2,)), model_cls(inputs, [dense(2)(inputs), dense(3)(inputs)])])

    ours, theirs = build(Model, Input, Dense, Sequential), build(keras.Model, keras.Input, KL.Dense, keras.Sequential)
    assert [t.shape for t in ours.outputs] == [t.shape for t in theirs.outputs] == [(None, 2), (None, 3)]


def test_a_layer_with_several_inputs_fed_one_tensor_is_refused():
    def build(model_cls, input_fn, dense, sequential):
        a, b = input_fn((2,)), input_fn((2,))
        return sequential([input_fn((2,)), model_cls([a, b], dense(2)(a))])

    our_error = raised(lambda: build(Model, Input, Dense, Sequential))
    their_error = raised(lambda: build(keras.Model, keras.Input, KL.Dense, keras.Sequential))
    assert type(our_error) is type(their_error) is ValueError
    assert "expects 2 input" in str(our_error) and "expects 2" in str(their_error)


def test_a_refused_layer_leaves_the_model_as_it_was():
    inputs = Input((3,))
    model = Sequential([Input((2,)), Dense(3), Model(inputs, [Dense(1)(inputs), Dense(4)(inputs)])])
    with pytest.raises(ValueError, match="expects 1 input"):
        model.add(Dense(1))
    assert len(model.layers) == 2 and model.output_shape == [(None, 1), (None, 4)]
    assert [a.shape for a in model(np.ones((2, 2)))] == [(2, 1), (2, 4)]


# ------------------------------------------------------------- serialization
def _round_trip(model):
    config = model.get_config()
    revived = Sequential.from_config(config)
    assert revived.get_config() == config
    return revived


def test_config_round_trips_unbuilt_built_and_with_an_input():
    model = Sequential([Dense(4), Dense(5)], name="seq")
    revived = _round_trip(model)
    assert len(revived.layers) == 2 and not revived.built
    model.build((2, 3))
    revived = _round_trip(model)
    assert len(revived.layers) == 2 and revived.built and revived.input_shape == (None, 3)
    theirs = keras.Sequential([KL.Dense(4), KL.Dense(5)])
    theirs.build((2, 3))
    assert [layer["class_name"] for layer in model.get_config()["layers"]] == \
        [layer["class_name"] for layer in theirs.get_config()["layers"]] == ["InputLayer", "Dense", "Dense"]
    assert model.get_config()["build_input_shape"] == [None, 3]  # Keras keeps the batch size: (2, 3)
    model = Sequential([Input(shape=(2,), batch_size=3), Dense(4), Dense(5), Dense(6)])
    assert len(_round_trip(model).layers) == 3
