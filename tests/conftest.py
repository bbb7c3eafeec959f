"""What every test shares: fresh names and seeds, how the tests are shared out between
pytest-xdist's workers, and a worker that gives memory back between tests.

Work units (``make test`` runs ``--dist loadgroup --no-loadscope-reorder``): a test marked
``slow`` that needs no fixture wider than itself is a unit of its own; every other test
goes with the rest of its file, as ``--dist loadfile`` would. Units that hold a slow test
are handed out first and the rest by size, so two workers end together instead of one
waiting on the last long file.
"""

import ctypes
import gc
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from engine.utils import clear_session, set_random_seed  # noqa: E402

# Fixtures of a wider scope that still build nothing another test would reuse.
PER_TEST_FIXTURES = {"keras_model"}
# A worker whose resident memory passes this gives back what the test left (garbage cycles,
# XLA's compiled programs) before the next test; the line then moves above what stays.
MEMORY_LINE_BYTES = 1_000_000_000
MEMORY_MARGIN_BYTES = 300_000_000


@pytest.fixture(autouse=True)
def fresh_names_and_seed():
    """Every test starts with automatic names at `dense` and fixed seeds (ours and NumPy's)."""
    clear_session()
    set_random_seed(1234)
    np.random.seed(1234)
    yield


def _runs_alone(item) -> bool:
    """Whether ``item`` is slow and shares no fixture with the other tests of its file."""
    if item.get_closest_marker("slow") is None:
        return False
    definitions = getattr(item, "_fixtureinfo", None)
    definitions = definitions.name2fixturedefs if definitions else {}
    return all(definition.scope == "function" or name in PER_TEST_FIXTURES
               for name, chain in definitions.items() for definition in chain)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    if not getattr(config.option, "loadgroup", False):  # set on pytest-xdist's workers by --dist loadgroup
        return
    units = {}
    for item in items:
        unit = item.nodeid if _runs_alone(item) else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(unit))
        units.setdefault(unit, []).append(item)
    slow_first = sorted(units.values(), key=lambda unit: (
        not any(item.get_closest_marker("slow") for item in unit), -len(unit)))
    items[:] = [item for unit in slow_first for item in unit]


class _MemoryLine:
    """The resident size above which a worker collects its garbage between tests."""

    def __init__(self):
        self.line = MEMORY_LINE_BYTES

    def give_back(self):
        if resident_bytes() <= self.line:
            return
        gc.collect()
        if "jax" in sys.modules:
            sys.modules["jax"].clear_caches()
        _trim_heap()
        self.line = max(MEMORY_LINE_BYTES, resident_bytes() + MEMORY_MARGIN_BYTES)


_memory_line = _MemoryLine()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    _memory_line.give_back()


def resident_bytes() -> int:
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
