"""Limits on what loading a file may read and allocate.

A small hostile file must not be able to exhaust memory or time, so every read
is checked before it is made:

- each zip member's declared sizes are checked against the archive (its
  compressed bytes must lie inside it), its compression ratio against
  ``max_compression_ratio``, and its uncompressed size against what that member
  must hold, before a byte of it is inflated (``zipfile`` then never returns
  more than the declared size, and checks the CRC);
- ``config.json`` may hold at most ``max_config_bytes``;
- each ``.npy`` array's header is read first and its dtype and shape must be
  those of the weight it fills, and the member's size exactly header plus data,
  before the array is allocated (``engine.files.npz_arrays``);
- the weights a config creates while the model is rebuilt are charged against a
  budget: for a model file, the bytes its ``weights.npz`` (or a Keras file's
  ``model.weights.h5``) holds (every weight is saved there, so a real model
  never exceeds it); for a JSON config,
  ``max_weight_bytes``;
- drawing a JSON config's weights is charged too: the temporaries each
  initializer allocates must fit in what is left of the budget, and its
  arithmetic (``Orthogonal``'s QR factorization is cubic) within
  ``max_initializer_operations``; a model file's weights are not drawn at all,
  since the file assigns them;
- a layer without ``compute_output_shape`` learns its output shape by running
  ``call`` on examples of its inputs' declared shapes: they must fit in what is
  left of the budget.

Exceeding a limit raises ``ModelFormatError`` naming the member and the limit.
The fixed limits are the fields of ``LoadLimits``; pass a larger one to
``load_model(..., limits=LoadLimits(max_config_bytes=...))`` for a
legitimately huge model.
"""

import contextlib
import contextvars
import dataclasses
import io
import json
import math
import zipfile
import zlib

import numpy as np

from engine.errors import ModelFormatError

# Zip framing and .npy header bytes allowed per array beside its data: a
# local header and a central-directory entry (each with the name and zip64
# extras) and the .npy header, which NumPy pads to a multiple of 64 bytes.
_BYTES_PER_MEMBER = 1024


@dataclasses.dataclass(frozen=True)
class LoadLimits:
    """The fixed limits of one load (the others follow from the file itself).

    Args:
        max_config_bytes: the largest ``config.json`` (or JSON text) accepted;
            64 MiB holds the config of about 120,000 Dense layers.
        max_metadata_bytes: the largest ``metadata.json`` accepted.
        max_compression_ratio: the largest ratio of uncompressed to compressed
            size of any zip member. nodeweave stores arrays uncompressed and a
            config deflates about 50 times; a deflate bomb inflates about 1,000.
        max_weight_bytes: the most bytes of weights a JSON config may create
            when it is rebuilt (model files use the size of their own weights).
        max_initializer_operations: the most arithmetic operations one
            initializer may spend drawing a weight of a JSON config; the
            default admits ``Orthogonal`` on a 2048 x 2048 kernel (an LSTM of
            1,024 units), about ten seconds of QR factorization.

    Example:
        >>> from engine import load_model
        >>> limits = LoadLimits(max_config_bytes=2**30)   # for a model of a million layers
    """

    max_config_bytes: int = 64 * 2**20
    max_metadata_bytes: int = 2**20
    max_compression_ratio: float = 200.0
    max_weight_bytes: int = 4 * 2**30
    max_initializer_operations: int = 2**35


class _Budget:
    __slots__ = ("advice", "filled_from_file", "limit", "max_operations", "reason", "remaining")

    def __init__(self, limit, reason, advice, filled_from_file, max_operations):
        self.remaining, self.limit, self.reason, self.advice = limit, limit, reason, advice
        self.filled_from_file, self.max_operations = filled_from_file, max_operations


_WEIGHT_BUDGET = contextvars.ContextVar("nodeweave_weight_budget", default=None)


@contextlib.contextmanager
def weight_budget(limit, reason, advice, filled_from_file=False,
                  max_operations=LoadLimits.max_initializer_operations):
    """Within it, weights created in this thread may total at most ``limit`` bytes;
    ``reason`` says where the limit comes from and ``advice`` what to do, for the
    error message. ``filled_from_file`` says that the load assigns every weight
    from its file (or fails), so no initial values need drawing; otherwise
    drawing one may take at most ``max_operations`` operations."""
    token = _WEIGHT_BUDGET.set(_Budget(int(limit), reason, advice, filled_from_file, max_operations))
    try:
        yield
    finally:
        _WEIGHT_BUDGET.reset(token)


def charge_weight(layer_name, weight_name, shape, dtype, initializer=None):
    """Called by ``Layer.add_weight`` before it allocates: raises ModelFormatError
    when a load in progress would create more weight bytes than its budget, or
    when drawing the weight with ``initializer`` would need more temporary bytes
    than the budget has left or more operations than it allows (an
    initializer's ``cost``; a plain function has none to charge).
    Returns whether the load will assign the weight from its file: the layer then
    allocates zeros instead of drawing initial values (VGG16's 138M)."""
    budget = _WEIGHT_BUDGET.get()
    if budget is None:
        return False
    budget.remaining -= math.prod(shape) * np.dtype(dtype).itemsize
    if budget.remaining < 0:
        raise ModelFormatError(
            f"Rebuilding the model would create weight {weight_name!r} of layer {layer_name!r} with shape "
            f"{tuple(shape)}, bringing its weights past {budget.limit:,} bytes, {budget.reason}. {budget.advice}"
        )
    if budget.filled_from_file or not hasattr(initializer, "cost"):
        return budget.filled_from_file
    temporary_bytes, operations = initializer.cost(shape, dtype)
    drawing = (f"Drawing weight {weight_name!r} of layer {layer_name!r} with shape {tuple(shape)} by "
               f"{type(initializer).__name__}")
    if temporary_bytes > budget.remaining:
        raise ModelFormatError(
            f"{drawing} needs {temporary_bytes:,} bytes of temporary arrays, more than the {budget.remaining:,} "
            f"left of {budget.limit:,} bytes, {budget.reason}. {budget.advice}"
        )
    if operations > budget.max_operations:
        raise ModelFormatError(
            f"{drawing} takes about {operations:,} operations, more than max_initializer_operations="
            f"{budget.max_operations:,}. If the model is genuine, pass "
            "limits=LoadLimits(max_initializer_operations=...), or give the layer a cheaper initializer."
        )
    return False


def charge_example(layer_name, class_name, size):
    """Called before a layer without ``compute_output_shape`` runs ``call`` on
    examples of ``size`` bytes to learn its output shape: raises ModelFormatError
    when a load in progress has less than that left of its budget."""
    budget = _WEIGHT_BUDGET.get()
    if budget is not None and size > budget.remaining:
        raise ModelFormatError(
            f"Layer {layer_name!r} ({class_name}) defines no compute_output_shape, so rebuilding the model would "
            f"run its call() on examples of its inputs' declared shapes: {size:,} bytes, more than the "
            f"{budget.remaining:,} left of {budget.limit:,} bytes, {budget.reason}. Define "
            f"compute_output_shape(self, input_shape) in {class_name} so that its shapes are computed without "
            "running it, or check the shapes the file declares."
        )


# ------------------------------------------------------------------ zip members
def check_members(archive, allowed, required, source, limits):
    """Checks that ``archive`` holds each of ``required``, nothing outside
    ``allowed``, no name twice, and nothing encrypted or compressed other than
    stored or deflated; and that each member's declared size can be true: its
    compressed bytes lie inside the archive, a stored member is as large as
    its bytes, a deflated one inflates at most ``max_compression_ratio`` times.
    A load sizes its weight budget by the declared size of the weights member,
    so that size must be checked before anything is built."""
    archive_size = _stream_size(archive.fp)
    seen = set()
    for info in archive.infolist():
        name = info.filename
        if name in seen:
            raise ModelFormatError(f"{source!r} holds the member {name!r} twice; a model file holds each once.")
        seen.add(name)
        if name not in allowed:
            raise ModelFormatError(
                f"{source!r} holds the unexpected member {name!r}; a nodeweave model file holds only "
                f"{sorted(allowed)}."
            )
        if info.flag_bits & 0x1:
            raise ModelFormatError(f"Member {name!r} of {source!r} is encrypted; model files are not.")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ModelFormatError(
                f"Member {name!r} of {source!r} uses zip compression method {info.compress_type}; "
                "model files are stored or deflated."
            )
        if info.header_offset + info.compress_size > archive_size or (
                info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size):
            raise ModelFormatError(
                f"Member {name!r} of {source!r} declares {info.file_size:,} bytes ({info.compress_size:,} "
                f"compressed) that the {archive_size:,}-byte archive cannot hold: the file is damaged or forged.")
        check_member_size(info, math.inf, limits, source, "")
    missing = [name for name in required if name not in seen]
    if missing:
        raise ModelFormatError(f"{source!r} is not a complete nodeweave model file: it has no {', '.join(missing)}.")


def _stream_size(stream):
    position = stream.tell()
    size = stream.seek(0, io.SEEK_END)
    stream.seek(position)
    return size


def read_member(archive, name, max_bytes, limits, source, limit_name):
    """The bytes of member ``name``, after checking its declared size against
    ``max_bytes`` and its compression ratio, before anything is inflated."""
    info = archive.getinfo(name)
    check_member_size(info, max_bytes, limits, source, limit_name)
    try:
        # read(size), not read(): zipfile inflates at most what it is asked for,
        # but read() asks for up to 2 GiB whatever the member declares.
        with archive.open(info) as stream:
            content = stream.read(info.file_size)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, zlib.error) as error:
        raise ModelFormatError(f"Member {name!r} of {source!r} cannot be read: {error}") from error
    if len(content) != info.file_size:
        raise ModelFormatError(
            f"Member {name!r} of {source!r} is truncated: it declares {info.file_size:,} bytes but holds {len(content):,}."
        )
    return content


def read_json_member(archive, name, path, max_bytes, limits, limit_name):
    """The JSON value of member ``name``, read within ``max_bytes`` (``read_member``)."""
    return parse_json(read_member(archive, name, max_bytes, limits, path, limit_name), f"{name} in {path!r}")


def parse_json(text, what):
    """``json.loads(text)``; malformed or too deeply nested text is a ModelFormatError naming ``what``."""
    try:
        return json.loads(text)
    except (TypeError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelFormatError(f"{what} is malformed (not valid JSON): {error}") from error
    except RecursionError as error:
        raise ModelFormatError(f"{what} is nested too deeply to be a model config.") from error


def check_member_size(info, max_bytes, limits, source, limit_name):
    """Checks the declared size of zip member ``info`` against ``max_bytes`` (what
    it may hold, which ``limit_name`` names) and its compression ratio against
    ``limits``, before a byte of it is read."""
    if info.file_size > max_bytes:
        raise ModelFormatError(
            f"Member {info.filename!r} of {source!r} declares {info.file_size:,} bytes, more than the "
            f"{max_bytes:,} it may hold ({limit_name}). If the file is genuine, pass a larger limit: "
            "limits=LoadLimits(...)."
        )
    if info.file_size > limits.max_compression_ratio * max(info.compress_size, 1):
        raise ModelFormatError(
            f"Member {info.filename!r} of {source!r} inflates {info.file_size / max(info.compress_size, 1):,.0f} "
            f"times (from {info.compress_size:,} to {info.file_size:,} bytes), more than max_compression_ratio="
            f"{limits.max_compression_ratio:g}: a compression bomb, or pass limits=LoadLimits(max_compression_ratio=...)."
        )


# ----------------------------------------------------------------------- arrays
def npz_size_bound(expected):
    """The most bytes an ``.npz`` holding the arrays ``{name: (shape, dtype)}`` can take."""
    return sum(array_size_bound(name, shape, dtype) for name, (shape, dtype) in expected.items()) + _BYTES_PER_MEMBER


def array_size_bound(name, shape, dtype):
    """The most bytes array ``name`` of ``shape`` and ``dtype`` can take in an ``.npz``, with its headers."""
    return math.prod(shape) * np.dtype(dtype).itemsize + _BYTES_PER_MEMBER + 2 * len(name)
