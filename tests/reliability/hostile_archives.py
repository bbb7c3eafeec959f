"""Hostile model files, family by family, loaded in a child process under a
memory cap (see ``test_hostile_archives.py``).

``python -m tests.reliability.hostile_archives FAMILY FOLDER`` builds a valid
model file in FOLDER, then loads variations of it. Every load must either
succeed or raise ``ModelFormatError`` that was not caused by running out of
memory or stack; anything else (another exception, MemoryError anywhere in the
chain, the child killed by its cap) fails. It prints one JSON line of counts.
"""

import io
import json
import struct
import sys
import warnings
import zipfile
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Input, Model, ModelFormatError, load_model, model_from_json
from layers import Dense

FOLDER = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(".")
OUTCOMES = Counter()
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


def valid_files():
    """The members of a small compiled model file, and its raw bytes."""
    x = Input(shape=(3,), name="x")
    model = Model(x, Dense(2, name="d")(Dense(4, name="h")(x)))
    model.compile(optimizer="adam", loss="mse")
    model.train_on_batch(np.ones((2, 3), "float32"), np.ones((2, 2), "float32"))
    path = FOLDER / "valid.nw"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}, path.read_bytes()


def archive(members, compression=zipfile.ZIP_DEFLATED):
    """A zip of ``[(name, bytes)]`` or ``{name: bytes}`` (duplicates allowed in the list form)."""
    buffer = io.BytesIO()
    items = members.items() if isinstance(members, dict) else members
    with zipfile.ZipFile(buffer, "w") as target:
        for name, content in items:
            target.writestr(zipfile.ZipInfo(name), content, compress_type=compression)
    return buffer.getvalue()


def attempt(content, expect=None):
    """Loads ``content`` as a model file and records the outcome; ``expect`` is a
    phrase the refusal must contain."""
    path = FOLDER / "candidate.nw"
    path.write_bytes(content)
    try:
        load_model(path)
    except ModelFormatError as error:
        cause = error
        while cause is not None:
            if isinstance(cause, (MemoryError, RecursionError)):
                raise AssertionError(f"refused only after running out: {error}") from error
            cause = cause.__cause__ or cause.__context__
        if expect is not None and expect not in str(error):
            raise AssertionError(f"expected a refusal saying {expect!r}, received: {error}") from error
        OUTCOMES["refused"] += 1
        return
    if expect is not None:
        raise AssertionError(f"expected a refusal saying {expect!r}, but the file loaded")
    OUTCOMES["loaded"] += 1


def deflate_bomb(name, size, fill=b" ", prefix=b""):
    """A zip whose member ``name`` inflates to ``prefix`` then ``size`` copies of the
    byte ``fill``. Its deflate stream repeats one compressed piece of up to 4 MiB: each
    copy ends in a full flush, after which deflate refers to nothing before, so the
    copies decode one after another and ``size`` bytes are never compressed (a
    1.5 GiB bomb in a fraction of a second where zipfile took 4.8 s)."""
    piece = fill * min(size, 4 * 2**20)
    copies, rest = divmod(size, len(piece))
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)  # raw deflate, as zip stores it
    head = compressor.compress(prefix) + compressor.flush(zlib.Z_FULL_FLUSH)
    copy = compressor.compress(piece) + compressor.flush(zlib.Z_FULL_FLUSH)
    stream = head + copy * copies + compressor.compress(fill * rest) + compressor.flush()
    crc = zlib.crc32(prefix)
    for _ in range(copies):
        crc = zlib.crc32(piece, crc)
    crc = zlib.crc32(fill * rest, crc)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        target.writestr(zipfile.ZipInfo(name), stream)  # stored as it is, then declared deflated below
    return rewrite_member(buffer.getvalue(), name, method=zipfile.ZIP_DEFLATED, crc=crc, size=len(prefix) + size)


def declare_size(content, name, size):
    """``content`` with the uncompressed size of member ``name`` rewritten to
    ``size`` in both its local header and its central-directory entry."""
    return rewrite_member(content, name, size=size)


def rewrite_member(content, name, method=None, crc=None, size=None):
    """``content`` with the compression method, CRC-32 and uncompressed size of
    member ``name`` (those given) rewritten in its local header and its
    central-directory entry."""
    data = bytearray(content)
    with zipfile.ZipFile(io.BytesIO(content)) as source:
        local = source.getinfo(name).header_offset
    central = data.find(b"PK\x01\x02")
    while central != -1:
        name_length = struct.unpack_from("<H", data, central + 28)[0]
        if bytes(data[central + 46: central + 46 + name_length]).decode() == name:
            break
        central = data.find(b"PK\x01\x02", central + 4)
    # Field offsets in the local header and in the central-directory entry (APPNOTE.TXT 4.3.7, 4.3.12).
    for value, form, at_local, at_central in ((method, "<H", 8, 10), (crc, "<I", 14, 16), (size, "<I", 22, 24)):
        if value is not None:
            struct.pack_into(form, data, local + at_local, value)
            struct.pack_into(form, data, central + at_central, value)
    return bytes(data)


def npy(shape, dtype, data=None, fortran=False, version=(1, 0)):
    """An .npy member with this header and ``data`` (by default, what the header declares)."""
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": fortran,
              "shape": tuple(shape)}
    buffer = io.BytesIO()
    write = np.lib.format.write_array_header_1_0 if version == (1, 0) else np.lib.format.write_array_header_2_0
    write(buffer, header)
    if data is None:
        data = bytes(int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize)
    return buffer.getvalue() + data


# --------------------------------------------------------------------- families
def bombs(files, raw):
    size = 1536 * 2**20  # 1.5 GiB of whitespace, about 1.5 MB deflated
    config_bomb = deflate_bomb("config.json", size)
    others = {k: v for k, v in files.items() if k != "config.json"}
    attempt(_merge(config_bomb, others), expect="config.json")
    attempt(_merge(deflate_bomb("metadata.json", 64 * 2**20), {k: v for k, v in files.items()
                                                               if k != "metadata.json"}), expect="metadata.json")
    attempt(_merge(deflate_bomb("weights.npz", 1024 * 2**20, b"\0"),
                   {k: v for k, v in files.items() if k != "weights.npz"}), expect="weights.npz")
    # The same bomb declaring a small size: zipfile inflates no more than declared, then the CRC fails.
    lying = declare_size(_merge(config_bomb, others), "config.json", 100)
    attempt(lying)
    # A weights.npz whose deflated kernel has a true header and declares its 48 bytes of data but
    # inflates to 2 MiB: only the declared bytes are inflated, then the CRC fails.
    with zipfile.ZipFile(io.BytesIO(files["weights.npz"])) as source:
        arrays = {info.filename: source.read(info) for info in source.infolist()}
    header = npy((3, 4), "float32", data=b"")
    kernel_bomb = declare_size(deflate_bomb("h/kernel.npy", 2 * 2**20, b"\0", prefix=header), "h/kernel.npy",
                               len(header) + 48)
    inner = _merge(kernel_bomb, {k: v for k, v in arrays.items() if k != "h/kernel.npy"})
    attempt(archive({**files, "weights.npz": inner}), expect="h/kernel")
    # A config asking for a billion-unit layer from a file holding a few hundred bytes of weights.
    config = json.loads(files["config.json"])
    for layer in config["config"]["layers"]:
        if layer["name"] == "h":
            layer["config"]["units"] = 10**9
    attempt(archive({**files, "config.json": json.dumps(config).encode()}), expect="weights past")
    huge_json = json.dumps(config)
    try:
        model_from_json(huge_json)
    except ModelFormatError as error:
        assert "max_weight_bytes" in str(error), error
        OUTCOMES["refused"] += 1
    deep = "[" * 200_000 + "]" * 200_000
    for text in (deep, '{"class_name": "Functional", "config": ' + deep + "}"):
        try:
            model_from_json(text)
        except ModelFormatError:
            OUTCOMES["refused"] += 1


def _merge(bomb, others):
    """The members of the zip ``bomb`` plus ``others`` ({name: bytes}), the bomb copied raw."""
    buffer = io.BytesIO(bomb)
    with zipfile.ZipFile(buffer, "a") as target:
        for name, content in others.items():
            target.writestr(name, content)
    return buffer.getvalue()


def truncations(files, raw):
    @SETTINGS
    @given(data=st.data())
    def case(data):
        content = bytearray(raw)
        action = data.draw(st.sampled_from(["cut", "flip", "splice"]))
        if action == "cut":
            content = content[: data.draw(st.integers(0, len(content)))]
        elif action == "flip":
            for _ in range(data.draw(st.integers(1, 8))):
                position = data.draw(st.integers(0, len(content) - 1))
                content[position] ^= data.draw(st.integers(1, 255))
        else:
            start = data.draw(st.integers(0, len(content)))
            content[start:start + data.draw(st.integers(0, 64))] = data.draw(st.binary(max_size=64))
        attempt(bytes(content))

    case()


DTYPES = ["float32", "float64", ">f4", "float16", "int32", "uint8", "bool", "complex64", "S4", "U3",
          "object", [("a", "<f4"), ("b", "<i4")], "V8"]


def npy_headers(files, raw):
    @SETTINGS
    @given(shape=st.lists(st.integers(0, 2**40), max_size=4) | st.just([3, 4]),
           dtype=st.sampled_from(DTYPES), fortran=st.booleans(),
           version=st.sampled_from([(1, 0), (2, 0)]),
           extra=st.integers(-64, 64), garbage=st.none() | st.binary(max_size=40),
           compressed=st.booleans())
    def case(shape, dtype, fortran, version, extra, garbage, compressed):
        dtype = np.dtype(dtype)
        if garbage is not None:
            member = b"\x93NUMPY" + garbage
        else:
            small = min(int(np.prod(shape, dtype=object)) * dtype.itemsize, 4096)
            member = npy(shape, dtype, data=bytes(max(small + extra, 0)), fortran=fortran, version=version)
        with zipfile.ZipFile(io.BytesIO(files["weights.npz"])) as source:
            arrays = {info.filename: source.read(info) for info in source.infolist()}
        arrays["h/kernel.npy"] = member
        weights = archive(arrays, zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED)
        attempt(archive({**files, "weights.npz": weights}))

    case()


def members(files, raw):
    entries = list(files.items())
    attempt(archive(entries + [("config.json", files["config.json"])]), expect="twice")
    for name in ("../config.json", "/etc/passwd", "a/../../x", "config.json/", "weights.npz\\..\\x"):
        attempt(archive(entries + [(name, b"{}")]), expect="unexpected member")
    for missing in ("config.json", "metadata.json", "weights.npz"):
        attempt(archive({k: v for k, v in entries if k != missing}), expect=f"no {missing}")
    for method in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        attempt(archive(entries, method), expect="compression method")
    encrypted = bytearray(archive(entries, zipfile.ZIP_STORED))
    offset = encrypted.find(b"PK\x01\x02")
    while offset != -1:
        struct.pack_into("<H", encrypted, offset + 8, struct.unpack_from("<H", encrypted, offset + 8)[0] | 1)
        offset = encrypted.find(b"PK\x01\x02", offset + 4)
    attempt(bytes(encrypted), expect="encrypted")
    with zipfile.ZipFile(io.BytesIO(files["weights.npz"])) as source:
        arrays = [(info.filename, source.read(info)) for info in source.infolist()]
    for extra in (("../../d/kernel.npy", arrays[0][1]), (arrays[0][0], arrays[0][1]), ("notes.txt", b"hi")):
        attempt(archive({**files, "weights.npz": archive(arrays + [extra], zipfile.ZIP_STORED)}))


def configs(files, raw):
    @SETTINGS
    @given(data=st.data())
    def case(data):
        config = json.loads(files["config.json"])
        attempt(archive({**files, "config.json": json.dumps(_mutate(config, data)).encode()}))

    case()


def _mutate(value, data):
    """Drops keys, changes types (huge numbers and deep nests included) or adds keys somewhere."""
    if isinstance(value, dict) and value:
        key = data.draw(st.sampled_from(sorted(value)))
        action = data.draw(st.sampled_from(["drop", "retype", "unknown", "recurse", "recurse"]))
        value = dict(value)
        if action == "drop":
            value.pop(key)
        elif action == "retype":
            value[key] = data.draw(_ODD_VALUES)
        elif action == "unknown":
            value["unexpected_" + key] = data.draw(_ODD_VALUES)
        else:
            value[key] = _mutate(value[key], data)
        return value
    if isinstance(value, list) and value:
        index = data.draw(st.integers(0, len(value) - 1))
        value = list(value)
        if data.draw(st.booleans()):
            value[index] = _mutate(value[index], data)
        else:
            value.pop(index)
        return value
    return data.draw(_ODD_VALUES)


def _nest(depth):
    value = 0
    for _ in range(depth):
        value = [value]
    return value


_ODD_VALUES = st.sampled_from([None, 0, -1, 1.5, "x", [], {}, True, 10**9, 2**63, -(10**12), 1e308,
                               [["x", 0, 0]], [1, 2], {"__tensor__": ["h", 0, 0]}, _nest(900)])

FAMILIES = {"bombs": bombs, "truncations": truncations, "npy_headers": npy_headers,
            "members": members, "configs": configs}

if __name__ == "__main__":
    warnings.filterwarnings("ignore", "Duplicate name", UserWarning)  # duplicates are the point
    FAMILIES[sys.argv[1]](*valid_files())
    print(json.dumps(dict(OUTCOMES)))
