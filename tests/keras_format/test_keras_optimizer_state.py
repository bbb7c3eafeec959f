"""A compiled, trained model's optimizer state in a ``.keras`` file: Keras'
read into our optimizer by load_model, so one more fit step here equals one
more fit step in Keras; ours written so that Keras (and we) go on likewise."""

import io
import re
import zipfile

import h5py
import keras
import numpy as np
import pytest

import engine
import layers
from engine import ModelFormatError, load_model
from engine.files.keras_format.write_weights import keras_weight_paths
from engine.training.optimizers import SGD, Adagrad, Adam, Adamax, AdamW, Nadam, RMSprop


def dense_model():
    x = keras.Input((4,))
    return keras.Model(x, keras.layers.Dense(2)(keras.layers.Dense(5, activation="tanh")(x)))


def conv_batch_norm_model():
    x = keras.Input((6, 6, 2))
    # No bias before BatchNormalization: its gradient is rounding noise, which Adam scales up to full steps.
    h = keras.layers.BatchNormalization()(keras.layers.Conv2D(3, 3, padding="same", use_bias=False)(x))
    return keras.Model(x, keras.layers.Dense(2)(keras.layers.GlobalAveragePooling2D()(keras.layers.ReLU()(h))))


def lstm_model():
    return keras.Sequential([keras.Input((5, 3)), keras.layers.LSTM(4), keras.layers.Dense(2)])


ARCHITECTURES = {"dense": (dense_model, (8, 4)), "conv_batch_norm": (conv_batch_norm_model, (8, 6, 6, 2)),
                 "lstm": (lstm_model, (8, 5, 3))}
KERAS_OPTIMIZERS = {"sgd_momentum": lambda: keras.optimizers.SGD(0.05, momentum=0.9),
                    "adam": lambda: keras.optimizers.Adam(0.01)}


def batch(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape).astype("float32"), rng.normal(size=(shape[0], 2)).astype("float32")


def one_step(model, x, y):
    """One more fit step on the whole batch, in Keras or here."""
    model.fit(x, y, batch_size=len(x), epochs=1, shuffle=False, verbose=0)


def assert_same_weights(ours, theirs, rtol=1e-5, atol=1e-6):
    """Our weights, in the order Keras lists its own, equal the Keras model's."""
    mine_in_keras_order = list(keras_weight_paths(ours).values())
    assert len(mine_in_keras_order) == len(theirs.weights)
    for mine, keras_variable in zip(mine_in_keras_order, theirs.weights):
        np.testing.assert_allclose(mine.value, np.asarray(keras_variable), rtol=rtol, atol=atol, err_msg=mine.path)


def optimizer_params(model):
    """The count summary() prints on its "Optimizer params" line, or None without one."""
    lines = []
    model.summary(print_fn=lambda line, *args, **kwargs: lines.append(line))
    found = re.search(r"Optimizer params: ([\d,]+)", re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(lines)))
    return found and int(found.group(1).replace(",", ""))


@pytest.mark.parametrize("optimizer", KERAS_OPTIMIZERS)
@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_one_more_step_here_equals_one_more_step_in_keras(architecture, optimizer, tmp_path):
    build, shape = ARCHITECTURES[architecture]
    theirs = build()
    theirs.compile(optimizer=KERAS_OPTIMIZERS[optimizer](), loss="mse")
    x, y = batch(shape)
    theirs.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    theirs.save(tmp_path / "trained.keras")

    ours = load_model(tmp_path / "trained.keras")
    assert ours.optimizer.iterations == 2
    assert optimizer_params(ours) == optimizer_params(theirs) == sum(
        int(np.prod(variable.shape)) for variable in ours.optimizer.variables)
    x, y = batch(shape, seed=1)
    one_step(ours, x, y)
    one_step(theirs, x, y)
    assert_same_weights(ours, theirs)
    for mine, keras_variable in zip(ours.optimizer.variables, theirs.optimizer.variables):
        np.testing.assert_allclose(mine.value, np.asarray(keras_variable), rtol=1e-5, atol=1e-6)


def test_a_fresh_optimizer_would_have_stepped_otherwise(tmp_path):
    """The check above can fail: without Keras' state the next step differs."""
    theirs = dense_model()
    theirs.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    x, y = batch((8, 4))
    theirs.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    theirs.save(tmp_path / "trained.keras")
    fresh = load_model(tmp_path / "trained.keras", compile=False)
    assert optimizer_params(fresh) is None
    fresh.compile(optimizer=engine.training.optimizers.Adam(0.01), loss="mse")
    x, y = batch((8, 4), seed=1)
    one_step(fresh, x, y)
    one_step(theirs, x, y)
    with pytest.raises(AssertionError):
        assert_same_weights(fresh, theirs)


def two_branch_model(optimizer):
    """Ours, compiled and trained two steps; Keras lists the deeper branch's
    layers first, so its slot order differs from the one ours was built on."""
    x = engine.Input((4,))
    direct = layers.Dense(3)(layers.Dense(4, trainable=False)(x))
    deep = layers.Dense(3)(layers.Dense(5)(layers.Dense(5)(x)))
    model = engine.Model(x, layers.Add()([direct, deep]))
    model.compile(optimizer=optimizer, loss="mse")
    x, y = batch((8, 4))
    y = y[:, :1].repeat(3, axis=1)
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    return model, x, y


OUR_OPTIMIZERS = {
    "sgd": lambda: SGD(0.05, momentum=0.9, nesterov=True),
    "adam_amsgrad": lambda: Adam(0.01, amsgrad=True),
    "adamw": lambda: AdamW(0.01, weight_decay=0.01),
    "rmsprop_centered": lambda: RMSprop(0.01, momentum=0.5, centered=True),
    "adagrad": lambda: Adagrad(0.05),
    "adamax": lambda: Adamax(0.01),
    "nadam": lambda: Nadam(0.01),
}


@pytest.mark.parametrize("name", OUR_OPTIMIZERS)
def test_every_optimizer_we_write_goes_on_here_and_in_keras(name, tmp_path):
    model, x, y = two_branch_model(OUR_OPTIMIZERS[name]())
    model.save(tmp_path / "m.keras")
    ours, theirs = load_model(tmp_path / "m.keras"), keras.saving.load_model(tmp_path / "m.keras")
    saved = {variable.name: variable.value for variable in model.optimizer.variables}
    assert {variable.name: variable.value.shape for variable in ours.optimizer.variables} == \
        {name: value.shape for name, value in saved.items()}
    for variable in ours.optimizer.variables:
        np.testing.assert_array_equal(variable.value, saved[variable.name].astype(variable.value.dtype))
    for each in (model, ours, theirs):
        one_step(each, x, y)
    for mine, original in zip(ours.weights, model.weights):
        np.testing.assert_allclose(mine.value, original.value, rtol=1e-6, atol=1e-7)
    assert_same_weights(model, theirs)


def edited_archive(path, edit):
    """The .keras file at ``path`` with its model.weights.h5 edited by ``edit(h5py.File)``."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    buffer = io.BytesIO(members["model.weights.h5"])
    with h5py.File(buffer, "a") as file:
        edit(file)
    members["model.weights.h5"] = buffer.getvalue()
    edited = path.with_name("edited.keras")
    with zipfile.ZipFile(edited, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return edited


def test_optimizer_state_that_does_not_fit_says_to_load_uncompiled(tmp_path):
    theirs = dense_model()
    theirs.compile(optimizer="adam", loss="mse")
    theirs.fit(*batch((8, 4)), verbose=0)
    theirs.save(tmp_path / "m.keras")

    def reshape_slot(file):
        del file["optimizer/vars/3"]
        file.create_dataset("optimizer/vars/3", data=np.zeros((5, 4), "float32"))

    with pytest.raises(ModelFormatError, match=r"optimizer state Keras saved with it does not fit optimizer 'adam.*': "
                                               r"Weight 'optimizer/vars/3' .* has shape \(5, 4\), but it fills weight "
                                               r".*\(4, 5\).* compile=False"):
        load_model(edited_archive(tmp_path / "m.keras", reshape_slot))

    def drop_slot(file):
        del file["optimizer/vars/9"]

    def external_slot(file):  # read from any file on this machine: refused, whatever compile says
        (tmp_path / "secret.bin").write_bytes(np.full(2, 7.0, "float32").tobytes())
        del file["optimizer/vars/9"]
        file.create_dataset("optimizer/vars/9", shape=(2,), dtype="float32",
                            external=[(str(tmp_path / "secret.bin"), 0, 8)])

    with pytest.raises(ModelFormatError, match=r"Weight 'optimizer/vars/9' in .* is stored in another file"):
        load_model(edited_archive(tmp_path / "m.keras", external_slot))

    path = edited_archive(tmp_path / "m.keras", drop_slot)
    with pytest.raises(ModelFormatError, match=r"does not fit .* it has 10 variables whereas the saved optimizer has "
                                               r"9 variables.* compile=False"):
        load_model(path)
    np.testing.assert_allclose(load_model(path, compile=False)(batch((2, 4))[0]), np.asarray(theirs(batch((2, 4))[0])),
                               rtol=1e-5, atol=1e-6)


def test_a_model_compiled_but_never_trained_loads_and_trains(tmp_path):
    theirs = dense_model()
    theirs.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9), loss="mse")
    theirs.save(tmp_path / "m.keras")  # Keras saves the iteration count and learning rate only
    ours = load_model(tmp_path / "m.keras")
    assert ours.optimizer.iterations == 0 and ours.optimizer.built
    x, y = batch((8, 4))
    one_step(ours, x, y)
    one_step(theirs, x, y)
    assert_same_weights(ours, theirs)
