"""One member of a zip archive, read in place: a file of its own, read straight into arrays.

A model file's weights are a member of a zip archive (``weights.npz`` in a
``.nw`` file, ``model.weights.h5`` in a Keras ``.keras`` file). Reading the
member into bytes and then copying each weight out of them touched every byte
twice. A ``ZipMember`` of a stored member is instead a window onto the
archive's own file: the member's reader (numpy's ``.npz`` directory, HDF5)
reads its small structures from it, and each weight is read with ``readinto``
straight into its own array. ``verify`` then checks the member's CRC in one
pass over its bytes in order, taking the weights' bytes from their arrays.

Every zip a load reads (a model file, the ``.npz`` in it, a weights file) is
opened by ``open_archive``, which turns whatever ``zipfile`` raises on a hostile
directory into a ModelFormatError naming the member at fault, and refuses a
member ``zipfile`` could not extract, or compressed other than stored or
deflated, before anything is read from it.
"""

import io
import struct
import zipfile

from zlib_ng import zlib_ng

from engine.errors import ModelFormatError
from engine.files.load_limits import check_member_size, read_member

LOCAL_HEADER = struct.Struct("<4s22xHH")  # a zip member's signature, then the lengths of its name and extra field
LOCAL_HEADER_SIZE = 30
# A directory entry: its signature, the zip version needed to extract the member, the
# member's compressed and full sizes, the lengths of its name, extra field and comment,
# and where its local header is.
_DIRECTORY_ENTRY = struct.Struct("<4s2xH12xLLHHH8xL")
_ZIP64_LOCATOR_AND_RECORD_SIZE = 20 + 56
# What zipfile raises on a hostile directory: NotImplementedError for a member
# needing a later zip version than it reads, BadZipFile for a corrupt extra field,
# the others for damaged bytes (offsets past the end, a name that is not UTF-8).
_DIRECTORY_ERRORS = (zipfile.BadZipFile, NotImplementedError, EOFError, OSError, ValueError, OverflowError,
                     struct.error)
_BUFFER_BYTES = 2**16
_CRC_CHUNK_BYTES = 2**20


class ZipMember:
    """Member ``name`` of the open ``zipfile.ZipFile`` ``archive``, as a seekable
    binary ``stream`` of its own, after its declared size is checked against
    ``max_bytes`` (``limit_name`` names that limit in the error).

    A stored member (as nodeweave and Keras write weights) is a buffered window
    onto the archive's file, and its CRC is checked by ``verify``; any other is
    inflated by ``read_member`` (zipfile checks its CRC as it reads).

    Example:
        >>> import io, zipfile
        >>> import numpy as np
        >>> from engine.files.load_limits import LoadLimits
        >>> buffer = io.BytesIO()
        >>> with zipfile.ZipFile(buffer, "w") as archive:
        ...     archive.writestr("w.bin", np.arange(4, dtype="float32").tobytes())
        >>> member = ZipMember(zipfile.ZipFile(buffer), "w.bin", 16, LoadLimits(), "m.zip", "its size")
        >>> array = np.empty(4, "float32")
        >>> member.read_into(0, array, "w")
        >>> member.verify()
        >>> array
        array([0., 1., 2., 3.], dtype=float32)
    """

    def __init__(self, archive, name, max_bytes, limits, source, limit_name):
        info = archive.getinfo(name)
        check_member_size(info, max_bytes, limits, source, limit_name)
        self.size, self.where, self._regions = info.file_size, f"{name} in {source}", []
        if not is_plain_stored(info):
            self.stream, self._crc = io.BytesIO(read_member(archive, name, max_bytes, limits, source, limit_name)), None
            return
        try:
            begin = member_data_offset(read_at(archive.fp, info.header_offset, LOCAL_HEADER_SIZE + 4 * len(name)), info)
        except (OSError, struct.error, zipfile.BadZipFile) as error:
            raise ModelFormatError(f"Member {name!r} of {source!r} cannot be read: {error}") from error
        window = _Window(archive.fp, info.header_offset + begin, info.file_size)
        self.stream, self._crc = io.BufferedReader(window, _BUFFER_BYTES), info.CRC

    def read_into(self, offset, array, what):
        """Fills ``array`` (C-contiguous, of its own memory) with the member's
        bytes from ``offset`` on; ``what`` names the array in errors. The array
        is kept for ``verify``."""
        view = memoryview(array).cast("B")
        if offset < 0 or offset + len(view) > self.size or readinto_at(self.stream, offset, view) < len(view):
            raise ModelFormatError(f"{what} in {self.where!r} lies past the end of the member: the file is truncated "
                                   "or damaged.")
        self._regions.append((offset, view))

    def verify(self):
        """Checks the member's CRC-32 over its bytes in order: those of the arrays
        ``read_into`` filled from the arrays, the rest read from the file.

        Raises:
            ModelFormatError: the CRC differs (the file is damaged), or two
                arrays were read from overlapping bytes.
        """
        if self._crc is None:
            return
        crc, position = 0, 0
        for offset, view in sorted(self._regions, key=lambda region: region[0]):
            if offset < position:
                raise ModelFormatError(f"Two weights in {self.where!r} are read from the same bytes: the file is "
                                       "damaged or forged.")
            crc = self._crc_of_range(position, offset, crc)
            crc, position = zlib_ng.crc32(view, crc), offset + len(view)
        if self._crc_of_range(position, self.size, crc) != self._crc:
            raise ModelFormatError(f"{self.where!r} fails its CRC check: the file is damaged.")

    def _crc_of_range(self, start, end, crc):
        self.stream.seek(start)
        while start < end:
            chunk = self.stream.read(min(_CRC_CHUNK_BYTES, end - start))
            if not chunk:
                raise ModelFormatError(f"{self.where!r} is truncated.")
            crc, start = zlib_ng.crc32(chunk, crc), start + len(chunk)
        return crc


def open_archive(stream, source, kind):
    """The ``zipfile.ZipFile`` of the zip archive in the seekable binary
    ``stream`` (only its directory is read), every member of which zipfile
    can extract, stored or deflated.

    Args:
        stream: the archive's file, or an in-memory buffer of it.
        source: names the file in errors.
        kind: what the file should be, for errors (``"a nodeweave model file"``).

    Raises:
        ModelFormatError: the stream is not a zip archive, or a member cannot be
            extracted (it needs a later zip version than zipfile reads, its
            zip64 extra field is corrupt, it is encrypted, or compressed by
            another method than store and deflate), naming that member.

    Example:
        >>> import io
        >>> buffer = io.BytesIO()
        >>> with zipfile.ZipFile(buffer, "w") as archive:
        ...     archive.writestr("config.json", "{}")
        >>> open_archive(buffer, "m.nw", "a nodeweave model file").namelist()
        ['config.json']
        >>> open_archive(io.BytesIO(b"plain text"), "m.nw", "a model file")
        Traceback (most recent call last):
        ...
        engine.errors.ModelFormatError: 'm.nw' is not a model file (not a zip archive: File is not a zip file).
    """
    try:
        archive = zipfile.ZipFile(stream)
    except _DIRECTORY_ERRORS as error:
        fault = _directory_fault(stream)
        if fault is None:
            raise ModelFormatError(f"{source!r} is not {kind} (not a zip archive: {error}).") from error
        name, problem = fault
        raise ModelFormatError(f"Member {name!r} of {source!r} {problem}: the file is damaged, or it is not "
                               f"{kind}.") from error
    for info in archive.infolist():
        problem = _extraction_problem(info)
        if problem is not None:
            archive.close()
            raise ModelFormatError(f"Member {info.filename!r} of {source!r} {problem}: the file is damaged, or it "
                                   f"is not {kind}.")
    return archive


def _extraction_problem(info):
    """Why member ``info`` (as the directory describes it) is not to be
    extracted, or None: zipfile cannot extract it, or it is compressed by a
    method other than those model and weight files use, whose decompressors
    (bzip2, LZMA) raise errors of their own on damaged data."""
    if info.flag_bits & 0x40:
        return "uses strong encryption, and model files are not encrypted"
    if info.flag_bits & 0x1:
        return "is encrypted, and model files are not"
    if info.flag_bits & 0x20:
        return "holds compressed patched data, which zipfile cannot extract"
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        method = zipfile.compressor_names.get(info.compress_type, "unknown")
        return (f"uses zip compression method {info.compress_type} ({method}), where NumPy, Keras and nodeweave "
                "store or deflate")
    return None


def _directory_fault(stream):
    """``(name, problem)`` of the first member in the zip directory of ``stream``
    that zipfile refuses to list: one needing a later zip version than it
    extracts, or whose extra field is corrupt; None when none is found (the
    directory itself is damaged)."""
    try:
        end = zipfile._EndRecData(stream)  # the end record zipfile itself reads: where the directory is
        if end is None:
            return None
        size = end[zipfile._ECD_SIZE]
        position = end[zipfile._ECD_LOCATION] - size
        if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:
            position -= _ZIP64_LOCATOR_AND_RECORD_SIZE
        done = 0
        while done < size:
            head = read_at(stream, position + done, _DIRECTORY_ENTRY.size)
            signature, version, compressed, full, name_length, extra_length, comment_length, offset = \
                _DIRECTORY_ENTRY.unpack(head)
            if signature != zipfile.stringCentralDir:
                return None
            name = stream.read(name_length).decode("utf-8", "replace")
            if version > zipfile.MAX_EXTRACT_VERSION:
                return name, (f"needs zip version {version / 10:.1f} to be extracted, but zipfile extracts up to "
                              f"{zipfile.MAX_EXTRACT_VERSION / 10:.1f}")
            problem = _extra_field_problem(stream.read(extra_length), (compressed, full, offset))
            if problem is not None:
                return name, problem
            done += _DIRECTORY_ENTRY.size + name_length + extra_length + comment_length
    except (OSError, ValueError, OverflowError, struct.error):
        return None
    return None


def _extra_field_problem(extra, sizes):
    """Why zipfile refuses a directory entry's ``extra`` field, or None: a
    record running past its end, or a zip64 record without the 8-byte value
    of each of ``sizes`` (compressed size, size, offset) that says it is there."""
    while len(extra) >= 4:
        tag, length = struct.unpack_from("<HH", extra)
        if 4 + length > len(extra):
            return f"has a corrupt extra field (record {tag:#06x} of {length} bytes runs past its end)"
        deferred = sum(size == 0xFFFF_FFFF for size in sizes)
        if tag == 0x0001 and length < 8 * deferred:
            return f"has a zip64 extra field of {length} bytes without the {deferred} sizes its entry defers to it"
        extra = extra[4 + length:]
    return None


def is_plain_stored(info):
    """Whether zip member ``info`` is stored as it is: not compressed, not encrypted."""
    return info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 0x1 and info.compress_size == info.file_size


def member_data_offset(head, info):
    """Where member ``info``'s data begins after its local header (``head``, the
    bytes from that header on), after the checks zipfile makes: the signature and
    the name."""
    signature, name_length, extra_length = LOCAL_HEADER.unpack_from(head)
    name = head[LOCAL_HEADER_SIZE:LOCAL_HEADER_SIZE + name_length]
    name = name.decode("ascii") if name.isascii() else name.decode("utf-8" if info.flag_bits & 0x800 else "cp437")
    if signature != b"PK\x03\x04" or name != info.orig_filename:
        raise zipfile.BadZipFile(f"Bad local file header of member {info.orig_filename!r}")
    return LOCAL_HEADER_SIZE + name_length + extra_length


def read_at(stream, offset, size):
    """Up to ``size`` bytes of ``stream`` from ``offset`` (fewer at its end)."""
    stream.seek(offset)
    return stream.read(size)


def readinto_at(stream, offset, view):
    """Reads into all of ``view`` from ``offset`` of ``stream``; returns the bytes read (fewer at its end)."""
    stream.seek(offset)
    done = 0
    while done < len(view):
        count = stream.readinto(view[done:])
        if not count:
            break
        done += count
    return done


class _Window(io.RawIOBase):
    """The bytes ``[start, start + size)`` of a seekable binary stream, as a file of their own."""

    def __init__(self, stream, start, size):
        super().__init__()
        self._stream, self._start, self._size, self._position = stream, start, size, 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._position

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise OSError(f"Cannot seek to {base + offset}, before the start of the member.")
        self._position = base + offset
        return self._position

    def readinto(self, buffer):
        view = memoryview(buffer).cast("B")
        wanted = max(0, min(len(view), self._size - self._position))
        count = readinto_at(self._stream, self._start + self._position, view[:wanted])
        self._position += count
        return count
