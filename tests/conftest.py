"""What every test shares: fresh names and seeds, how ``make test`` shares the tests out
between its two pytest-xdist workers, and a worker that gives memory back between tests.

Work units (``make test`` runs ``--dist loadfile``): a file's tests go to one worker
together, as pytest-xdist does, except in the files of ``SPLIT_FILES``, whose tests share
nothing costly and are units of their own (each builds and runs Keras' applications for
10-45 s). Units holding a slow test go out first, then the larger before the smaller, so
the two workers end together instead of one waiting on the last long file.
"""

import ctypes
import gc
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from xdist.scheduler import LoadScopeScheduling  # noqa: E402

from engine.utils import clear_session, set_random_seed  # noqa: E402

SPLIT_FILES = {
    "tests/benchmarks/test_harness.py",
    "tests/keras_format/test_read_applications.py",
    "tests/layers/test_application_builders.py",
    "tests/layers/test_application_builders_efficient.py",
    "tests/layers/test_application_builders_inception.py",
}
# A worker whose resident memory passes the line gives back what the test left (garbage
# cycles, the C heap's free pages); the line then stands a margin above what stays. Above
# the second line it also drops XLA's compiled programs (Keras' oracles): dropped at every
# collection they cost the suite 4.5 minutes of recompiling (20:45 against 16:18) and saved
# 2.5 GB at the largest worker (2.5 GB against 5.0).
MEMORY_LINE_BYTES = 1_000_000_000
MEMORY_MARGIN_BYTES = 300_000_000
COMPILED_PROGRAMS_LINE_BYTES = 2_000_000_000


@pytest.fixture(autouse=True)
def fresh_names_and_seed():
    """Every test starts with automatic names at `dense` and fixed seeds (ours and NumPy's)."""
    clear_session()
    set_random_seed(1234)
    np.random.seed(1234)
    yield


def _work_unit(nodeid: str) -> str:
    """The work unit of the test ``nodeid``: its file, or itself in a file of ``SPLIT_FILES``."""
    path = nodeid.split("::")[0]
    return nodeid if path in SPLIT_FILES else path


class WorkUnitScheduling(LoadScopeScheduling):
    """pytest-xdist's ``loadfile`` with the units of ``_work_unit``, handed out in the order the
    workers collected them (see ``pytest_collection_modifyitems``)."""

    def _split_scope(self, nodeid: str) -> str:
        return _work_unit(nodeid)


def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") == "loadfile":
        config.option.loadscopereorder = False  # the workers order the units
        return WorkUnitScheduling(config, log)
    return None


def pytest_collection_modifyitems(items):
    """On a pytest-xdist worker, orders the work units: those holding a slow test first, then
    the larger before the smaller."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return
    units = {}
    for item in items:
        units.setdefault(_work_unit(item.nodeid), []).append(item)
    order = sorted(units.values(), key=lambda unit: (
        not any(item.get_closest_marker("slow") for item in unit), -len(unit)))
    items[:] = [item for unit in order for item in unit]


class _MemoryLine:
    """The resident size above which a worker collects its garbage after a test: it rises
    above what a collection leaves and falls with the worker's memory."""

    def __init__(self):
        self.line = MEMORY_LINE_BYTES

    def give_back(self):
        resident = _resident_bytes()
        if resident > self.line:
            gc.collect()
            if _resident_bytes() > COMPILED_PROGRAMS_LINE_BYTES and "jax" in sys.modules:
                sys.modules["jax"].clear_caches()
            _trim_heap()
            self.line = max(MEMORY_LINE_BYTES, _resident_bytes() + MEMORY_MARGIN_BYTES)
        else:
            self.line = max(MEMORY_LINE_BYTES, min(self.line, resident + MEMORY_MARGIN_BYTES))


_memory_line = _MemoryLine()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Gives memory back once the test and its fixtures have let go of their objects."""
    result = yield
    _memory_line.give_back()
    return result


def _resident_bytes() -> int:
    """This process' resident memory in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _trim_heap():
    """Returns the C heap's free pages to the system (glibc only)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
