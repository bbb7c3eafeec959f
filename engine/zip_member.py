"""One member of a zip archive, read in place: a file of its own, read straight into arrays.

A model file's weights are a member of a zip archive (``weights.npz`` in a
``.nw`` file, ``model.weights.h5`` in a Keras ``.keras`` file). Reading the
member into bytes and then copying each weight out of them touched every byte
twice. A ``ZipMember`` of a stored member is instead a window onto the
archive's own file: the member's reader (numpy's ``.npz`` directory, HDF5)
reads its small structures from it, and each weight is read with ``readinto``
straight into its own array. ``verify`` then checks the member's CRC in one
pass over its bytes in order, taking the weights' bytes from their arrays.
"""

import io
import struct
import zipfile

from zlib_ng import zlib_ng

from engine.errors import ModelFormatError
from engine.load_limits import check_member_size, read_member

LOCAL_HEADER = struct.Struct("<4s22xHH")  # a zip member's signature, then the lengths of its name and extra field
LOCAL_HEADER_SIZE = 30
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
        >>> from engine.load_limits import LoadLimits
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
