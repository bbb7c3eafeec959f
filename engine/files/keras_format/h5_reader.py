"""Reading the HDF5 structure of a Keras weight file with our own code, in bounded memory.

libhdf5 trusts the sizes and addresses in a file's headers: one changed byte
of a Keras ``model.weights.h5`` made it allocate without bound (18.9 GB)
while resolving ``optimizer/vars``. This reader knows only the layouts Keras
writes through h5py (superblock version 0 or 1, version 1 object headers,
groups as symbol tables: a version 1 B-tree, its symbol table nodes and a
local heap of names; datasets of numbers stored contiguously or compactly),
and checks every address and size against the file before it reads.

Its memory is bounded by the file: each read lies inside the file, and the
structure it reads, all objects together, may total at most the file's size
(a legitimate file holds each structure once; a forged one that loops
through its B-trees or points many groups at one heap runs out of that
budget). Anything else (a chunked, filtered, external or virtual dataset, a
link other than a hard one, a shared message) is refused with the path it
was met on, before any of its data is read.
"""

import dataclasses
import io
import math
import struct

import numpy as np

from engine.errors import ModelFormatError

_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_UNDEFINED = 2**64 - 1
_STRUCTURE_ALLOWANCE = 2**16  # structure read beyond the file's size before a file counts as looping
_MAX_RANK = 32  # HDF5's own limit
# IEEE floats as HDF5 describes them: size -> (exponent location, exponent size, mantissa size, bias)
_IEEE = {2: (10, 5, 10, 15), 4: (23, 8, 23, 127), 8: (52, 11, 52, 1023)}
_CLASS_NAMES = ("integer", "float", "time", "string", "bitfield", "opaque", "compound", "reference", "enum",
                "variable-length", "array")


@dataclasses.dataclass(frozen=True)
class Link:
    """One member of a group: ``kind`` is ``"hard"`` (``address`` of its object header), ``"soft"``,
    ``"external"`` or ``"user-defined"``."""

    kind: str
    address: int | None = None


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A dataset's ``shape`` and ``dtype``, and where its bytes are: ``stored_size`` bytes at
    ``address`` in the file (contiguous storage; None when never written), or ``compact`` (kept in
    its header)."""

    shape: tuple
    dtype: np.dtype
    address: int | None
    stored_size: int
    compact: bytes | None

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


class H5File:
    """The HDF5 file in the seekable binary ``stream``, read as Keras writes it; ``source``
    names it in errors.

    Example:
        >>> import io, h5py
        >>> import numpy as np
        >>> buffer = io.BytesIO()
        >>> with h5py.File(buffer, "w") as file:
        ...     file["layers/dense/vars/0"] = np.ones((2, 3), "float32")
        >>> weights = H5File(buffer, "m.weights.h5")
        >>> weights.members("layers/dense/vars"), weights.get("layers/dense/vars/0").shape
        (['0'], (2, 3))
    """

    def __init__(self, stream, source: str):
        self.stream, self.source = stream, source
        self.size = stream.seek(0, io.SEEK_END)
        self._budget = self.size + _STRUCTURE_ALLOWANCE
        self._objects = {}  # object header address -> {name: Link} or Dataset
        self._root = self._superblock()

    # ------------------------------------------------------------------ public
    def link(self, path: str) -> Link | None:
        """The link ``path`` ends in, or None when there is none; each group on the way must be
        reached by a hard link."""
        parts = path.split("/")
        group = self._root
        for end, name in enumerate(parts):
            members = self._object(group, "/".join(parts[:end]) or "/")
            if not isinstance(members, dict):
                return None
            link = members.get(name)
            if link is None or end == len(parts) - 1:
                return link
            self._check_hard("/".join(parts[:end + 1]), link)
            group = link.address
        return None

    def get(self, path: str):
        """The group (``{name: Link}``) or ``Dataset`` at ``path`` (``""``: the root group), or None when there
        is none."""
        if not path:
            return self._object(self._root, "/")
        link = self.link(path)
        if link is None:
            return None
        self._check_hard(path, link)
        return self._object(link.address, path)

    def members(self, path: str) -> list[str]:
        """The names in group ``path``."""
        group = self.get(path)
        if not isinstance(group, dict):
            raise ModelFormatError(f"{path!r} in the weights of {self.source!r} is not a group.")
        return list(group)

    # -------------------------------------------------------------- structures
    def _fail(self, what):
        return ModelFormatError(f"The weights file of {self.source!r} cannot be read: {what}. It is damaged, or not "
                                "an HDF5 file as Keras writes it.")

    def _read(self, address, size, what):
        """``size`` bytes of structure at ``address``, charged to the file's budget."""
        if address < 0 or size < 0 or address + size > self.size:
            raise self._fail(f"{what} at {address:,} ({size:,} bytes) lies outside the {self.size:,}-byte file")
        self._budget -= size
        if self._budget < 0:
            raise self._fail(f"its structure reads more than the {self.size:,} bytes the file holds (it loops)")
        self.stream.seek(address)
        return self.stream.read(size)

    def _superblock(self):
        head = self._read(0, 8, "the superblock")
        if head != _SIGNATURE:
            for offset in (512 * 2**k for k in range(40)):
                if offset + 8 > self.size:
                    break
                if self._read(offset, 8, "a signature") == _SIGNATURE:
                    raise ModelFormatError(f"The weights file of {self.source!r} starts with a {offset:,}-byte "
                                           "user block; Keras writes none.")
            raise self._fail("it has no HDF5 signature")
        fields = self._read(8, 16, "the superblock")
        version, sizes = fields[0], (fields[5], fields[6])
        if version not in (0, 1) or sizes != (8, 8):
            raise self._fail(f"superblock version {version} with {sizes[0]}-byte addresses and {sizes[1]}-byte "
                             "lengths (Keras writes version 0, with 8-byte ones)")
        self._leaf_k, self._internal_k = struct.unpack_from("<HH", fields, 8)
        start = 24 + (4 if version == 1 else 0)
        base, _, _, _ = struct.unpack("<4Q", self._read(start, 32, "the superblock"))
        if base != 0:
            raise self._fail(f"its base address is {base:,}, not 0")
        return struct.unpack_from("<8xQ", self._read(start + 32, 40, "the root group's entry"))[0]

    def _check_hard(self, path, link):
        if link.kind != "hard":
            described = {"soft": "a soft link", "external": "an external link"}.get(link.kind, "a user-defined link")
            raise ModelFormatError(
                f"{path!r} in the weights of {self.source!r} is {described}; Keras writes plain groups and "
                "datasets, so the file is damaged or made to read something else.")

    def _object(self, address, path):
        if address not in self._objects:
            self._objects[address] = self._parse_object(address, path)
        return self._objects[address]

    def _messages(self, address, path):
        """``[(type, flags, data)]`` of the version 1 object header at ``address``, continuations included."""
        head = self._read(address, 16, f"the object header of {path!r}")
        version, count, size = head[0], struct.unpack_from("<H", head, 2)[0], struct.unpack_from("<I", head, 8)[0]
        if version != 1:
            raise self._fail(f"the object header of {path!r} has version {version} (Keras writes version 1)")
        blocks, messages, seen = [(address + 16, size)], [], set()
        while blocks:
            start, length = blocks.pop()
            if start in seen:
                raise self._fail(f"the object header of {path!r} continues into itself")
            seen.add(start)
            block, position = self._read(start, length, f"the object header of {path!r}"), 0
            while position + 8 <= len(block) and len(messages) < count:
                kind, length, flags = struct.unpack_from("<HHB", block, position)
                data = block[position + 8:position + 8 + length]
                if len(data) < length:
                    raise self._fail(f"a message of {path!r}'s header runs past its block")
                if kind == 0x10:
                    blocks.append(struct.unpack_from("<QQ", data))
                messages.append((kind, flags, data))
                position += 8 + length
        return messages

    def _parse_object(self, address, path):
        messages = self._messages(address, path)
        kinds = {kind for kind, _, _ in messages}
        try:
            if 0x11 in kinds:
                btree, heap = struct.unpack_from("<QQ", next(data for kind, _, data in messages if kind == 0x11))
                return self._symbol_table(btree, heap, path)
            if 0x8 in kinds:
                return self._dataset(messages, path)
        except (struct.error, IndexError) as error:
            raise self._fail(f"a message of {path!r} is too short ({error})") from error
        if 0x6 in kinds or 0x2 in kinds:
            raise self._fail(f"{path!r} is a group of link messages (Keras writes symbol tables)")
        raise self._fail(f"{path!r} is neither a group nor a dataset")

    def _symbol_table(self, btree, heap_address, path):
        """``{name: Link}`` of the group whose B-tree and local heap are at these addresses."""
        heap = self._read(heap_address, 32, f"the local heap of {path!r}")
        if heap[:5] != b"HEAP\x00":
            raise self._fail(f"the local heap of {path!r} has no HEAP signature")
        size, _, data_address = struct.unpack_from("<QQQ", heap, 8)
        names = self._read(data_address, size, f"the names of {path!r}")
        members, nodes, seen = {}, [btree], set()
        while nodes:
            node = nodes.pop()
            if node in seen:
                raise self._fail(f"the B-tree of {path!r} reaches node {node:,} twice")
            seen.add(node)
            head = self._read(node, 24, f"a B-tree node of {path!r}")
            if head[:5] != b"TREE\x00":
                raise self._fail(f"a B-tree node of {path!r} has no TREE signature")
            level, used = head[5], struct.unpack_from("<H", head, 6)[0]
            if used > 2 * self._internal_k:
                raise self._fail(f"a B-tree node of {path!r} holds {used} children, more than {2 * self._internal_k}")
            body = self._read(node + 24, 16 * used + 8, f"a B-tree node of {path!r}")
            children = [struct.unpack_from("<Q", body, 16 * i + 8)[0] for i in range(used)]
            if level:
                nodes.extend(reversed(children))
                continue
            for child in children:
                self._symbol_node(child, names, members, path)
        return members

    def _symbol_node(self, address, names, members, path):
        head = self._read(address, 8, f"a symbol table node of {path!r}")
        if head[:5] != b"SNOD\x01":
            raise self._fail(f"a symbol table node of {path!r} has no SNOD signature")
        count = struct.unpack_from("<H", head, 6)[0]
        if count > 2 * self._leaf_k:
            raise self._fail(f"a symbol table node of {path!r} holds {count} entries, more than {2 * self._leaf_k}")
        entries = self._read(address + 8, 40 * count, f"a symbol table node of {path!r}")
        for index in range(count):
            name_offset, header, cache = struct.unpack_from("<QQI", entries, 40 * index)
            end = names.find(b"\x00", name_offset)
            if end < 0:
                raise self._fail(f"a name in group {path!r} lies outside its heap")
            name = names[name_offset:end].decode("utf-8", "replace")
            if name in members:
                raise self._fail(f"group {path!r} holds {name!r} twice")
            if cache > 2:
                raise self._fail(f"{name!r} in group {path!r} has symbol table cache type {cache}")
            members[name] = Link("soft") if cache == 2 else Link("hard", header)

    def _dataset(self, messages, path):
        """The ``Dataset`` of these header messages; refused unless stored as Keras stores weights."""
        found = {}
        for kind, flags, data in messages:
            if flags & 0x02 and kind in (0x1, 0x3, 0x8):
                raise self._fail(f"{path!r} has a shared (committed) description")
            found.setdefault(kind, data)
        if 0x1 not in found or 0x3 not in found:
            raise self._fail(f"dataset {path!r} has no dataspace or no datatype")
        if 0x7 in found:
            raise self._refuse_storage(path, "stored in another file (external storage)")
        layout = self._layout(found[0x8], path)
        if 0xB in found:
            raise self._refuse_storage(path, "stored through filters (compression)")
        return Dataset(self._dataspace(found[0x1], path), self._datatype(found[0x3], path), *layout)

    def _refuse_storage(self, path, problem):
        return ModelFormatError(
            f"Weight {path!r} in {self.source!r} is {problem}; Keras writes each weight as a plain contiguous "
            "dataset, so the file is damaged or made to read something else, or to inflate into far more memory "
            "than its weights.")

    def _dataspace(self, data, path):
        version, rank, flags = data[0], data[1], data[2]
        if version not in (1, 2) or rank > _MAX_RANK or (version == 2 and data[3] == 2):
            raise self._fail(f"dataset {path!r} has a dataspace of version {version} and rank {rank}")
        start = 8 if version == 1 else 4
        return struct.unpack_from(f"<{rank}Q", data, start)

    def _datatype(self, data, path):
        kind, bits, size = data[0] & 0x0F, data[1:4], struct.unpack_from("<I", data, 4)[0]
        order = ">" if bits[0] & 0x01 else "<"
        if kind == 0 and size in (1, 2, 4, 8) and struct.unpack_from("<HH", data, 8) == (0, 8 * size):
            return np.dtype(f"{order}{'i' if bits[0] & 0x08 else 'u'}{size}")
        if kind == 1 and size in _IEEE and bits[0] & 0x7E == 0x20 and bits[1] == 8 * size - 1 and \
                struct.unpack_from("<HHBBBBI", data, 8) == (0, 8 * size, *_layout_of_float(size)):
            return np.dtype(f"{order}f{size}")
        described = _CLASS_NAMES[kind] if kind < len(_CLASS_NAMES) else f"class {kind}"
        raise ModelFormatError(f"Weight {path!r} in {self.source!r} has dtype {described} of {size} bytes; weights "
                               "are plain numbers (integers or IEEE floats).")

    def _layout(self, data, path):
        version, kind = data[0], data[1]
        if version != 3 or kind not in (0, 1):
            problem = ("stored in chunks" if kind == 2 else "a virtual dataset (its values come from other datasets)"
                       if kind == 3 else f"stored in an HDF5 layout of version {version}, class {kind}")
            raise self._refuse_storage(path, problem)
        if kind == 0:
            size = struct.unpack_from("<H", data, 2)[0]
            compact = data[4:4 + size]
            if len(compact) != size:
                raise self._fail(f"the compact data of {path!r} runs past its header")
            return None, size, compact
        address, size = struct.unpack_from("<QQ", data, 2)
        return (None if address == _UNDEFINED else address), size, None


def _layout_of_float(size):
    exponent_at, exponent_bits, mantissa_bits, bias = _IEEE[size]
    return exponent_at, exponent_bits, 0, mantissa_bits, bias
