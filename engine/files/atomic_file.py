"""Atomic file writes: a saved file is the old one or the new one, never a mix.

``atomic_write(path, write)`` runs ``write(handle)`` into a temporary file in
the target's folder (a rename is atomic only within one file system), flushes it
to disk and renames it over the target with ``os.replace``. A reader, or a
process killed at any instant, sees the old file or the new one.

Temporaries are named ``.{target name}.nodeweave-{host}-{pid}-{token}.tmp``:
hidden, naming the target (a hash of it when the name is too long for the
file system), the writer's host (a hash of its name), the writer's process id
and 64 random bits, so no two saves ever pick the same name. A save that fails
removes its temporary, but a killed one (SIGKILL, a power cut) cannot; the next
save of the same target removes that target's temporaries whose writer was a
process of this host that no longer exists. A writer that is still running is
never touched: threads of one process share its live pid, and a reused pid only
delays the removal until that process ends. Temporaries written from other
hosts (a shared network folder) are left alone, as their pids mean nothing here.

The temporary is created with mode 0o666, so the kernel applies the umask
exactly as ``open(path, "w")`` does. Reading the umask is avoided on purpose:
``os.umask`` reads it only by setting it, process-wide, and a file another
thread creates in between would get the wrong mode. Replacing an existing file
keeps its permission bits, as writing into it with ``open(path, "w")`` would.
"""

import contextlib
import errno
import hashlib
import os
import platform
import re
import secrets
import stat
from collections.abc import Callable
from typing import BinaryIO

_HOST = hashlib.blake2b(platform.node().encode(), digest_size=4).hexdigest()
_WRITER = re.compile(r"(?P<host>[0-9a-f]{8})-(?P<pid>[1-9][0-9]{0,8})-[0-9a-f]{16}\.tmp")
# NAME_MAX is 255 bytes on common file systems; the rest of a temporary's name takes 51.
_LONGEST_KEPT_NAME = 200


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> None:
    """Writes a file through ``write(handle)`` (a binary handle), atomically.

    On any exception, KeyboardInterrupt included, the previous file is left as it
    was and the temporary is removed. A missing or read-only folder raises
    ``FileNotFoundError`` or ``PermissionError`` naming ``path``.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "greeting.txt")
        >>> atomic_write(path, lambda handle: handle.write(b"hello"))
        >>> open(path, "rb").read()
        b'hello'
    """
    target = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(target)
    prefix = _temporary_prefix(name)
    _remove_dead_writers_temporaries(folder, prefix)
    temporary = os.path.join(folder, f"{prefix}{_HOST}-{os.getpid()}-{secrets.token_hex(8)}.tmp")
    try:
        with open(temporary, "xb") as handle:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(handle.fileno(), stat.S_IMODE(os.stat(target).st_mode) & 0o777)
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except OSError as error:
        _remove(temporary)
        if temporary in (error.filename, error.filename2):
            raise _naming_the_target(error, target, folder) from error
        raise
    except BaseException:
        _remove(temporary)
        raise


def _temporary_prefix(name):
    if len(os.fsencode(name)) > _LONGEST_KEPT_NAME:
        name = hashlib.blake2b(os.fsencode(name), digest_size=16).hexdigest()
    return f".{name}.nodeweave-"


def _remove_dead_writers_temporaries(folder, prefix):
    try:
        names = os.listdir(folder)
    except OSError:
        return  # the save itself then reports the folder's problem, naming the target
    for name in names:
        writer = _WRITER.fullmatch(name[len(prefix):]) if name.startswith(prefix) else None
        if writer and writer["host"] == _HOST and not _process_exists(int(writer["pid"])):
            _remove(os.path.join(folder, name))


def _process_exists(pid):
    if pid == os.getpid() or os.name == "nt":  # on Windows os.kill would terminate the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by another user
        pass
    return True


def _remove(path):
    # Removal is best effort: another save may have removed a stale file first,
    # and a file we may not delete must not fail this save.
    with contextlib.suppress(OSError):
        os.unlink(path)


def _naming_the_target(error, target, folder):
    """The same error type, about ``target`` rather than our temporary."""
    if error.errno == errno.ENOENT:
        reason = f"the folder {folder!r} does not exist (create it first, or choose another path)"
    elif error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        reason = f"the folder {folder!r} is not writable (save elsewhere, or make it writable)"
    else:
        reason = error.strerror
    return OSError(error.errno, f"Cannot save the file: {reason}", target)
