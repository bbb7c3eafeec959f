"""Model files, weight files and JSON: round trips, atomic writes, hostile files."""

import io
import json
import os
import zipfile

import numpy as np
import pytest

from engine import (
    Input,
    Layer,
    Model,
    ModelFormatError,
    Sequential,
    load_model,
    model_from_json,
    register_serializable,
)
from engine.files import saving
from layers import Activation, Dense


def _model():
    a = Input(shape=(3,), name="a")
    b = Input(shape=(3,), name="b")
    shared = Dense(4, name="shared")
    inner_in = Input(shape=(4,), name="inner_in")
    inner = Model(inner_in, Dense(2, name="dense")(inner_in), name="inner")
    merged = shared(a) + shared(b) * 2.0
    return Model(inputs={"a": a, "b": b}, outputs=[inner(merged), Activation("sigmoid", name="dense_out")(merged[:, 1:])], name="m")


DATA = {"a": np.random.default_rng(0).normal(size=(5, 3)), "b": np.random.default_rng(1).normal(size=(5, 3))}


def _assert_same_predictions(first, second, data=DATA):
    for x, y in zip(first(data), second(data)):
        np.testing.assert_array_equal(x, y)


def test_file_round_trip_is_bit_for_bit(tmp_path):
    model = _model()
    path = tmp_path / "m.nw"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["config.json", "metadata.json", "weights.npz"]
        metadata = json.loads(archive.read("metadata.json"))
    assert metadata["format_version"] == 1 and "nodeweave_version" in metadata and "date_saved" in metadata
    loaded = load_model(path)
    _assert_same_predictions(model, loaded)
    assert len(loaded.get_layer("shared").inbound_nodes) == 2


def test_weight_paths_are_qualified_by_nested_model():
    assert sorted(saving.weight_paths(_model())) == [
        "inner/dense/bias", "inner/dense/kernel", "shared/bias", "shared/kernel"]


def test_json_round_trip_has_fresh_weights_and_same_graph():
    model = _model()
    rebuilt = model_from_json(model.to_json())
    assert [l.name for l in rebuilt.layers] == [l.name for l in model.layers]
    rebuilt.set_weights(model.get_weights())
    _assert_same_predictions(model, rebuilt)
    with pytest.raises(ModelFormatError, match="The model JSON is malformed"):
        model_from_json("{not json")


def test_sequential_files_with_and_without_input(tmp_path):
    for index, model in enumerate([Sequential([Input(shape=(4,)), Dense(3), Dense(1)]),
                                   Sequential([Dense(3, input_shape=(4,)), Activation("relu")])]):
        path = tmp_path / f"s{index}.nw"
        model.save(path)
        x = np.random.rand(2, 4)
        np.testing.assert_array_equal(load_model(path)(x), model(x))


def test_weights_files_match_by_path_and_report_mismatches(tmp_path):
    model = _model()
    path = tmp_path / "w.npz"
    model.save_weights(path)
    other = _model()
    assert other.load_weights(path) == []
    _assert_same_predictions(model, other)

    x = Input(shape=(3,), name="a")
    partial = Model(x, Dense(4, name="shared")(x))
    with pytest.raises(ModelFormatError, match="has weight 'inner/dense/kernel', which the model does not have"):
        partial.load_weights(path)
    skipped = partial.load_weights(path, skip_mismatch=True)
    assert any("inner/dense/kernel" in s for s in skipped)
    np.testing.assert_array_equal(partial.get_layer("shared").kernel.value, model.get_layer("shared").kernel.value)

    y = Input(shape=(5,), name="a")
    wrong = Model(y, Dense(4, name="shared")(y))
    with pytest.raises(ModelFormatError, match=r"weight 'shared/kernel' has shape \(5, 4\) in the model but \(3, 4\)"):
        wrong.load_weights(path)


def _mlp(units=32, extra=False):
    # The keras-io Sequential guide's transfer-learning model.
    return Sequential([Input(shape=(784,)), Dense(units, activation="relu"), Dense(10)] + ([Dense(3)] if extra else []))


def test_a_second_instance_loads_by_structure_as_in_keras(tmp_path):
    import keras

    path = tmp_path / "pretrained.weights.npz"
    pretrained = _mlp()
    pretrained.save_weights(path)
    model = _mlp()  # automatic layer names: others than the pretrained model's
    assert set(saving.weight_paths(model)).isdisjoint(saving.weight_paths(pretrained))
    assert model.load_weights(path) == []
    x = np.random.default_rng(2).normal(size=(4, 784)).astype("float32")
    np.testing.assert_array_equal(model(x), pretrained(x))
    assert _mlp().load_weights(path, skip_mismatch=True) == []  # nothing to skip

    def functional():
        x = Input(shape=(3,))
        inner_input = Input(shape=(4,))
        inner = Model(inner_input, Dense(2)(inner_input))
        return Model(x, inner(Dense(4, activation="relu")(x)))

    first, second = functional(), functional()
    first.save_weights(tmp_path / "functional.weights.npz")
    second.load_weights(tmp_path / "functional.weights.npz")
    np.testing.assert_array_equal(second(x[:, :3]), first(x[:, :3]))

    def keras_mlp():  # Keras 3 loads the same two instances
        return keras.Sequential([keras.Input(shape=(784,)), keras.layers.Dense(32, activation="relu"),
                                 keras.layers.Dense(10)])

    theirs = keras_mlp()
    theirs.save_weights(tmp_path / "keras.weights.h5")
    again = keras_mlp()
    assert again.layers[0].name != theirs.layers[0].name
    again.load_weights(tmp_path / "keras.weights.h5")
    np.testing.assert_array_equal(np.asarray(again(x)), np.asarray(theirs(x)))


def test_weights_matching_neither_by_name_nor_by_structure_are_refused(tmp_path):
    path = tmp_path / "pretrained.weights.npz"
    _mlp().save_weights(path)
    wider = _mlp(units=64)
    # The same structure, other shapes: matched by order, each shape is then refused.
    with pytest.raises(ModelFormatError, match=(
            r"weight 'dense/kernel' has shape \(784, 64\) in the model but \(784, 32\) in .*pretrained.weights.npz")):
        wider.load_weights(path)
    deeper = _mlp(extra=True)
    with pytest.raises(ModelFormatError, match=r"match neither by name nor by structure \(in order, they first differ "
                                               r"at weight 4: 'dense_\d+/kernel' in the model, nothing in .*\); "
                                               r".*skip_mismatch=True"):
        deeper.load_weights(path)
    skipped = deeper.load_weights(path, skip_mismatch=True)  # skips by name, as before
    assert len(skipped) == 10 and not any("structure" in message for message in skipped)


def test_exact_names_load_by_name_whatever_their_order(tmp_path):
    x = Input(shape=(3,))
    model = Model(x, Dense(3, name="b")(Dense(3, name="a")(x)))
    rng = np.random.default_rng(3)
    arrays = {name: rng.normal(size=variable.shape).astype("float32")
              for name, variable in saving.weight_paths(model).items()}
    # b before a: by order a would get b's weights, which have the same names and shapes.
    np.savez(tmp_path / "swapped.npz", **{name: arrays[name] for name in ["b/kernel", "b/bias", "a/kernel", "a/bias"]})
    assert model.load_weights(tmp_path / "swapped.npz") == []
    for name, variable in saving.weight_paths(model).items():
        np.testing.assert_array_equal(variable.value, arrays[name])


def test_extensions_are_checked(tmp_path):
    with pytest.raises(ValueError, match=r"save\(\) writes .nw files .* and .keras archives"):
        _model().save(tmp_path / "m.h5")
    with pytest.raises(ValueError, match=r"save_weights\(\) needs a filename ending in `\.weights\.h5` .* or `\.npz`"):
        _model().save_weights(tmp_path / "m.nw")


@pytest.mark.parametrize("failing", ["writestr", "fsync", "replace"])
def test_a_failed_save_leaves_the_previous_file_intact(tmp_path, monkeypatch, failing):
    path = tmp_path / "m.nw"
    first = _model()
    first.save(path)
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError(f"simulated failure in {failing}")

    target = {"writestr": (zipfile.ZipFile, "writestr"), "fsync": (os, "fsync"), "replace": (os, "replace")}[failing]
    monkeypatch.setattr(*target, boom)
    with pytest.raises(OSError, match="simulated failure"):
        _model().save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.nw"]  # no temporary file left behind
    _assert_same_predictions(first, load_model(path))


def test_custom_layers_by_decorator_and_by_custom_objects(tmp_path):
    @register_serializable(package="saving_tests")
    class Scale(Layer):
        def compute_output_shape(self, input_shape):
            return input_shape

        def call(self, inputs):
            return inputs * 3.0

    class Shift(Layer):
        def compute_output_shape(self, input_shape):
            return input_shape

        def call(self, inputs):
            return inputs + 1.0

    x = Input(shape=(2,))
    Model(x, Scale()(x)).save(tmp_path / "scale.nw")
    np.testing.assert_array_equal(load_model(tmp_path / "scale.nw")(np.ones((1, 2))), [[3.0, 3.0]])

    Model(x, Shift()(x)).save(tmp_path / "shift.nw")
    with pytest.raises(ModelFormatError, match="Unknown layer type: 'Shift'"):
        load_model(tmp_path / "shift.nw")
    loaded = load_model(tmp_path / "shift.nw", custom_objects={"Shift": Shift})
    np.testing.assert_array_equal(loaded(np.ones((1, 2))), [[2.0, 2.0]])


# ------------------------------------------------------------- hostile files
def _archive(files):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def valid_file(tmp_path_factory):
    x = Input(shape=(3,), name="x")
    model = Model(x, Dense(2, name="d")(Dense(3, name="h")(x) * 2.0))
    path = tmp_path_factory.mktemp("valid") / "model.nw"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}, path.read_bytes()


def _load_bytes(tmp_path, content):
    path = tmp_path / "candidate.nw"
    path.write_bytes(content)
    return load_model(path)


@pytest.mark.parametrize("change, message", [
    (lambda f, raw: raw[: len(raw) // 2], "not a zip archive"),
    (lambda f, raw: b"plain text, not a model", "not a zip archive"),
    (lambda f, raw: _archive({**f, "config.json": b"{broken"}), "config.json .* is malformed \\(not valid JSON"),
    (lambda f, raw: _archive({k: v for k, v in f.items() if k != "weights.npz"}), "has no weights.npz"),
    (lambda f, raw: _archive({**f, "metadata.json": b'{"format_version": 99}'}), "format version 99"),
    (lambda f, raw: _archive({**f, "weights.npz": b"junk"}), "weights past 4 bytes, the size of weights.npz"),
])
def test_hostile_files_raise_one_documented_error(tmp_path, valid_file, change, message):
    files, raw = valid_file
    with pytest.raises(ModelFormatError, match=message):
        _load_bytes(tmp_path, change(files, raw))


def test_pickled_arrays_are_refused(tmp_path, valid_file):
    files, _ = valid_file
    buffer = io.BytesIO()
    np.save(buffer, np.array([object()], dtype=object), allow_pickle=True)
    weights = io.BytesIO()
    with zipfile.ZipFile(weights, "w") as npz:
        npz.writestr("d/kernel.npy", buffer.getvalue())
    with pytest.raises(ModelFormatError, match="'d/kernel' .* has dtype object; weights are plain numeric arrays"):
        _load_bytes(tmp_path, _archive({**files, "weights.npz": weights.getvalue()}))


def test_training_resumes_from_a_saved_compiled_model_exactly(tmp_path):
    from engine.utils import set_random_seed

    rng = np.random.default_rng(7)
    batches = [(rng.normal(size=(8, 3)), rng.integers(0, 2, size=(8,))) for _ in range(6)]
    set_random_seed(3)
    x = Input(shape=(3,))
    model = Model(x, Dense(2, activation="softmax")(Dense(5, activation="relu")(x)))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    for data, labels in batches[:3]:
        model.train_on_batch(data, labels)
    model.save(tmp_path / "midway.nw")
    with zipfile.ZipFile(tmp_path / "midway.nw") as archive:
        assert "optimizer.npz" in archive.namelist()
    resumed = load_model(tmp_path / "midway.nw")
    assert resumed.optimizer.iterations == 3
    for data, labels in batches[3:]:
        assert resumed.train_on_batch(data, labels) == model.train_on_batch(data, labels)
    for mine, theirs in zip(model.get_weights(), resumed.get_weights()):
        np.testing.assert_array_equal(mine, theirs)
    uncompiled = load_model(tmp_path / "midway.nw", compile=False)
    assert getattr(uncompiled, "optimizer", None) is None


def test_layers_made_of_layers_save_their_weights_by_attribute_and_load(tmp_path):
    from engine import Layer, register_serializable
    from layers import TimeDistributed

    @register_serializable(package="saving_tests")
    class Block(Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.d1, self.d2 = Dense(4), Dense(2)  # automatic names, other ones in every instance

        def call(self, x):
            return self.d2(self.d1(x))

    x = Input(shape=(3, 2))
    first = TimeDistributed(Dense(2, name="d"))  # the same inner name twice
    model = Model(x, Block()(TimeDistributed(Dense(2, name="d"))(first(x))))
    data = np.random.default_rng(0).normal(size=(2, 3, 2)).astype("float32")
    model.save(tmp_path / "blocks.nw")
    names = list(np.load(io.BytesIO(zipfile.ZipFile(tmp_path / "blocks.nw").read("weights.npz"))).files)
    assert {"block/d1/kernel", "time_distributed/layer/kernel", "time_distributed_1/layer/kernel"} <= set(names)
    np.testing.assert_array_equal(load_model(tmp_path / "blocks.nw").predict(data, verbose=0),
                                  model.predict(data, verbose=0))


@register_serializable(package="saving_tests")
class _OneDense(Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = Dense(2)

    def call(self, x):
        return self.dense(x)


def test_a_build_config_asking_for_a_huge_input_is_refused_before_anything_is_allocated():
    model = _OneDense()
    model(np.ones((1, 3), "float32"))
    buffer = io.BytesIO()
    saving.write_archive(model, buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    config = json.loads(members["config.json"])
    config["build_config"] = {"input_shape": [None, 10**12]}  # a subclassed model is built by calling it
    members["config.json"] = json.dumps(config).encode()
    hostile = io.BytesIO()
    with zipfile.ZipFile(hostile, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    with pytest.raises(ModelFormatError, match=r"asks for inputs of shapes \[\(1, 1000000000000\)\]: one sample of "
                                               r"4,000,000,000,000 bytes, more than .* max_weight_bytes"):
        saving.load_archive_bytes(hostile.getvalue())
