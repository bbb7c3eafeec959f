"""save_weights / load_weights with Keras 3's weight files: ``.weights.h5``
both ways, the weights of a ``.keras`` archive, ModelCheckpoint, mismatches
and hostile files. Each architecture is built twice by the same code, once
with Keras' classes and once with ours."""

import types
import warnings

import h5py
import keras
import numpy as np
import pytest

import engine
import layers
from engine import ModelFormatError
from engine.training.callbacks import ModelCheckpoint
from tests.keras_format.test_read_hostile import _external_storage, _replace

KERAS = types.SimpleNamespace(Input=keras.Input, Model=keras.Model, Sequential=keras.Sequential, L=keras.layers)
OURS = types.SimpleNamespace(Input=engine.Input, Model=engine.Model, Sequential=engine.Sequential, L=layers)


def mlp(api, names=("hidden", "out")):
    x = api.Input((4,))
    return api.Model(x, api.L.Dense(2, name=names[1])(api.L.Dense(3, activation="tanh", name=names[0])(x)))


def conv_batch_norm(api):
    x = api.Input((6, 6, 2))
    h = api.L.BatchNormalization()(api.L.Conv2D(3, 3, padding="same")(x))
    h = api.L.Conv2D(2, 3)(api.L.ReLU()(h))
    return api.Model(x, api.L.Dense(2)(api.L.GlobalAveragePooling2D()(api.L.BatchNormalization()(h))))


def recurrent(api):
    return api.Sequential([api.Input((5, 3)), api.L.LSTM(4, return_sequences=True), api.L.LSTM(2)])


def nested(api):
    """A Sequential and a Bidirectional LSTM inside a functional model."""
    x = api.Input((5, 3))
    inner = api.Sequential([api.Input((5, 3)), api.L.Dense(4, activation="tanh")])
    return api.Model(x, api.L.Dense(2)(api.L.Bidirectional(api.L.LSTM(3))(inner(x))))


ARCHITECTURES = {"mlp": (mlp, (2, 4)), "conv_batch_norm": (conv_batch_norm, (2, 6, 6, 2)), "lstm": (recurrent, (2, 5, 3)),
                 "nested": (nested, (2, 5, 3))}


def data(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


def randomize(model, seed=1):
    """Moves every weight off its initial value (biases, BatchNormalization's
    statistics), so a weight read into the wrong place changes the outputs."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        value = np.asarray(variable.value if hasattr(variable, "path") else variable)
        variable.assign(rng.uniform(0.5, 1.5, value.shape).astype(value.dtype))


def datasets(path):
    """{dataset path: array} of an HDF5 file."""
    found = {}
    with h5py.File(path) as file:
        file.visititems(lambda name, item: found.update({name: item[()]}) if isinstance(item, h5py.Dataset) else None)
    return found


def values(model):
    return [np.array(variable.value) for variable in model.weights]


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_keras_writes_we_load_and_write_back_the_same_file(name, tmp_path):
    build, shape = ARCHITECTURES[name]
    theirs, ours = build(KERAS), build(OURS)
    randomize(theirs)
    theirs.save_weights(tmp_path / "keras.weights.h5")
    assert ours.load_weights(tmp_path / "keras.weights.h5") == []
    np.testing.assert_allclose(ours(data(shape)), np.asarray(theirs(data(shape))), rtol=1e-5, atol=1e-6)

    ours.save_weights(tmp_path / "ours.weights.h5")
    written, expected = datasets(tmp_path / "ours.weights.h5"), datasets(tmp_path / "keras.weights.h5")
    assert sorted(written) == sorted(expected)
    for path, array in expected.items():
        np.testing.assert_array_equal(written[path], array, err_msg=path)


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_we_write_keras_loads(name, tmp_path):
    build, shape = ARCHITECTURES[name]
    ours, theirs = build(OURS), build(KERAS)
    randomize(ours)
    ours.save_weights(tmp_path / "m.weights.h5")
    theirs.load_weights(tmp_path / "m.weights.h5")
    np.testing.assert_allclose(np.asarray(theirs(data(shape))), ours(data(shape)), rtol=1e-5, atol=1e-6)


def test_another_instance_with_other_layer_names_loads(tmp_path):
    saved, other = mlp(OURS, names=("first", "second")), mlp(OURS, names=("encoder", "head"))
    randomize(saved)
    saved.save_weights(tmp_path / "m.weights.h5")
    assert other.load_weights(tmp_path / "m.weights.h5") == []
    np.testing.assert_array_equal(other(data((2, 4))), saved(data((2, 4))))


def test_load_weights_reads_the_weights_of_a_keras_archive(tmp_path):
    theirs, ours = conv_batch_norm(KERAS), conv_batch_norm(OURS)
    randomize(theirs)
    theirs.save(tmp_path / "m.keras")
    assert ours.load_weights(tmp_path / "m.keras") == []
    np.testing.assert_allclose(ours(data((2, 6, 6, 2))), np.asarray(theirs(data((2, 6, 6, 2)))), rtol=1e-5, atol=1e-6)


def wider_head(api):
    x = api.Input((4,))
    return api.Model(x, api.L.Dense(5)(api.L.Dense(3, activation="tanh")(x)))


def test_another_architecture_is_refused_naming_the_weight_and_leaves_the_weights(tmp_path):
    mlp(OURS).save_weights(tmp_path / "m.weights.h5")
    model = wider_head(OURS)
    before = values(model)
    with pytest.raises(ModelFormatError) as caught:
        model.load_weights(tmp_path / "m.weights.h5")
    message = str(caught.value)
    assert "Weight 'layers/dense_1/vars/0'" in message and "has shape (3, 2)" in message
    assert "of shape (3, 5)" in message and "skip_mismatch=True" in message
    for was, now in zip(before, values(model)):
        np.testing.assert_array_equal(was, now)  # the first layer fits, but nothing was assigned


def test_missing_layer_and_extra_weight_are_refused(tmp_path):
    x = engine.Input((4,))
    engine.Model(x, layers.Dense(3, name="only")(x)).save_weights(tmp_path / "one.weights.h5")
    with pytest.raises(ModelFormatError, match=r"has no weight 'layers/dense_1/vars/0', which holds weight '.*kernel'"):
        mlp(OURS).load_weights(tmp_path / "one.weights.h5")

    x = engine.Input((4,))
    without_bias = engine.Model(x, layers.Dense(2)(layers.Dense(3, use_bias=False)(x)))
    with pytest.raises(ModelFormatError, match="holds 2 weights in 'layers/dense/vars' but the layer there has 1"):
        without_bias.load_weights(tmp_path / "one.weights.h5")


def test_skip_mismatch_skips_the_layers_that_do_not_fit_as_keras_does(tmp_path):
    saved = mlp(KERAS)
    randomize(saved)
    saved.save_weights(tmp_path / "m.weights.h5")
    ours, theirs = wider_head(OURS), wider_head(KERAS)
    before = values(ours)
    messages = ours.load_weights(tmp_path / "m.weights.h5", skip_mismatch=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Keras warns about the layer it skips
        theirs.load_weights(tmp_path / "m.weights.h5", skip_mismatch=True)
    assert len(messages) == 1
    assert messages[0].startswith("Skipped 'layers/dense_1/vars': Weight 'layers/dense_1/vars/0'")
    # The first Dense has the file's weights, as in Keras; the second kept its own.
    for got, want in zip(values(ours)[:2], theirs.layers[1].get_weights()):
        np.testing.assert_array_equal(got, want)
    for was, now in zip(before[2:], values(ours)[2:]):
        np.testing.assert_array_equal(was, now)


def test_other_suffixes_are_refused_naming_the_path_and_the_suffixes(tmp_path):
    model = mlp(OURS)
    with pytest.raises(ValueError, match=r"save_weights\(\) needs a filename ending in `\.weights\.h5` "
                                         r"\(Keras 3's weight file\) or `\.npz`\. Received: filepath=.*ckpt\.h5"):
        model.save_weights(tmp_path / "ckpt.h5")
    with pytest.raises(ValueError, match=r"load_weights\(\) needs .*`\.weights\.h5` \(Keras 3's weight file\), "
                                         r"`\.keras` or `\.npz`\. Received: filepath=.*ckpt\.hdf5"):
        model.load_weights(tmp_path / "ckpt.hdf5")
    assert not list(tmp_path.iterdir())


def test_unbuilt_and_subclassed_models_are_refused(tmp_path):
    with pytest.raises(ValueError, match="You are saving model 'unbuilt', which has not yet been built"):
        engine.Sequential([layers.Dense(2)], name="unbuilt").save_weights(tmp_path / "m.weights.h5")

    class Two(engine.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(2)

        def call(self, inputs):
            return self.dense(inputs)

    model = Two()
    model(data((1, 3)))
    with pytest.raises(NotImplementedError, match="subclassed model: .* Use an .npz file"):
        model.save_weights(tmp_path / "m.weights.h5")
    assert not list(tmp_path.iterdir())


def test_model_checkpoint_writes_keras_weight_files(tmp_path):
    model = mlp(OURS)
    model.compile(optimizer="sgd", loss="mse")
    checkpoint = ModelCheckpoint(str(tmp_path / "best.weights.h5"), save_weights_only=True, monitor="loss")
    model.fit(data((8, 4)), data((8, 2)), epochs=2, verbose=0, callbacks=[checkpoint])
    theirs = mlp(KERAS)
    theirs.load_weights(tmp_path / "best.weights.h5")
    np.testing.assert_allclose(np.asarray(theirs(data((2, 4)))), model(data((2, 4))), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"save_weights_only=True writes \.weights\.h5 or \.npz files; "
                                         r"received filepath='best\.h5'"):
        ModelCheckpoint("best.h5", save_weights_only=True)


def test_the_optimizer_state_goes_with_the_weights_as_in_keras(tmp_path):
    theirs = mlp(KERAS)
    theirs.compile(optimizer=keras.optimizers.Adam(), loss="mse")
    theirs.fit(data((8, 4)), data((8, 2)), batch_size=4, verbose=0)
    theirs.save_weights(tmp_path / "keras.weights.h5")

    ours = mlp(OURS)
    ours.load_weights(tmp_path / "keras.weights.h5")  # uncompiled: the optimizer's state is not read
    ours.compile(optimizer="adam", loss="mse")
    ours.load_weights(tmp_path / "keras.weights.h5")
    assert ours.optimizer.iterations == 2
    for mine, keras_variable in zip(ours.optimizer.variables[2:], theirs.optimizer.variables[2:]):
        np.testing.assert_allclose(mine.value, np.asarray(keras_variable), rtol=1e-6)
    ours.save_weights(tmp_path / "ours.weights.h5")
    written, expected = datasets(tmp_path / "ours.weights.h5"), datasets(tmp_path / "keras.weights.h5")
    assert sorted(written) == sorted(expected)
    for path in expected:
        np.testing.assert_allclose(written[path], expected[path], rtol=1e-6, err_msg=path)

    other = mlp(OURS)
    other.compile(optimizer="rmsprop", loss="mse")  # one slot per weight, where Adam has two
    with pytest.warns(UserWarning, match=r"optimizer state in '.*keras\.weights\.h5' is not loaded into optimizer "
                                         r"'.*', which keeps its own: the file holds 10 optimizer variables, but the optimizer has 6"):
        assert other.load_weights(tmp_path / "keras.weights.h5") == []
    np.testing.assert_array_equal(other(data((2, 4))), ours(data((2, 4))))  # the weights did load


def test_a_compiled_model_not_trained_yet_writes_keras_layout(tmp_path):
    theirs, ours = mlp(KERAS), mlp(OURS)
    theirs.compile(optimizer="adam", loss="mse")
    ours.compile(optimizer="adam", loss="mse")
    theirs.save_weights(tmp_path / "keras.weights.h5")
    ours.save_weights(tmp_path / "ours.weights.h5")
    written = datasets(tmp_path / "ours.weights.h5")
    assert sorted(written) == sorted(datasets(tmp_path / "keras.weights.h5"))
    assert written["optimizer/vars/0"] == 0 and written["optimizer/vars/1"] == pytest.approx(0.001)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Keras warns when the optimizer state it reads does not fit
        theirs.load_weights(tmp_path / "ours.weights.h5")


def edited(path, edit):
    with h5py.File(path, "a") as file:
        edit(file)
    return path


def test_hostile_weight_files_are_refused(tmp_path):
    model = mlp(OURS)
    before = values(model)

    def huge(file):
        del file["layers/dense/vars/0"]
        file.create_dataset("layers/dense/vars/0", shape=(2**40, 3), dtype="float32")  # declared, never written

    model.save_weights(tmp_path / "huge.weights.h5")
    with pytest.raises(ModelFormatError, match=r"has shape \(1099511627776, 3\), but it fills weight"):
        model.load_weights(edited(tmp_path / "huge.weights.h5", huge))

    model.save_weights(tmp_path / "external.weights.h5")
    with pytest.raises(ModelFormatError, match="stored in another file"):
        model.load_weights(edited(tmp_path / "external.weights.h5", _external_storage(tmp_path)))

    model.save_weights(tmp_path / "chunked.weights.h5")
    chunked = edited(tmp_path / "chunked.weights.h5",
                     lambda file: _replace(file, "layers/dense_1/vars/1", chunks=(1,), compression="gzip"))
    with pytest.raises(ModelFormatError, match="stored in chunks"):
        model.load_weights(chunked, skip_mismatch=True)  # never skipped: the file is not what Keras writes

    (tmp_path / "big.weights.h5").write_bytes(b"\0" * 2**21)
    with pytest.raises(ModelFormatError, match=r"holds 2,097,152 bytes, more than the .* that the weights of model"):
        model.load_weights(tmp_path / "big.weights.h5")

    (tmp_path / "text.weights.h5").write_text("not HDF5")
    with pytest.raises(ModelFormatError, match="The weights file of .*text.weights.h5' cannot be read"):
        model.load_weights(tmp_path / "text.weights.h5")
    (tmp_path / "text.keras").write_text("not a zip")
    with pytest.raises(ModelFormatError, match="is not a Keras archive"):
        model.load_weights(tmp_path / "text.keras")
    for was, now in zip(before, values(model)):
        np.testing.assert_array_equal(was, now)
