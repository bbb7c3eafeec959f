"""Arrays read from their file into fresh memory: every way an .npz can store them, and damage."""

import io
import struct
import zipfile

import numpy as np
import pytest

from engine import Input, Model, ModelFormatError, load_model
from engine.files.load_limits import LoadLimits
from engine.files.npz_arrays import open_npz, read_arrays
from layers import Dense


# An extra field (id, size, data) as long as the size bound of a member allows.
_LONG_EXTRA = struct.pack("<HH", 0xCAFE, 300) + bytes(300)


def _model(seed=0):
    x = Input(shape=(3,), name="x")
    model = Model(x, Dense(2, name="d")(x))
    rng = np.random.default_rng(seed)
    model.set_weights([rng.standard_normal((3, 2)).astype("float32"), rng.standard_normal(2).astype("float32")])
    return model


def _rewrite(path, change):
    """Rewrites the zip at ``path`` with ``change(name, bytes, compress_type) -> (bytes, compress_type, extra)``."""
    with zipfile.ZipFile(path) as archive:
        members = [(info, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w") as archive:
        for info, content in members:
            content, compression, extra = change(info.filename, content, info.compress_type)
            new = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            new.compress_type, new.extra = compression, extra
            archive.writestr(new, content)


def _npz(arrays, compressed=False, extra=b""):
    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
    if not extra:
        return buffer.getvalue()
    path = io.BytesIO(buffer.getvalue())
    with zipfile.ZipFile(path) as archive:
        members = [(info.filename, archive.read(info)) for info in archive.infolist()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in members:
            info = zipfile.ZipInfo(name)
            info.extra = extra
            archive.writestr(info, content)
    return out.getvalue()


def _flip_byte_in(content, marker):
    """``content`` with the byte right after the first ``marker`` flipped."""
    at = content.index(marker) + len(marker)
    return content[:at] + bytes([content[at] ^ 0xFF]) + content[at + 1:]


def test_a_loaded_model_has_the_saved_weights_each_in_memory_of_its_own(tmp_path):
    model = _model()
    model.save(tmp_path / "m.nw")
    loaded = load_model(tmp_path / "m.nw")
    for saved, variable in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(variable.numpy(), saved.numpy())
        assert variable.numpy().flags.writeable and variable.numpy().flags.c_contiguous
    kernel, bias = (variable.numpy() for variable in loaded.weights)
    assert not np.shares_memory(kernel, bias)
    loaded.compile(optimizer="sgd", loss="mse")
    loaded.fit(np.ones((4, 3)), np.zeros((4, 2)), verbose=0)
    assert not np.array_equal(loaded.weights[0].numpy(), model.weights[0].numpy())


def test_a_damaged_weight_in_a_model_file_is_refused_by_its_crc(tmp_path):
    model = _model()
    model.save(tmp_path / "m.nw")
    kernel = model.get_layer("d").kernel.numpy().tobytes()
    _rewrite(tmp_path / "m.nw", lambda name, content, compression: (
        _flip_byte_in(content, kernel[:8]) if name == "weights.npz" else content, compression, b""))
    with pytest.raises(ModelFormatError, match=r"Array 'd/kernel' in 'weights.npz in .*m.nw' cannot be read: "
                                               r"Bad CRC-32 for file 'd/kernel.npy'"):
        load_model(tmp_path / "m.nw")


def test_a_damaged_weights_file_is_refused_and_the_model_keeps_its_weights(tmp_path):
    source, target = _model(0), _model(1)
    before = [w.numpy().copy() for w in target.weights]
    content = _npz({"d/bias": source.weights[1].numpy(), "d/kernel": source.weights[0].numpy()})
    (tmp_path / "w.npz").write_bytes(_flip_byte_in(content, source.weights[0].numpy().tobytes()[:8]))
    with pytest.raises(ModelFormatError, match="Bad CRC-32 for file 'd/kernel.npy'"):
        target.load_weights(tmp_path / "w.npz")
    for weight, value in zip(target.weights, before):
        np.testing.assert_array_equal(weight.numpy(), value)


@pytest.mark.parametrize("outer", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("inner", ["stored", "compressed", "long extra field"])
def test_a_model_file_loads_however_its_zip_members_are_stored(tmp_path, outer, inner):
    model = _model()
    model.save(tmp_path / "m.nw")
    arrays = {w.path: w.numpy() for w in model.weights}
    weights = _npz(arrays, compressed=inner == "compressed",
                   extra=_LONG_EXTRA if inner == "long extra field" else b"")
    _rewrite(tmp_path / "m.nw", lambda name, content, compression: (
        (weights, outer, b"") if name == "weights.npz" else (content, compression, b"")))
    loaded = load_model(tmp_path / "m.nw")
    for saved, variable in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(variable.numpy(), saved.numpy())


def test_arrays_of_another_byte_order_dtype_or_memory_order_are_cast_to_the_weight(tmp_path):
    model = _model()
    kernel, bias = (w.numpy() for w in model.weights)
    (tmp_path / "w.npz").write_bytes(_npz({"d/kernel": np.asfortranarray(kernel.astype(">f8")),
                                           "d/bias": bias.astype(">f4")}))
    target = _model(1)
    assert target.load_weights(tmp_path / "w.npz") == []
    for saved, variable in zip(model.weights, target.weights):
        assert variable.dtype == np.float32 and variable.numpy().dtype.isnative
        np.testing.assert_array_equal(variable.numpy(), saved.numpy())


@pytest.mark.parametrize("header", [b"{'descr': '<f4', 'fortran_order': False, 'shape': (3,",
                                    b"{'descr': '''<f4"])
def test_a_header_numpy_cannot_tokenize_is_refused_naming_the_array(tmp_path, header):
    header += b" " * (-(len(header) + 11) % 64) + b"\n"
    npy = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(12)
    (tmp_path / "w.npz").write_bytes(_npz({"d/bias": np.zeros(2, "float32")}))
    _rewrite(tmp_path / "w.npz", lambda name, content, compression: (npy, compression, b""))
    with pytest.raises(ModelFormatError, match=r"Array 'd/\w+' in .* has a malformed \.npy header: EOF in multi-line"):
        _model().load_weights(tmp_path / "w.npz")


@pytest.mark.parametrize("extra", [b"", _LONG_EXTRA])
def test_read_arrays_reads_every_array_whole_and_each_exactly_once(extra):
    rng = np.random.default_rng(0)
    arrays = {f"w{i}": rng.standard_normal(shape).astype("float32")
              for i, shape in enumerate([(0,), (1,), (3, 5), (2000, 3)])}  # the last is past the first read
    expected = {name: (array.shape, array.dtype) for name, array in arrays.items()}
    read, problems = read_arrays(open_npz(io.BytesIO(_npz(arrays, extra=extra)), "memory"), expected, LoadLimits(), "memory")
    assert problems == [] and list(read) == list(arrays)
    for name, array in arrays.items():
        np.testing.assert_array_equal(read[name], array)
        assert read[name].base is None or read[name].base.base is None  # its own memory, not a view of a buffer
