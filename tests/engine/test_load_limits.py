import io
import os
import threading
import zipfile

import numpy as np
import pytest

from engine import Input, LoadLimits, Model, ModelFormatError, load_model, model_from_json
from engine.files.load_limits import charge_weight, npz_size_bound, weight_budget
from engine.files.npz_arrays import _parse_npy_header
from engine.utils import random_generator
from layers import Dense


def _model():
    x = Input(shape=(3,), name="x")
    return Model(x, Dense(2, name="d")(x))


def test_a_config_over_the_limit_is_refused_before_it_is_read_and_loads_with_a_larger_limit(tmp_path):
    path = tmp_path / "m.nw"
    _model().save(path)
    with zipfile.ZipFile(path) as archive:
        size = archive.getinfo("config.json").file_size
    with pytest.raises(ModelFormatError, match=rf"'config.json' of .* declares {size:,} bytes, more than the "
                                               r"100 it may hold \(max_config_bytes\)"):
        load_model(path, limits=LoadLimits(max_config_bytes=100))
    assert load_model(path, limits=LoadLimits(max_config_bytes=size)).get_layer("d").units == 2


def test_json_text_and_the_weights_it_creates_are_bounded():
    text = _model().to_json()
    with pytest.raises(ModelFormatError, match="more than max_config_bytes=10"):
        model_from_json(text, limits=LoadLimits(max_config_bytes=10))
    with pytest.raises(ModelFormatError, match=r"weight 'kernel' of layer 'd' with shape \(3, 2\), bringing its "
                                               r"weights past 20 bytes, max_weight_bytes"):
        model_from_json(text, limits=LoadLimits(max_weight_bytes=20))
    assert model_from_json(text, limits=LoadLimits(max_weight_bytes=32)).count_params() == 8


def test_the_weight_budget_is_per_thread_and_ends_with_its_scope():
    seen = []
    with weight_budget(8, "a test budget", "Nothing to do."):
        charge_weight("l", "w", (2,), "float32")
        thread = threading.Thread(target=lambda: seen.append(charge_weight("l", "w", (10**9,), "float32")))
        thread.start()
        thread.join()
        with pytest.raises(ModelFormatError, match="past 8 bytes, a test budget. Nothing to do."):
            charge_weight("l", "w", (1,), "float32")
    assert seen == [False]
    assert not charge_weight("l", "w", (10**9,), "float32")  # no load in progress: no budget
    with weight_budget(8, "a test budget", "Nothing to do.", filled_from_file=True):
        assert charge_weight("l", "w", (2,), "float32")  # the load assigns it from the file


def test_a_model_file_loads_without_drawing_initial_values(tmp_path):
    path = tmp_path / "m.nw"
    model = _model()
    model.save(path)
    generator = random_generator()
    before = generator.bit_generator.state
    loaded = load_model(path)
    assert generator.bit_generator.state == before
    np.testing.assert_array_equal(loaded.get_layer("d").kernel.value, model.get_layer("d").kernel.value)
    model_from_json(model.to_json())  # a config alone has no weights: they are drawn
    assert generator.bit_generator.state != before


@pytest.mark.parametrize("array", [np.arange(12, dtype="float32").reshape(3, 4), np.ones((), "float64"),
                                   np.zeros((0, 2), "int32"), np.asfortranarray(np.ones((2, 3), "<f4")),
                                   np.ones((70000,), ">f4"), np.ones((3,), "<U2"), np.zeros(2, [("a", "<f4")])])
def test_npy_headers_are_parsed_as_numpy_parses_them(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    shape, fortran_order, dtype, offset = _parse_npy_header(buffer.getvalue())
    buffer.seek(0)
    np.lib.format.read_magic(buffer)
    assert (shape, fortran_order, dtype) == np.lib.format.read_array_header_1_0(buffer)
    assert offset == buffer.tell()


@pytest.mark.parametrize("member, message", [
    (b"NUMPY\x01\x00", "does not start with the .npy magic string"),
    (b"\x93NUMPY\x04\x00", r"unsupported .npy format version \(4, 0\)"),
    (b"\x93NUMPY\x01\x00\xff\xff{'descr'", "expected 65535 bytes"),
    (b"\x93NUMPY\x01\x00\x3c\x00{'descr': '<f9', 'fortran_order': False, 'shape': (3,), }         \n",
     "not a valid dtype descriptor"),
])
def test_malformed_npy_headers_raise_value_error(member, message):
    with pytest.raises(ValueError, match=message):
        _parse_npy_header(member)


def test_load_weights_checks_each_header_and_skips_mismatches_unread(tmp_path):
    model = _model()
    path = tmp_path / "w.npz"
    np.savez(path, **{"d/kernel": np.ones((4, 2), "float32"), "d/bias": np.full((2,), 3.0, "float32"),
                      "other/kernel": np.ones((1,), "float32")})
    with pytest.raises(ModelFormatError, match=r"weight 'd/kernel' has shape \(3, 2\) in the model but \(4, 2\)"):
        model.load_weights(path)
    problems = model.load_weights(path, skip_mismatch=True)
    assert len(problems) == 2 and "which the model does not have" in problems[0] + problems[1]
    np.testing.assert_array_equal(model.get_layer("d").bias.value, [3.0, 3.0])


def test_a_weights_file_larger_than_the_model_can_fill_is_refused_unread(tmp_path):
    model = _model()
    path = tmp_path / "big.npz"
    with open(path, "wb") as handle:
        handle.truncate(npz_size_bound({"d/kernel": ((3, 2), "float32"), "d/bias": ((2,), "float32")}) + 1)
    with pytest.raises(ModelFormatError, match="more than the .* that the 2 weights of model"):
        model.load_weights(path)
    assert os.path.getsize(path) > 0


def _declare_size(path, member, size):
    """Rewrites the zip at ``path`` so that its central directory declares ``size`` bytes for ``member``."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        names = [info.filename for info in archive.infolist()]
    end = data.rindex(b"PK\x05\x06")  # the end record says where the central directory starts
    start = int.from_bytes(data[end + 16:end + 20], "little")  # one entry per member, in order
    for name in names:
        name_length, extra_length, comment_length = (int.from_bytes(data[start + i:start + i + 2], "little")
                                                     for i in (28, 30, 32))
        if name == member:
            data[start + 20:start + 28] = size.to_bytes(4, "little") * 2  # compressed and uncompressed
        start += 46 + name_length + extra_length + comment_length
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("extension, member", [(".nw", "weights.npz"), (".keras", "model.weights.h5")])
def test_a_declared_size_the_archive_cannot_hold_is_refused_before_the_model_is_built(tmp_path, extension, member):
    # The declared size of the weights member is the weight budget of the build: a forged one would let a
    # small file create (and initialize) huge weights before the read found out.
    x = Input((4,))
    path = tmp_path / f"m{extension}"
    Model(x, Dense(2)(x)).save(path)
    _declare_size(path, member, 300_000_000)
    with pytest.raises(ModelFormatError, match=f"'{member}' .* declares 300,000,000 bytes .* cannot hold"):
        load_model(path)
