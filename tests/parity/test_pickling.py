"""pickle, copy and cloudpickle of layers and models go through the .nw bytes (engine/pickling.py),
compared with Keras 3 where Keras defines the behaviour."""

import copy
import io
import pickle
import pickletools

import cloudpickle
import keras
import numpy as np
import pytest

from engine import Input, Layer, Model, ModelFormatError, Sequential
from engine.pickling import rebuild
from engine.files.saving import write_archive
from layers import Dense, Dropout, Lambda
from tests.engine.test_saving_catalog import EXAMPLES, _model_and_data


def _globals(stream):
    """The (module, name) of every global a pickle stream loads, and its opcode names.

    STACK_GLOBAL takes the two strings last pushed, directly or from the memo."""
    found, pushed, memo, opcodes = [], [], [], set()
    for opcode, argument, _ in pickletools.genops(stream):
        opcodes.add(opcode.name)
        if opcode.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
            pushed.append(argument)
        elif opcode.name == "MEMOIZE":
            memo.append(pushed[-1] if pushed else None)
        elif opcode.name in ("BINGET", "LONG_BINGET", "GET"):
            pushed.append(memo[int(argument)])
        elif opcode.name == "STACK_GLOBAL":
            found.append(tuple(pushed[-2:]))
            pushed.append(None)
        elif opcode.name == "GLOBAL":
            found.append(tuple(argument.split(" ")))
        else:
            pushed.append(None)
    return found, opcodes


def _functional():
    x = Input(shape=(3,), name="x")
    hidden = Dense(4, activation="relu", name="hidden")(x)
    return Model(x, [Dense(2, name="a")(hidden), Dense(1, name="b")(hidden)], name="two_heads")


X = np.random.default_rng(0).normal(size=(5, 3)).astype("float32")


def _assert_same_outputs(first, second, data=X):
    for a, b in zip(first(data), second(data)):
        np.testing.assert_array_equal(a, b)


def test_pickle_stream_holds_only_the_rebuild_function_and_bytes():
    model = _functional()
    stream = pickle.dumps(model)
    found, opcodes = _globals(stream)
    assert found == [("engine.pickling", "rebuild")]
    # One call (rebuild) and no object state: nothing of ours is pickled but the bytes.
    assert not opcodes & {"BUILD", "NEWOBJ", "NEWOBJ_EX", "INST", "OBJ", "EMPTY_DICT"}
    assert [op.name for op, _, _ in pickletools.genops(stream)].count("REDUCE") == 1
    loaded = pickle.loads(stream)
    assert type(loaded) is type(model) and loaded.name == "two_heads"
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    _assert_same_outputs(model, loaded)


@pytest.mark.parametrize("how", ["pickle", "deepcopy", "copy", "cloudpickle"])
def test_every_way_of_copying_gives_an_independent_equal_model(how):
    model = _functional()
    copied = {"pickle": lambda m: pickle.loads(pickle.dumps(m)), "deepcopy": copy.deepcopy, "copy": copy.copy,
              "cloudpickle": lambda m: cloudpickle.loads(cloudpickle.dumps(m))}[how](model)
    _assert_same_outputs(model, copied)
    # As in Keras, even copy.copy makes new layers and weights.
    assert copied is not model and copied.layers[1] is not model.layers[1]
    copied.layers[1].set_weights([np.zeros_like(w) for w in copied.layers[1].get_weights()])
    assert np.any(model.layers[1].get_weights()[0] != 0)


def test_copy_copy_makes_new_layers_as_in_keras():
    x = keras.Input((3,))
    theirs = keras.Model(x, keras.layers.Dense(2)(x))
    assert copy.copy(theirs).layers[1] is not theirs.layers[1]
    model = _functional()
    assert copy.copy(model).layers[1] is not model.layers[1]


def test_unbuilt_sequential_pickles_as_in_keras():
    theirs = keras.Sequential(name="seq")
    theirs.add(keras.layers.Dense(4))
    ours = Sequential(name="seq")
    ours.add(Dense(4))
    result = pickle.loads(pickle.dumps(ours))
    assert len(result.layers) == len(pickle.loads(pickle.dumps(theirs)).layers) == 1
    assert result.name == "seq" and not result.built
    assert result.layers[0].get_config() == ours.layers[0].get_config()


def test_built_sequential_round_trips_exactly():
    model = Sequential([Input(shape=(3,)), Dense(4, activation="tanh"), Dropout(0.5), Dense(2)])
    loaded = pickle.loads(pickle.dumps(model))
    assert isinstance(loaded, Sequential)
    np.testing.assert_array_equal(loaded(X), model(X))


def _compiled_model():
    x = Input(shape=(3,))
    model = Model(x, Dense(1)(Dense(4, activation="tanh")(x)))
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return model


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_fit_continues_after_unpickling_as_without(how):
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(32, 3)).astype("float32"), rng.normal(size=(32, 1)).astype("float32")
    model = _compiled_model()
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    copied = pickle.loads(pickle.dumps(model)) if how == "pickle" else copy.deepcopy(model)
    assert copied.optimizer.iterations == model.optimizer.iterations == 8
    for mine, theirs in zip(model.optimizer.variables, copied.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(mine.value), np.asarray(theirs.value))
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    copied.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    for a, b in zip(model.get_weights(), copied.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert copied.evaluate(x, y, verbose=0) == model.evaluate(x, y, verbose=0)


def test_single_layer_pickles_built_or_not_as_in_keras():
    theirs = keras.layers.Dense(2)
    assert pickle.loads(pickle.dumps(theirs)).get_config() == theirs.get_config()
    layer = Dense(2, activation="relu", name="d")
    unbuilt = pickle.loads(pickle.dumps(layer))
    assert unbuilt.get_config() == layer.get_config() and not unbuilt.built
    layer(X)
    built = pickle.loads(pickle.dumps(layer))
    assert built.built and built.name == "d"
    np.testing.assert_array_equal(built(X), layer(X))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_registered_layer_round_trips_exactly(name):
    model, data = _model_and_data(name)
    expected = model(data)
    for copied in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        for a, b in zip(np.atleast_1d(expected) if isinstance(expected, np.ndarray) else expected,
                        np.atleast_1d(copied(data)) if isinstance(expected, np.ndarray) else copied(data)):
            np.testing.assert_array_equal(a, b)
    layer = model.layers[-1]
    alone = pickle.loads(pickle.dumps(layer))
    assert alone.get_config() == layer.get_config()
    assert [w.path for w in alone.weights] == [w.path for w in layer.weights]
    for a, b in zip(alone.get_weights(), layer.get_weights()):
        np.testing.assert_array_equal(a, b)


class Block(Layer):
    """A custom layer made of layers (unregistered): the inner Dense builds in call."""

    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.inner = Dense(units, activation="tanh")

    def call(self, inputs):
        return self.inner(inputs) * 2.0

    def get_config(self):
        return {**super().get_config(), "units": self.units}


class TwoLayerNet(Model):
    """A subclassed model (unregistered)."""

    def __init__(self, hidden=4, **kwargs):
        super().__init__(**kwargs)
        self.hidden = hidden
        self.block = Block(hidden)
        self.head = Dense(2)

    def call(self, inputs):
        return self.head(self.block(inputs))

    def get_config(self):
        return {**super().get_config(), "hidden": self.hidden}


def test_subclassed_model_travels_with_its_class_by_reference():
    model = TwoLayerNet(hidden=5, name="net")
    model.compile(optimizer="sgd", loss="mse")
    model.fit(X, np.ones((5, 2), "float32"), epochs=1, verbose=0)
    stream = pickle.dumps(model)
    found, _ = _globals(stream)
    # Block is made by TwoLayerNet.__init__, so the config does not name it and it is not sent.
    assert set(found) == {("engine.pickling", "rebuild"), (__name__, "TwoLayerNet")}
    loaded = pickle.loads(stream)
    assert type(loaded) is TwoLayerNet and loaded.hidden == 5 and loaded.name == "net"
    np.testing.assert_array_equal(loaded(X), model(X))
    assert loaded.optimizer.iterations == model.optimizer.iterations == 1
    np.testing.assert_array_equal(copy.deepcopy(model)(X), model(X))


def test_custom_layers_of_a_functional_model_travel_by_reference():
    x = Input(shape=(3,))
    model = Model(x, Block(2, name="block")(x))
    loaded = pickle.loads(pickle.dumps(model))
    assert type(loaded.get_layer("block")) is Block
    np.testing.assert_array_equal(loaded(X), model(X))
    alone = pickle.loads(pickle.dumps(model.get_layer("block")))
    np.testing.assert_array_equal(alone(X), model(X))


def scale_by_three(x):
    return x * 3.0


def test_unregistered_functions_travel_by_reference_and_lambdas_by_cloudpickle():
    x = Input(shape=(3,))
    model = Model(x, Lambda(scale_by_three)(x))
    found, _ = _globals(pickle.dumps(model))
    assert (__name__, "scale_by_three") in found
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model))(X), X * 3.0)
    with_lambda = Model(x, Lambda(lambda t: t + 1.0)(x))
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(with_lambda)  # as pickle does with any lambda
    np.testing.assert_array_equal(cloudpickle.loads(cloudpickle.dumps(with_lambda))(X), X + 1.0)


def test_unpickling_loads_in_safe_mode():
    x = Input(shape=(3,))
    model = Model(x, Lambda(scale_by_three)(x))
    buffer = io.BytesIO()
    write_archive(model, buffer)
    # The bytes name a function by module:qualname; rebuild imports nothing a stream names.
    with pytest.raises(ModelFormatError, match="safe mode loads no code named by a file"):
        rebuild(buffer.getvalue())
    np.testing.assert_array_equal(rebuild(buffer.getvalue(), {f"{__name__}:scale_by_three": scale_by_three})(X),
                                  X * 3.0)


def test_a_model_predicts_in_another_process():
    import multiprocessing
    import operator

    model = _functional()
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        remote = pool.apply(operator.methodcaller("predict", X, verbose=0), (model,))
    for a, b in zip(remote, model.predict(X, verbose=0)):
        np.testing.assert_array_equal(a, b)


def test_compile_arguments_survive_a_pickle():
    x = Input(shape=(3,), name="x")
    model = Model(x, {"p": Dense(1, activation="sigmoid", name="p")(x), "r": Dense(2, name="r")(x)})
    model.compile(optimizer="sgd", loss={"p": "bce", "r": "mse"}, loss_weights={"p": 0.5, "r": 2.0},
                  metrics={"p": ["acc"]}, weighted_metrics={"r": ["mae"]})
    data = X, {"p": np.ones((5, 1), "float32"), "r": np.zeros((5, 2), "float32")}
    weights = np.arange(5, dtype="float32")
    expected = model.evaluate(*data, sample_weight=weights, return_dict=True, verbose=0)
    loaded = pickle.loads(pickle.dumps(model))
    assert loaded.evaluate(*data, sample_weight=weights, return_dict=True, verbose=0) == expected
