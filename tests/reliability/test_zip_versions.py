"""Zip members that zipfile cannot extract (issue #28, item 9): a directory
entry needing zip version 25.5 (0xFF) made every loader raise
NotImplementedError, and the command line print a traceback. Each entry point
that reads a zip (``load_model`` of a ``.nw`` or ``.keras`` file, the ``.npz``
inside a ``.nw`` file, ``load_weights`` of a ``.keras`` or ``.npz`` file,
unpickling, the command line) now raises ModelFormatError naming the file and
the member, for that and for its kin: encryption, compressed patched data, a
compression method other than store and deflate, corrupt extra fields.

``python -m tests.reliability.test_zip_versions FOLDER`` fuzzes the directory
bytes of a model file and of the ``.npz`` in it, for the capped child process
of ``test_no_zip_error_escapes_a_fuzzed_directory``.
"""

import io
import json
import pickle
import struct
import sys
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from engine import Input, Model, ModelFormatError, load_model
from engine.pickling import rebuild
from graph.cli import main
from layers import Dense

# An extra-field record zipfile skips (tag 0xCAFE, 4 bytes), which two damages make corrupt.
SPARE_EXTRA = struct.pack("<HH4x", 0xCAFE, 4)
# Errors of zipfile and of reading bytes, which must reach the caller as a refusal naming the member.
ZIP_ERRORS = (zipfile.BadZipFile, NotImplementedError, RuntimeError, EOFError, OverflowError, struct.error)


def compiled_model():
    x = Input(shape=(3,), name="x")
    model = Model(x, Dense(2, name="d")(x))
    model.compile(optimizer="adam", loss="mse")
    return model


def members_of(data):
    """``{name: (bytes, compression method)}`` of the zip bytes ``data``."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: (archive.read(info), info.compress_type) for info in archive.infolist()}


def directory_entries(data):
    """``{name: offset}`` of the directory entries of the zip bytes ``data``."""
    end = data.rfind(b"PK\x05\x06")
    size, start = struct.unpack_from("<LL", data, end + 12)
    entries, position = {}, start
    while position < start + size:
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, position + 28)
        entries[bytes(data[position + 46:position + 46 + name_length]).decode()] = position
        position += 46 + name_length + extra_length + comment_length
    return entries


def rezipped(members, target, damage):
    """The zip of ``members`` (``members_of``) with ``SPARE_EXTRA`` on member
    ``target``, whose directory entry ``damage(data, offset)`` then edits."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, (content, method) in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            if name == target:
                info.extra = SPARE_EXTRA
            archive.writestr(info, content)
    data = bytearray(buffer.getvalue())
    position = directory_entries(data)[target]
    damage(data, position, position + 46 + len(target.encode()))
    return bytes(data)


def _or_flags(bits):
    def damage(data, entry, extra):
        struct.pack_into("<H", data, entry + 8, struct.unpack_from("<H", data, entry + 8)[0] | bits)
    return damage


def _zip64_without_sizes(data, entry, extra):
    struct.pack_into("<H", data, extra, 0x0001)  # a zip64 record of 4 bytes...
    struct.pack_into("<L", data, entry + 24, 0xFFFF_FFFF)  # ...to which the entry defers its size (8 bytes)


DAMAGES = {  # name: (damage, what the refusal says)
    "version 0xFF": (lambda data, entry, extra: struct.pack_into("<H", data, entry + 6, 0xFF),
                     "needs zip version 25.5 to be extracted"),
    "encrypted": (_or_flags(0x1), "is encrypted"),
    "strong encryption": (_or_flags(0x41), "uses strong encryption"),
    "compressed patched data": (_or_flags(0x20), "holds compressed patched data"),
    "compression method 99": (lambda data, entry, extra: struct.pack_into("<H", data, entry + 10, 99),
                              "uses zip compression method 99 (unknown)"),
    "compression method lzma": (lambda data, entry, extra: struct.pack_into("<H", data, entry + 10, 14),
                                "uses zip compression method 14 (lzma)"),
    "corrupt extra field": (lambda data, entry, extra: struct.pack_into("<H", data, extra + 2, 0x7F),
                            "has a corrupt extra field"),
    "zip64 extra without sizes": (_zip64_without_sizes, "has a zip64 extra field of 4 bytes"),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The bytes of one compiled model saved as ``.nw``, ``.keras`` and ``.npz``."""
    folder = tmp_path_factory.mktemp("saved")
    model = compiled_model()
    model.train_on_batch(np.ones((2, 3), "float32"), np.ones((2, 2), "float32"))
    model.save(folder / "m.nw")
    model.save(folder / "m.keras")
    model.save_weights(folder / "m.npz")
    return {suffix: (folder / f"m{suffix}").read_bytes() for suffix in (".nw", ".keras", ".npz")}


class _Pickled:
    """Unpickles as a model does: ``rebuild`` on the bytes of a ``.nw`` archive."""

    def __init__(self, archive):
        self.archive = archive

    def __reduce__(self):
        return rebuild, (self.archive,)


def _rezipped_file(tmp_path, saved, suffix, target, damage):
    path = tmp_path / f"m{suffix}"
    path.write_bytes(rezipped(members_of(saved[suffix]), target, damage))
    return path


def _the_npz_inside(tmp_path, saved, damage):
    members = members_of(saved[".nw"])
    inner = rezipped(members_of(members["weights.npz"][0]), "d/kernel.npy", damage)
    path = tmp_path / "m.nw"
    path.write_bytes(rezipped({**members, "weights.npz": (inner, zipfile.ZIP_STORED)}, "config.json", lambda *_: None))
    return path


def _command_line(path):
    try:
        main(["summary", str(path)])
    except SystemExit as exit_:
        raise ModelFormatError(str(exit_.code)) from None


ENTRY_POINTS = {  # name: (load the file made damaged, the member damaged, how the refusal names the file)
    "load_model .nw": (lambda tmp, saved, damage: load_model(_rezipped_file(tmp, saved, ".nw", "config.json", damage)),
                       "config.json", "{tmp}/m.nw"),
    "load_model .keras": (lambda tmp, saved, damage: load_model(
        _rezipped_file(tmp, saved, ".keras", "config.json", damage)), "config.json", "{tmp}/m.keras"),
    "the .npz in a .nw": (lambda tmp, saved, damage: load_model(_the_npz_inside(tmp, saved, damage)),
                          "d/kernel.npy", "weights.npz in {tmp}/m.nw"),
    "load_weights .keras": (lambda tmp, saved, damage: compiled_model().load_weights(
        _rezipped_file(tmp, saved, ".keras", "model.weights.h5", damage)), "model.weights.h5", "{tmp}/m.keras"),
    "load_weights .npz": (lambda tmp, saved, damage: compiled_model().load_weights(
        _rezipped_file(tmp, saved, ".npz", "d/kernel.npy", damage)), "d/kernel.npy", "{tmp}/m.npz"),
    "unpickling": (lambda tmp, saved, damage: pickle.loads(pickle.dumps(_Pickled(
        rezipped(members_of(saved[".nw"]), "config.json", damage)))), "config.json", "<bytes>"),
    "nodeweave summary": (lambda tmp, saved, damage: _command_line(
        _rezipped_file(tmp, saved, ".nw", "config.json", damage)), "config.json", "{tmp}/m.nw"),
}


@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_the_rezipped_files_load_undamaged(saved, tmp_path, entry_point):
    ENTRY_POINTS[entry_point][0](tmp_path, saved, lambda *_: None)


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_a_member_zipfile_cannot_extract_is_refused_naming_the_file_and_member(saved, tmp_path, entry_point,
                                                                                damage):
    load, member, source = ENTRY_POINTS[entry_point]
    edit, says = DAMAGES[damage]
    with pytest.raises(ModelFormatError) as refused:
        load(tmp_path, saved, edit)
    assert f"Member {member!r} of {source.format(tmp=tmp_path)!r} {says}" in str(refused.value), str(refused.value)


@pytest.mark.parametrize("command", ["summary", "plot", "view", "inspect"])
def test_every_command_says_which_member_without_a_traceback(saved, tmp_path, command, capsys):
    path = _rezipped_file(tmp_path, saved, ".keras", "config.json", DAMAGES["version 0xFF"][0])
    with pytest.raises(SystemExit) as exited:
        main([command, str(path), *(["-o", str(tmp_path / "out.svg")] if command == "plot" else [])])
    assert str(exited.value.code) == (
        f"nodeweave: Member 'config.json' of {str(path)!r} needs zip version 25.5 to be extracted, but zipfile "
        "extracts up to 6.3: the file is damaged, or it is not a nodeweave or Keras model file.")
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.slow  # about 630 loads, in a child process
def test_no_zip_error_escapes_a_fuzzed_directory(tmp_path):
    from tests.reliability.capped import run_capped

    child = run_capped("tests.reliability.test_zip_versions", tmp_path, memory=2**30, timeout=240)
    assert child.returncode == 0, child.stderr[-3000:]
    outcomes = json.loads(child.stdout.strip().splitlines()[-1])
    assert outcomes["refused"] >= 300 and outcomes["loaded"] >= 100, outcomes


def fuzz_directories(folder):
    """Loads every variation of a ``.nw`` file with one byte of the directory
    entry of its first member, or of its end record, set to 0x00, 0xFF, or
    with its top or bottom bit flipped; the same for the ``.npz`` inside it.
    Each load must succeed or raise ModelFormatError, and a refusal caused by
    an error of zipfile must name the member (not be the loader's catch-all).
    Returns the counts of outcomes."""
    model = compiled_model()
    model.save(folder / "valid.nw")
    valid = (folder / "valid.nw").read_bytes()
    members = members_of(valid)
    outcomes = Counter()
    for data, rebuild_file in ((valid, lambda mutated: mutated),
                               (members["weights.npz"][0], lambda mutated: rezipped(
                                   {**members, "weights.npz": (mutated, zipfile.ZIP_STORED)}, "config.json",
                                   lambda *_: None))):
        first = min(directory_entries(data).values())
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, first + 28)
        end = data.rfind(b"PK\x05\x06")
        offsets = [*range(first, first + 46 + name_length + extra_length + comment_length), *range(end, len(data))]
        for offset in offsets:
            for value in sorted({0x00, 0xFF, data[offset] ^ 0x80, data[offset] ^ 0x01}):
                mutated = bytearray(data)
                mutated[offset] = value
                path = folder / "candidate.nw"
                path.write_bytes(rebuild_file(bytes(mutated)))
                try:
                    load_model(path)
                except ModelFormatError as error:
                    if str(error).startswith("Cannot load model file") and isinstance(error.__cause__, ZIP_ERRORS):
                        raise AssertionError(f"byte {offset} set to {value}: the catch-all caught {error}") from error
                    outcomes["refused"] += 1
                    continue
                outcomes["loaded"] += 1
    return outcomes


if __name__ == "__main__":
    print(json.dumps(fuzz_directories(Path(sys.argv[1]))))
