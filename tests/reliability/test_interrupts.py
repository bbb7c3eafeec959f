"""Ctrl-C during fit on a source that blocks: fit raises KeyboardInterrupt at
once and leaves no process running, and no thread but daemon threads inside
the source's code (which Python cannot stop: they end when that call returns).

Each case runs ``interrupted_fit.py`` in a child process: the test sends SIGINT
once the child has trained on its first batch and every reader is blocked in
the source (the child prints both), and when fit stops early, once fit waits for
the readers; then it waits for the child to end.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interrupted_fit.py")
# Readers blocked in the source before the SIGINT: the generator's or PyDataset's thread, 3 threads (the first
# on its second batch), 2 processes.
READERS = {"generator": 1, "pydataset": 1, "pydataset-threads": 3, "pydataset-processes": 2}
# Generous: the point is "not the 30 s the source blocks for" (it blocks forever here).
RETURN_WITHIN = 10


def _interrupt(kind, where, whole_group=False):
    """Runs the child until its readers block, sends SIGINT (to its process group
    with ``whole_group``, as a terminal's Ctrl-C does), and returns (seconds
    until it ended, its output lines, the pids of its readers still running)."""
    child = subprocess.Popen([sys.executable, CHILD, kind, where], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True,
                             env={**os.environ, "PYTHONPATH": ROOT})
    lines, readers = [], []
    marks = {"batch 0", "epoch end"} if where == "stopping" else {"batch 0"}
    try:
        while not marks <= set(lines) or len(readers) < READERS[kind]:
            line = child.stdout.readline().strip()
            assert line, f"the child ended before its readers blocked: {lines} {child.stderr.read()}"
            lines.append(line)
            if line.startswith("reading "):
                readers.append(int(line.split()[1]))
        while where == "stopping" and not _sleeping(child.pid):  # fit waits for the readers
            time.sleep(0.01)
        sent = time.monotonic()
        if whole_group:
            os.killpg(child.pid, signal.SIGINT)
        else:
            os.kill(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=RETURN_WITHIN)
        took = time.monotonic() - sent
        left = [pid for pid in readers if _alive(pid)]
    finally:
        with contextlib.suppress(ProcessLookupError):  # the child, or what it left running in its group
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == 0, err
    return took, lines + out.splitlines(), left


def _sleeping(pid):
    """Whether the main thread of process ``pid`` is blocked (nothing else in the
    child holds the GIL then: its other threads are blocked in the source)."""
    with open(f"/proc/{pid}/task/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "S"


def _alive(pid):
    """Whether process ``pid`` still runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="reads processes from /proc")
@pytest.mark.parametrize("where", ["waiting", "callback", "stopping"])
@pytest.mark.parametrize("kind", list(READERS))
def test_ctrl_c_during_fit_returns_at_once_and_leaves_no_reader_running(kind, where):
    took, lines, left = _interrupt(kind, where)
    outcome, seconds = lines[-2].split()
    running = json.loads(lines[-1])
    assert outcome == "KeyboardInterrupt" and took < RETURN_WITHIN and float(seconds) < RETURN_WITHIN
    assert running["children"] == [] and left == []
    if kind == "pydataset-processes":  # its manager and feeder threads ended too
        assert running["threads"] == []
    else:  # the readers blocked in the source, daemon threads the interpreter's exit did not wait for
        assert running["threads"] == [["nodeweave-prefetch", True]] * READERS[kind]


@pytest.mark.skipif(sys.platform != "linux", reason="reads processes from /proc")
def test_a_terminal_ctrl_c_reaching_the_pool_processes_too_leaves_none_running():
    took, lines, left = _interrupt("pydataset-processes", "waiting", whole_group=True)
    assert lines[-2].split()[0] == "KeyboardInterrupt" and took < RETURN_WITHIN
    assert json.loads(lines[-1]) == {"threads": [], "children": []} and left == []
