"""graph.to_python: the source it writes rebuilds each model with an equal get_config(): the 14
keras.applications architectures (built from Keras' configs, tests/graph/data) and models with
nested, shared, multi-input, dict-input, multi-output and operator layers; and it reads as the
functional API (one line per call, only non-default arguments, operators as operators)."""

import gzip
import json
import re

import numpy as np
import pytest

from engine import Input, Layer, Model, Sequential, model_from_json, register_serializable
from engine.network.ops import BinaryOp, GetItem
from engine.network.qualified_names import layer_paths
from engine.utils import clear_session
from graph import to_python
from layers import (LSTM, Bidirectional, Concatenate, Conv2D, Dense, Dropout, Flatten, MaxPooling2D,
                    TimeDistributed)
from tests.graph.data.make_keras_applications import PATH, SIZES

_OPERATOR_CLASSES = {"BinaryOp", "UnaryOp", "Negative", "Round", "GetItem", "ReshapeOp", "SqueezeOp"}


@register_serializable(package="to_python_test")
class Scale(Layer):
    """A registered layer of the user's own: the source imports it from this module."""

    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


def rebuild(model):
    """The model ``build_model()`` of ``to_python(model)`` makes, and the source."""
    source = to_python(model)
    namespace = {}
    exec(compile(source, "<to_python>", "exec"), namespace)  # our own generated source, not a user's file
    return namespace["build_model"](), source


def operator_names(config):
    """The names of the operator layers in ``config``, at every depth, in order."""
    names = []
    for entry in config.get("layers", []):
        if entry["class_name"] in _OPERATOR_CLASSES:
            names.append(entry["name"])
        if "layers" in entry["config"]:
            names.extend(operator_names(entry["config"]))
    return names


def assert_same_config(original, rebuilt):
    """``rebuilt.get_config() == original.get_config()``, but for the automatic names of
    operator layers written as operators (``x + 3.0`` takes no name), which must be automatic
    in both and are mapped one to one, in order."""
    expected, got = original.get_config(), rebuilt.get_config()
    renames = {}
    for old, new in zip(operator_names(expected), operator_names(got), strict=True):
        if old != new:
            assert re.fullmatch(r"[a-z_]+?(_\d+)?", old) and new.rstrip("_0123456789") == old.rstrip("_0123456789")
            renames[new] = old

    def rename(value, key=None):  # a layer's "name", and the layer of a reference [layer, node, tensor]
        if isinstance(value, str):
            return renames.get(value, value) if key == "name" else value
        if isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and isinstance(value[1], int):
            return [renames.get(value[0], value[0]), *value[1:]]
        if isinstance(value, (list, tuple)):
            return type(value)(rename(v) for v in value)
        if isinstance(value, dict):
            return {k: rename(v, k) for k, v in value.items()}
        return value

    assert rename(got) == expected


@pytest.fixture(scope="module")
def applications():
    with gzip.open(PATH, "rt", encoding="utf-8") as file:
        configs = json.load(file)["configs"]
    return {name: model_from_json(json.dumps(configs[name])) for name in SIZES}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SIZES))
def test_applications_rebuild_with_equal_configs(applications, name):
    original = applications[name]
    rebuilt, source = rebuild(original)
    assert_same_config(original, rebuilt)
    layers = len(layer_paths(original))  # at every depth: a nested Sequential lists one layer per line
    assert len(source.splitlines()) < layers + 40  # one line per call, a few for the rest


@pytest.mark.slow
def test_application_source_reads_as_keras_code(applications):
    source = to_python(applications["MobileNetV3Small"])
    assert "from engine import Input, Model\n" in source
    assert "from layers import Activation, Add, BatchNormalization, Conv2D," in source
    assert re.search(r"^    add(_\d+)? = expanded_conv_squeeze_excite_conv_1 \+ 3\.0$", source, re.M)
    assert re.search(r"^    multiply(_\d+)? = re_lu_1 \* 0\.16666666666666666$", source, re.M)
    source = to_python(applications["ConvNeXtTiny"])
    assert "def build_convnext_tiny_stem():\n    return Sequential([\n        Input(shape=(32, 32, 3), name=" in source
    assert re.search(r"= convnext_tiny_stem \+ convnext_tiny_stage_0_block_0_identity$", source, re.M)
    # ResNet50's pooling keeps strides=(2, 2), which differs from the default that follows pool_size=(3, 3)
    assert ('MaxPooling2D(pool_size=(3, 3), strides=(2, 2), name="pool1_pool")' in to_python(applications["ResNet50"]))


def test_layers_are_written_with_their_non_default_arguments():
    x = Input(shape=(8, 8, 3), name="image")
    h = Conv2D(4, 3, padding="same", kernel_initializer="he_normal", kernel_regularizer="l2", name="conv")(x)
    h = Dense(5, use_bias=False, trainable=False, name="frozen")(Flatten(name="flat")(h))
    model = Model(x, Dropout(0.5, seed=3, name="drop")(h), name="small")
    rebuilt, source = rebuild(model)
    assert rebuilt.get_config() == model.get_config()
    assert ('conv = Conv2D(4, (3, 3), padding="same", kernel_initializer=HeNormal(), kernel_regularizer=L2(), '
            'name="conv")(image)') in source
    assert 'frozen = Dense(5, trainable=False, use_bias=False, name="frozen")(flat)' in source
    assert 'drop = Dropout(0.5, seed=3, name="drop")(frozen)' in source
    assert "from engine.network.initializers import HeNormal\nfrom engine.training.regularizers import L2\n" in source


def test_shared_layer_is_one_variable_called_twice():
    left, right = Input(shape=(3,), name="left"), Input(shape=(3,), name="right")
    shared = Dense(4, activation="relu", name="shared")
    merged = Concatenate(name="merged")([shared(left), shared(right)])
    model = Model([left, right], merged, name="siamese")
    rebuilt, source = rebuild(model)
    assert rebuilt.get_config() == model.get_config()
    assert rebuilt.get_layer("shared") is rebuilt.layers[2] and len(rebuilt.get_layer("shared").inbound_nodes) == 2
    assert ('    shared = Dense(4, activation="relu", name="shared")\n'
            "    shared_call0 = shared(left)\n"
            "    shared_call1 = shared(right)\n"
            '    merged = Concatenate(name="merged")([shared_call0, shared_call1])\n') in source


def test_nested_functional_inside_sequential_and_sequential_inside_functional():
    x = Input(shape=(6,), name="features")
    encoder = Model(x, Dense(4, name="code")(Dense(5, activation="tanh", name="hidden")(x)), name="encoder")
    stack = Sequential([Input(shape=(6,), name="stack_input"), encoder, Dense(2, name="head")], name="stack")
    y = Input(shape=(6,), name="raw")
    model = Model(y, Dense(1, name="out")(stack(y)), name="outer")
    rebuilt, source = rebuild(model)
    assert rebuilt.get_config() == model.get_config()
    assert source.index("def build_encoder():") < source.index("def build_stack():") < source.index(
        "def build_model():")
    assert ('    return Sequential([\n        Input(shape=(6,), name="stack_input"),\n        build_encoder(),\n'
            '        Dense(2, name="head"),\n    ], name="stack")') in source
    assert "    stack = build_stack()(raw)\n" in source


def test_nested_model_called_twice_stays_one_model():
    x = Input(shape=(3,), name="x")
    tower = Model(x, Dense(2, name="proj")(x), name="tower")
    a, b = Input(shape=(3,), name="a"), Input(shape=(3,), name="b")
    model = Model([a, b], [tower(a), tower(b)], name="twins")
    rebuilt, source = rebuild(model)
    assert rebuilt.get_config() == model.get_config()
    assert "    tower = build_tower()\n    tower_call0 = tower(a)\n    tower_call1 = tower(b)\n" in source
    assert "return Model(inputs=[a, b], outputs=[tower_call0, tower_call1], name=\"twins\")" in source


def test_dict_inputs_tuple_outputs_and_multiple_outputs_of_a_call():
    tokens, extra = Input(shape=(5, 3), name="tokens"), Input(shape=(2,), name="extra")
    sequence, state_h, state_c = LSTM(4, return_sequences=True, return_state=True, name="lstm")(tokens)
    both = Bidirectional(LSTM(2, name="inner"), merge_mode="sum", name="bi")(sequence)
    steps = TimeDistributed(Dense(3, name="per_step"), name="timed")(sequence)
    joined = Concatenate(name="joined")([both, state_h, extra])
    model = Model({"tokens": tokens, "extra": extra}, (joined, steps, state_c), name="reader")
    rebuilt, source = rebuild(model)
    assert rebuilt.get_config() == model.get_config()
    assert ("    lstm_out0, lstm_out1, lstm_out2 = LSTM(4, return_sequences=True, return_state=True, "
            'name="lstm")(tokens)\n') in source
    assert ('bi = Bidirectional(LSTM(2, name="forward_inner"), merge_mode="sum", '
            'backward_layer=LSTM(2, go_backwards=True, name="backward_inner"), name="bi")(lstm_out0)') in source
    assert 'timed = TimeDistributed(Dense(3, name="per_step"), name="timed")(lstm_out0)' in source
    assert ('return Model(inputs={"tokens": tokens, "extra": extra}, outputs=(joined, timed, lstm_out2), '
            'name="reader")') in source


def test_operator_layers_are_written_as_operators():
    clear_session()
    a, b, w = Input(shape=(4, 3), name="a"), Input(shape=(4, 3), name="b"), Input(shape=(3, 3), name="w")
    h = (a + 1.0) * b - 2.0 / abs(-a) @ w
    h = round(h[:, 0] ** 2, 1).reshape((-1, 3, 1)).squeeze(-1)
    mask = ~((a[:, 0] < 0.5) & (b[:, 0] >= 0.0))
    model = Model([a, b, w], [h, mask], name="ops")
    rebuilt, source = rebuild(model)
    assert_same_config(model, rebuilt)
    rng = np.random.default_rng(0)
    x = [rng.normal(size=shape).astype("float32") for shape in ((2, 4, 3), (2, 4, 3), (2, 3, 3))]
    for got, expected in zip(rebuilt.predict(x, verbose=0), model.predict(x, verbose=0)):
        np.testing.assert_array_equal(got, expected)
    for line in ("add = a + 1.0", "multiply = add * b", "negative = -a", "absolute = abs(negative)",
                 "divide = 2.0 / absolute", "matmul = divide @ w", "subtract = multiply - matmul",
                 "get_item = subtract[:, 0]",
                 "power = get_item ** 2", "round_2 = round(power, 1)", "reshape = round_2.reshape((-1, 3, 1))",
                 "squeeze = reshape.squeeze(-1)", "less = get_item_1 < 0.5", "logical_not = ~logical_and"):
        assert f"    {line}\n" in source, line
    assert "BinaryOp" not in source and "GetItem" not in source


def test_operator_layers_with_names_of_their_own_keep_them():
    x = Input(shape=(4, 3), name="x")
    shifted = BinaryOp("add", constant=np.arange(3, dtype="float32"), name="shift")(x)
    first = GetItem((slice(None), 0), name="first")(shifted)
    model = Model(x, BinaryOp("equal", name="same")([first, first]), name="named_ops")
    rebuilt, source = rebuild(model)
    assert rebuilt.get_config() == model.get_config()
    assert 'shift = BinaryOp("add", constant=[0.0, 1.0, 2.0], name="shift")(x)' in source
    assert 'first = GetItem((slice(None, None, None), 0), name="first")(shift)' in source
    assert 'same = BinaryOp("equal", name="same")([first, first])' in source


def test_registered_layer_of_the_user_is_imported_from_its_module():
    x = Input(shape=(3,), name="x")
    model = Model(x, Scale(0.5, name="half")(x), name="custom")
    rebuilt, source = rebuild(model)
    assert rebuilt.get_config() == model.get_config()
    assert "from tests.graph.test_to_python import Scale\n" in source
    assert 'half = Scale(factor=0.5, name="half")(x)' in source


def test_sequential_built_without_input():
    model = Sequential([Conv2D(2, 3, name="conv"), MaxPooling2D(3, strides=1, name="pool")], name="plain")
    model.build((None, 9, 9, 1))
    rebuilt, source = rebuild(model)
    assert rebuilt.get_config() == model.get_config()
    # build() put an InputLayer first, as in Keras; the pooling's strides differ from the default, its pool_size
    assert ('Sequential([\n        Input(shape=(9, 9, 1), name="input_layer'
            in source)
    assert 'MaxPooling2D(pool_size=(3, 3), strides=(1, 1), name="pool")' in source


def test_unbuilt_sequential_and_local_classes_are_refused_with_what_to_do():
    with pytest.raises(ValueError, match=r"functional or built Sequential model, received Sequential 'lazy'\. "
                                         r"Build a Sequential first"):
        to_python(Sequential([Dense(2)], name="lazy"))

    class Local(Layer):
        def call(self, inputs):
            return inputs

    x = Input(shape=(3,))
    with pytest.raises(ValueError, match=r"cannot import layer class '.*Local'.*Define it at the top level"):
        to_python(Model(x, Local(name="local")(x)))


def test_operator_whose_fresh_name_could_be_taken_keeps_its_name():
    clear_session()
    Input(shape=(3,)) + 1.0  # takes the automatic name "add"
    x = Input(shape=(3,), name="x")
    model = Model(x, Dense(3, name="add")(x) + 1.0, name="clash")  # its operator is "add_1", which
    # in a new session would be "add", the Dense's name: so it is written with its name
    rebuilt, source = rebuild(model)
    assert rebuilt.get_config() == model.get_config()
    assert '    add_1 = BinaryOp("add", constant=1.0, name="add_1")(add)\n' in source


def test_command_line_prints_or_writes_the_source(tmp_path, capsys):
    from graph.cli import main

    x = Input(shape=(3,), name="x")
    model = Model(x, Dense(2, activation="relu", name="hidden")(x), name="saved")
    model.save(tmp_path / "saved.nw")
    main(["python", str(tmp_path / "saved.nw")])
    printed = capsys.readouterr().out
    assert printed == to_python(model)
    main(["python", str(tmp_path / "saved.nw"), "-o", str(tmp_path / "saved.py")])
    assert capsys.readouterr().out == f"wrote {tmp_path / 'saved.py'}\n"
    assert (tmp_path / "saved.py").read_text() == printed
