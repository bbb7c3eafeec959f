"""A Keras archive's weights are read from the file straight into the model's arrays, then the
member's CRC is checked over them: damage anywhere in model.weights.h5 is refused."""

import io
import zipfile

import h5py
import keras
import numpy as np
import pytest
from keras import layers

from engine import ModelFormatError, load_model


@pytest.fixture(scope="module")
def keras_model():
    x = keras.Input((4,), name="x")
    model = keras.Model(x, layers.Dense(2, name="out")(layers.Dense(3, name="hidden")(x)))
    model.compile(optimizer="adam", loss="mse")
    model.fit(np.ones((4, 4)), np.ones((4, 2)), verbose=0)
    return model


@pytest.fixture(scope="module")
def members(keras_model, tmp_path_factory):
    path = tmp_path_factory.mktemp("keras") / "small.keras"
    keras_model.save(path)
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _write(path, members, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return path


def _dataset_offset(weights, name):
    with h5py.File(io.BytesIO(weights), "r") as file:
        return file[name].id.get_offset()


def test_weights_equal_keras_and_each_is_an_array_of_its_own(keras_model, members, tmp_path):
    model = load_model(_write(tmp_path / "m.keras", members))
    x = np.random.default_rng(0).standard_normal((5, 4)).astype("float32")
    np.testing.assert_allclose(model.predict(x, verbose=0), keras_model.predict(x, verbose=0), rtol=1e-6)
    values = [weight.numpy() for weight in model.weights]
    assert all(value.flags.writeable and value.flags.c_contiguous for value in values)
    assert not any(np.shares_memory(a, b) for i, a in enumerate(values) for b in values[i + 1:])
    assert model.optimizer.iterations == 1  # Keras' optimizer state, read the same way


@pytest.mark.parametrize("where", ["a weight", "an optimizer slot", "the file's metadata"])
def test_a_damaged_byte_anywhere_in_the_weights_file_is_refused(members, tmp_path, where):
    weights = members["model.weights.h5"]
    at = {"a weight": lambda: _dataset_offset(weights, "layers/dense/vars/0") + 5,
          "an optimizer slot": lambda: _dataset_offset(weights, "optimizer/vars/3") + 2,
          "the file's metadata": lambda: len(weights) - 40}[where]()
    path = _write(tmp_path / "damaged.keras", members)  # then the byte is damaged in the archive, under its CRC
    archive = bytearray(path.read_bytes())
    archive[archive.index(bytes(weights)) + at] ^= 0x01
    path.write_bytes(bytes(archive))
    # A byte of metadata may also be one HDF5 checks itself; a weight's is caught by the CRC only.
    crc = r"model.weights.h5 in .*damaged.keras' fails its CRC check"
    expected = crc if where != "the file's metadata" else rf"{crc}|weights file of .*damaged.keras' cannot be read"
    with pytest.raises(ModelFormatError, match=expected):
        load_model(path)


def test_a_deflated_weights_file_loads_too(keras_model, members, tmp_path):
    model = load_model(_write(tmp_path / "deflated.keras", members, zipfile.ZIP_DEFLATED))
    for ours, theirs in zip(model.weights, keras_model.weights):
        np.testing.assert_array_equal(ours.numpy(), np.asarray(theirs))


def test_a_weights_file_with_a_user_block_is_refused(members, tmp_path):
    buffer = io.BytesIO()
    with h5py.File(io.BytesIO(members["model.weights.h5"]), "r") as source, \
            h5py.File(buffer, "w", userblock_size=512) as target:
        for name in source:
            source.copy(source[name], target, name)
    path = _write(tmp_path / "userblock.keras", {**members, "model.weights.h5": buffer.getvalue()})
    with pytest.raises(ModelFormatError, match="starts with a 512-byte user block; Keras writes none"):
        load_model(path)


def test_load_weights_refuses_a_damaged_keras_archive_and_keeps_the_model_as_it_was(members, tmp_path):
    path = _write(tmp_path / "damaged.keras", members)
    model = load_model(path)
    before = [weight.numpy().copy() for weight in model.weights]
    weights = members["model.weights.h5"]
    archive = bytearray(path.read_bytes())
    archive[archive.index(weights) + _dataset_offset(weights, "layers/dense_1/vars/0") + 3] ^= 0x01
    path.write_bytes(bytes(archive))
    with pytest.raises(ModelFormatError, match="fails its CRC check"):
        model.load_weights(path)
    for weight, value in zip(model.weights, before):
        np.testing.assert_array_equal(weight.numpy(), value)
