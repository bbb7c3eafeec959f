"""Atomic writes: old or new file, the mode open() would give, nothing left behind."""

import os
import pathlib
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading

import pytest

from engine.files import atomic_file
from engine.files.atomic_file import atomic_write

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run(code, *args):
    """Runs ``code`` in a fresh interpreter (umask and uid stay out of this process)."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _die_while_writing(path):
    """A writer process SIGKILLed halfway through its write: its temporary stays behind."""
    code = """
        import os, signal, sys
        from engine.files.atomic_file import atomic_write
        def write(handle):
            handle.write(b"half")
            handle.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        atomic_write(sys.argv[1], write)
    """
    process = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(path)], cwd=ROOT, timeout=60, check=False)
    assert process.returncode == -signal.SIGKILL


def _temporaries(folder):
    return sorted(name for name in os.listdir(folder) if ".nodeweave-" in name)


def test_writes_and_replaces(tmp_path):
    path = tmp_path / "out.bin"
    atomic_write(path, lambda handle: handle.write(b"first"))
    atomic_write(str(path), lambda handle: handle.write(b"second"))
    assert path.read_bytes() == b"second"
    assert os.listdir(tmp_path) == ["out.bin"]


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_new_file_gets_the_mode_open_would_give(tmp_path, umask):
    modes = _run("""
        import os, sys
        from engine.files.atomic_file import atomic_write
        os.umask(int(sys.argv[1]))
        folder = sys.argv[2]
        with open(os.path.join(folder, "plain"), "w"):
            pass
        atomic_write(os.path.join(folder, "atomic"), lambda handle: handle.write(b"x"))
        print(oct(os.stat(os.path.join(folder, "plain")).st_mode), oct(os.stat(os.path.join(folder, "atomic")).st_mode))
    """, umask, tmp_path).split()
    assert modes[0] == modes[1] == oct(stat.S_IFREG | (0o666 & ~umask))


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o664])
def test_replacing_a_file_keeps_its_mode_as_open_would(tmp_path, mode):
    modes = _run("""
        import os, sys
        from engine.files.atomic_file import atomic_write
        os.umask(0o022)
        mode = int(sys.argv[1])
        plain, atomic = (os.path.join(sys.argv[2], name) for name in ("plain", "atomic"))
        for path in (plain, atomic):
            with open(path, "w"):
                pass
            os.chmod(path, mode)
        with open(plain, "w") as handle:
            handle.write("x")
        atomic_write(atomic, lambda handle: handle.write(b"x"))
        print(oct(os.stat(plain).st_mode & 0o777), oct(os.stat(atomic).st_mode & 0o777))
    """, mode, tmp_path).split()
    assert modes[0] == modes[1] == oct(mode)


@pytest.mark.parametrize("error", [ValueError("bad array"), KeyboardInterrupt()])
def test_an_exception_inside_the_write_keeps_the_old_file_and_no_temporary(tmp_path, error):
    path = tmp_path / "m.nw"
    path.write_bytes(b"old")

    def write(handle):
        handle.write(b"partial new content")
        raise error

    with pytest.raises(type(error)):
        atomic_write(path, write)
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["m.nw"]


def test_a_dead_writers_temporary_is_removed_by_the_next_save_and_nothing_else(tmp_path, monkeypatch):
    target, other = tmp_path / "m.nw", tmp_path / "other.nw"
    target.write_bytes(b"old")
    _die_while_writing(target)
    _die_while_writing(other)
    stale = [name for name in _temporaries(tmp_path) if name.startswith(".m.nw.")]
    assert len(stale) == 1 and len(_temporaries(tmp_path)) == 2
    for name in ["m.nw.tmp", ".m.nw.tmp", "notes.nodeweave-1.tmp", ".m.nw.nodeweave-backup"]:
        (tmp_path / name).write_bytes(b"not ours")
    before = sorted(os.listdir(tmp_path))
    # A temporary written from another host is left alone: its pid means nothing here.
    monkeypatch.setattr(atomic_file, "_HOST", "00000000" if atomic_file._HOST != "00000000" else "11111111")
    atomic_write(target, lambda handle: handle.write(b"new"))
    assert sorted(os.listdir(tmp_path)) == before
    monkeypatch.undo()
    atomic_write(target, lambda handle: handle.write(b"newer"))
    assert target.read_bytes() == b"newer"
    assert sorted(os.listdir(tmp_path)) == [name for name in before if name not in stale]

def test_a_save_in_progress_in_another_thread_or_process_is_not_touched(tmp_path):
    target = tmp_path / "m.nw"
    started, release, errors = threading.Event(), threading.Event(), []

    def slow_save():
        def write(handle):
            handle.write(b"from the thread")
            started.set()
            release.wait(30)

        try:
            atomic_write(target, write)
        except Exception as error:  # noqa: BLE001 (reported by the main thread)
            errors.append(error)

    thread = threading.Thread(target=slow_save)
    thread.start()
    process = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys
        from engine.files.atomic_file import atomic_write
        def write(handle):
            handle.write(b"from the process")
            print("writing", flush=True)
            sys.stdin.readline()
        atomic_write(sys.argv[1], write)
    """), str(target)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert started.wait(30)
        assert process.stdout.readline() == "writing\n"
        in_progress = _temporaries(tmp_path)
        assert len(in_progress) == 2
        atomic_write(target, lambda handle: handle.write(b"from the test"))
        assert _temporaries(tmp_path) == in_progress
    finally:
        release.set()
        thread.join(30)
        process.communicate("\n", timeout=30)
    assert process.returncode == 0 and not errors
    assert target.read_bytes() in (b"from the thread", b"from the process")
    assert os.listdir(tmp_path) == ["m.nw"]


def test_a_missing_folder_is_named_not_the_temporary(tmp_path):
    target = tmp_path / "missing" / "m.nw"
    with pytest.raises(FileNotFoundError) as error:
        atomic_write(target, lambda handle: handle.write(b"x"))
    assert error.value.filename == str(target)
    assert f"the folder {str(tmp_path / 'missing')!r} does not exist (create it first" in str(error.value)
    assert "nodeweave-" not in str(error.value)


def test_a_read_only_folder_is_named_not_the_temporary():
    # Root writes anywhere, so the writer drops to "nobody" once its modules are imported.
    with tempfile.TemporaryDirectory() as parent:
        os.chmod(parent, 0o755)
        folder = os.path.join(parent, "read_only")
        os.mkdir(folder, 0o555)
        os.chmod(folder, 0o555)
        message = _run("""
            import os, sys
            from engine.files.atomic_file import atomic_write
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            target = os.path.join(sys.argv[1], "m.nw")
            try:
                atomic_write(target, lambda handle: handle.write(b"x"))
            except PermissionError as error:
                assert error.filename == target, error.filename
                print(error)
        """, folder)
        assert message == (f"[Errno 13] Cannot save the file: the folder {folder!r} is not writable (save elsewhere, "
                           f"or make it writable): {os.path.join(folder, 'm.nw')!r}\n")
        assert os.listdir(folder) == []


def test_a_name_too_long_to_keep_in_the_temporary_still_saves_and_cleans_up(tmp_path):
    target = tmp_path / ("x" * 240 + ".nw")
    _die_while_writing(target)
    assert len(_temporaries(tmp_path)) == 1
    atomic_write(target, lambda handle: handle.write(b"new"))
    assert os.listdir(tmp_path) == [target.name]
