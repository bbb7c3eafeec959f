"""Reading the arrays of an ``.npz`` archive from its file into fresh arrays.

A weight is touched once on its way in: each stored ``.npy`` member is read with
``readinto`` straight into a new array of the weight's shape, then its CRC is
computed over that array, by zlib-ng (7 times zlib's speed). Reading the whole
archive into bytes and copying each array out of them touched every byte twice,
and zlib's CRC then cost as much as the read: VGG16 loaded in twice its build.

Every header is checked before the array is allocated: the member's declared size
against what the weight can hold, the ``.npy`` header's dtype and shape against
the weight's, and the member's size against header plus data. ``open_npz_member``
gives the ``weights.npz`` inside a ``.nw`` file the same treatment, through a
window onto the model file (``engine.files.zip_member``), without reading it whole.
"""

import functools
import io
import math
import re
import struct
import tokenize
import zipfile
import zlib

import numpy as np
from zlib_ng import zlib_ng

from engine.errors import ModelFormatError
from engine.files.load_limits import array_size_bound, check_member_size
from engine.files.zip_member import (LOCAL_HEADER_SIZE, ZipMember, is_plain_stored, member_data_offset, open_archive,
                                     read_at, readinto_at)

# Read with a member's local header: np.save's own .npy header (128 bytes for a
# 4-D shape) and, for a small array, the whole member in one read.
_HEAD_BYTES = 4096
_MAX_NPY_HEADER_BYTES = 2**16


def open_npz(stream, source):
    """The ``zipfile.ZipFile`` of the ``.npz`` in the seekable binary ``stream``
    (only its directory is read, by ``open_archive``); ModelFormatError when it
    is not a zip archive or holds a member zipfile cannot extract.

    Example:
        >>> import io
        >>> import numpy as np
        >>> buffer = io.BytesIO()
        >>> np.savez(buffer, **{"dense/bias": np.zeros(2, "float32")})
        >>> open_npz(buffer, "memory").namelist()
        ['dense/bias.npy']
    """
    return open_archive(stream, source, "an .npz archive")


def open_npz_member(archive, name, max_bytes, limits, source, limit_name):
    """The ``.npz`` archive that member ``name`` of the zip ``archive`` holds,
    opened with ``open_npz``, after checking its declared size against
    ``max_bytes``. A stored member (as ``model.save`` writes it) is read through
    a window onto the archive's own file, so that ``read_arrays`` reads each
    array from the file exactly once; any other is inflated by ``read_member``.

    Example:
        >>> import io, zipfile
        >>> import numpy as np
        >>> from engine.files.load_limits import LoadLimits
        >>> inner, outer = io.BytesIO(), io.BytesIO()
        >>> np.savez(inner, w=np.ones(3, "float32"))
        >>> with zipfile.ZipFile(outer, "w") as archive:
        ...     archive.writestr("weights.npz", inner.getvalue())
        >>> npz = open_npz_member(zipfile.ZipFile(outer), "weights.npz", 2**20, LoadLimits(), "m.nw", "a limit")
        >>> read_arrays(npz, {"w": ((3,), "float32")}, LoadLimits(), "m.nw")
        ({'w': array([1., 1., 1.], dtype=float32)}, [])
    """
    member = ZipMember(archive, name, max_bytes, limits, source, limit_name)
    return open_npz(member.stream, member.where)  # each array's own CRC covers its bytes: no verify()


def read_arrays(npz, expected, limits, source, report_missing=True):
    """Reads the arrays of the ``.npz`` archive ``npz`` (``open_npz``) meant to fill
    ``expected`` (``{name: (shape, dtype)}``), checking each header before the
    array is allocated, and each member's CRC.

    Args:
        npz: the open ``zipfile.ZipFile`` of the ``.npz``.
        expected: ``{name: (shape, dtype)}`` of the weights to fill.
        limits: the ``LoadLimits`` of this load.
        source: names the file in messages.
        report_missing: whether a weight of ``expected`` the file lacks is a problem.

    Returns:
        ``(arrays, problems)``: each array in memory of its own (never a view of
        a buffer), in the file's dtype; an array the model does not have, or of
        another shape or dtype kind, is left unread and described in
        ``problems``, as is a missing one when ``report_missing``.

    Raises:
        ModelFormatError: a malformed, truncated or damaged member.

    Example:
        >>> import io
        >>> import numpy as np
        >>> from engine.files.load_limits import LoadLimits
        >>> buffer = io.BytesIO()
        >>> np.savez(buffer, **{"dense/bias": np.arange(2, dtype="float32")})
        >>> npz = open_npz(buffer, "memory")
        >>> read_arrays(npz, {"dense/bias": ((2,), "float32"), "dense/kernel": ((3, 2), "float32")},
        ...             LoadLimits(), "memory")
        ({'dense/bias': array([0., 1.], dtype=float32)}, ["weight 'dense/kernel' of the model is missing from memory"])
    """
    arrays, problems, seen = {}, [], set()
    for info in sorted(npz.infolist(), key=lambda info: info.header_offset):
        name = info.filename[:-4] if info.filename.endswith(".npy") else None
        if name is None or name in seen:
            raise ModelFormatError(f"{source!r} holds the member {info.filename!r}, which is not one array of an .npz.")
        seen.add(name)
        if name not in expected:
            problems.append(f"{source} has weight {name!r}, which the model does not have")
            continue
        shape, dtype = expected[name]
        check_member_size(info, array_size_bound(name, shape, dtype), limits, source, "the size of that array")
        try:
            array = _read_member_array(npz, info, name, tuple(shape), np.dtype(dtype), source)
        except (zipfile.BadZipFile, EOFError, OSError, zlib.error, struct.error) as error:
            raise ModelFormatError(f"Array {name!r} in {source!r} cannot be read: {error}") from error
        if isinstance(array, str):
            problems.append(array)
        else:
            arrays[name] = array
    if report_missing:
        problems += [f"weight {name!r} of the model is missing from {source}" for name in expected if name not in seen]
    return arrays, problems


def _read_member_array(npz, info, name, shape, dtype, source):
    """The array of member ``info``, or a string saying why it does not fit the
    weight. A stored member is read straight into the array; a compressed one
    (``np.savez_compressed``) through zipfile."""
    if not is_plain_stored(info):
        with npz.open(info) as stream:
            member = stream.read(info.file_size)
        if len(member) != info.file_size:
            raise ModelFormatError(f"Array {name!r} in {source!r} is truncated.")
        header = _npy_header(member[:_npy_header_size(member, name, source)], info, name, shape, dtype, source)
        if isinstance(header, str):
            return header
        file_shape, fortran_order, file_dtype, offset = header
        data = np.frombuffer(member, np.uint8, offset=offset)
        return _shaped(data.copy(), file_shape, fortran_order, file_dtype)
    stream = npz.fp
    wanted = min(info.file_size, _HEAD_BYTES)
    head = read_at(stream, info.header_offset, LOCAL_HEADER_SIZE + 4 * len(info.orig_filename) + 64 + wanted)
    begin = member_data_offset(head, info)
    if begin + wanted > len(head):  # a long extra field
        head = read_at(stream, info.header_offset, begin + wanted)
    member_start = info.header_offset + begin
    prefix = head[begin:begin + info.file_size]
    header_end = _npy_header_size(prefix, name, source)
    if header_end > len(prefix):
        prefix = read_at(stream, member_start, min(header_end, info.file_size))
    header = _npy_header(prefix[:header_end], info, name, shape, dtype, source)
    if isinstance(header, str):
        return header
    file_shape, fortran_order, file_dtype, offset = header
    if len(prefix) == info.file_size:  # a small array, read whole with its header
        if zlib_ng.crc32(prefix) != info.CRC:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.orig_filename!r}")
        return _shaped(np.frombuffer(prefix, np.uint8, offset=offset).copy(), file_shape, fortran_order, file_dtype)
    data = np.empty(info.file_size - offset, np.uint8)
    ready = prefix[offset:]
    data[:len(ready)] = np.frombuffer(ready, np.uint8)
    rest = memoryview(data)[len(ready):]
    if rest and readinto_at(stream, member_start + offset + len(ready), rest) < len(rest):
        raise ModelFormatError(f"Array {name!r} in {source!r} is truncated.")
    if zlib_ng.crc32(data, zlib_ng.crc32(prefix[:offset])) != info.CRC:
        raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.orig_filename!r}")
    return _shaped(data, file_shape, fortran_order, file_dtype)


def _shaped(data, file_shape, fortran_order, file_dtype):
    """The bytes ``data`` (a 1-D uint8 array of its own) viewed as the stored array."""
    return data.view(file_dtype).reshape(file_shape, order="F" if fortran_order else "C")


def _npy_header(header, info, name, shape, dtype, source):
    """``(shape, fortran_order, dtype, offset)`` of the ``.npy`` header (the bytes
    ``header``), checked against the weight and the member's size, or a
    string saying why the array does not fit the weight."""
    try:
        file_shape, fortran_order, file_dtype, offset = _parse_npy_header(header)
    except (ValueError, SyntaxError, tokenize.TokenError) as error:  # NumPy's reader tokenizes a header it does not know
        detail = error.args[0] if isinstance(error, tokenize.TokenError) else error
        raise ModelFormatError(f"Array {name!r} in {source!r} has a malformed .npy header: {detail}") from error
    if file_dtype.hasobject or file_dtype.fields is not None or file_dtype.kind not in "biuf":
        raise ModelFormatError(f"Array {name!r} in {source!r} has dtype {file_dtype}; weights are plain numeric arrays.")
    if tuple(file_shape) != shape:
        return f"weight {name!r} has shape {shape} in the model but {tuple(file_shape)} in {source}"
    if file_dtype.kind != dtype.kind:
        return f"weight {name!r} has dtype {dtype} in the model but {file_dtype} in {source}"
    nbytes = math.prod(file_shape) * file_dtype.itemsize
    if info.file_size != offset + nbytes:
        raise ModelFormatError(
            f"Array {name!r} in {source!r} declares shape {tuple(file_shape)} and dtype {file_dtype} "
            f"({nbytes:,} bytes) but its member holds {info.file_size - offset:,} bytes of data."
        )
    return file_shape, fortran_order, file_dtype, offset


# The header np.save writes, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
# padded with spaces to a newline. Parsing it here takes a regular expression where NumPy's
# reader compiles it with ast.literal_eval: a third of the load of a 12,000-layer model.
_NPY_MAGIC = b"\x93NUMPY"
_CANONICAL_NPY_HEADER = re.compile(
    rb"\{'descr': '([<>|=][a-z]\d{1,2})', 'fortran_order': (True|False), 'shape': \(((?:\d+, )*(?:\d+,?)?)\), \} *\n"
)
_LENGTH_FIELD_SIZE = {(1, 0): 2, (2, 0): 4, (3, 0): 4}


def _npy_header_size(member, name, source):
    """How many bytes the ``.npy`` header at the start of ``member`` takes, from its
    preamble (magic string, version and header length)."""
    try:
        start = 8 + _length_field_size(member)
    except ValueError as error:
        raise ModelFormatError(f"Array {name!r} in {source!r} has a malformed .npy header: {error}") from error
    if len(member) < start:
        raise ModelFormatError(f"Array {name!r} in {source!r} is truncated.")
    size = start + int.from_bytes(member[8:start], "little")
    if size > _MAX_NPY_HEADER_BYTES:
        raise ModelFormatError(f"Array {name!r} in {source!r} has a .npy header of {size:,} bytes; np.save writes "
                               f"at most a few hundred, and {_MAX_NPY_HEADER_BYTES:,} are accepted.")
    return size


def _length_field_size(member):
    if member[:6] != _NPY_MAGIC or len(member) < 8:
        raise ValueError(f"the file does not start with the .npy magic string {_NPY_MAGIC!r}")
    version = (member[6], member[7])
    if version not in _LENGTH_FIELD_SIZE:
        raise ValueError(f"unsupported .npy format version {version}")
    return _LENGTH_FIELD_SIZE[version]


def _parse_npy_header(header):
    """``_parse_header`` of the bytes ``header``, remembered for np.save's short
    headers: a model's weights have few distinct shapes."""
    return _parse_short_header(header) if len(header) <= 256 else _parse_header(header)


@functools.lru_cache(maxsize=1024)
def _parse_short_header(header):
    return _parse_header(header)


def _parse_header(member):
    """``(shape, fortran_order, dtype, offset of the data)`` of the ``.npy`` file
    ``member`` (bytes). A header other than np.save's own goes to NumPy's reader,
    with its limit on the header's size."""
    length_size = _length_field_size(member)
    start = 8 + length_size
    end = start + int.from_bytes(member[8:start], "little")
    match = _CANONICAL_NPY_HEADER.fullmatch(member, start, end) if end <= len(member) else None
    if match is None:
        reader = np.lib.format.read_array_header_1_0 if length_size == 2 else np.lib.format.read_array_header_2_0
        stream = io.BytesIO(member[8:])
        shape, fortran_order, dtype = reader(stream)
        return shape, fortran_order, dtype, 8 + stream.tell()
    descr, fortran_order, shape = match.groups()
    try:
        dtype = np.dtype(descr.decode("ascii"))
    except TypeError as error:
        raise ValueError(f"descr {descr.decode('ascii')!r} is not a valid dtype descriptor") from error
    return tuple(int(d) for d in shape.split(b",") if d.strip()), fortran_order == b"True", dtype, end
