"""What every test shares: fresh names and seeds, Keras' backend, how ``make test`` shares the
tests out between its two pytest-xdist workers, and a worker that gives memory back between tests
and keeps its imported libraries out of the garbage collector's walks.

Keras' backend (Keras is the oracle): the first worker (``gw0``), and a run without workers,
use JAX; the other workers use Keras' NumPy backend, which builds a model without compiling
anything (ResNet50 in 0.7 s against 9.5 s on JAX, NASNetMobile 0.9 s against 24 s) but cannot
train, trace or differentiate a Keras model. The files of ``KERAS_JAX_FILES`` need that, so
they run on the JAX worker only; those of ``KERAS_NUMPY_FILES`` build Keras' applications and
run on the other workers only. A ``KERAS_BACKEND`` set by hand is kept.

Work units (``make test`` runs ``--dist loadfile``): a file's tests go to one worker
together, as pytest-xdist does, except in the files of ``SPLIT_FILES``, whose tests share
nothing costly and are units of their own (each builds and runs Keras' applications).
Units holding a slow test go out first, then the larger before the smaller, so the workers
end together instead of one waiting on the last long file; each worker takes the units kept
for its backend before the others.
"""

import ctypes
import gc
import os
import sys

JAX_WORKER = "gw0"
# Set beside KERAS_BACKEND when this file chose it: the workers inherit the controller's environment,
# and each chooses its own again; a KERAS_BACKEND set by hand comes without it and is kept.
BACKEND_CHOSEN_HERE = "NODEWEAVE_TESTS_CHOSE_KERAS_BACKEND"
if "KERAS_BACKEND" not in os.environ or os.environ.get(BACKEND_CHOSEN_HERE):
    os.environ["KERAS_BACKEND"] = "jax" if os.environ.get("PYTEST_XDIST_WORKER", JAX_WORKER) == JAX_WORKER else "numpy"
    os.environ[BACKEND_CHOSEN_HERE] = "1"

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
# Files that train, trace or differentiate through Keras (``fit``, ``train_on_batch``, ``jax.grad``
# of a Keras loss, optimizer state written by Keras), or compare with numbers only Keras' JAX
# backend gives (its pooling ties, softmax over an axis, float32 where the NumPy backend gives float64).
KERAS_JAX_FILES = {
    "tests/engine/losses/test_functions_compiled.py",
    "tests/engine/losses/test_probabilistic.py",
    "tests/engine/losses/test_regression.py",
    "tests/engine/optimizers/test_base.py",
    "tests/engine/optimizers/test_schedules.py",
    "tests/engine/test_data_sources.py",
    "tests/engine/test_keras_ops.py",
    "tests/engine/test_trainer.py",
    "tests/keras_format/test_compiled_optimizers.py",
    "tests/keras_format/test_keras_optimizer_state.py",
    "tests/keras_format/test_read_hostile.py",
    "tests/keras_format/test_read_in_place.py",
    "tests/keras_format/test_read_models.py",
    "tests/keras_format/test_weights_file.py",
    "tests/keras_format/test_write_models.py",
    "tests/layers/activation/test_leaky_relu.py",
    "tests/layers/activation/test_softmax.py",
    "tests/layers/normalization/test_batch_normalization.py",
    "tests/layers/pooling/test_max_pooling.py",
    "tests/layers/test_hard_activations.py",
    "tests/layers/test_preprocessing_rescaling.py",
    "tests/parity/test_compile_parity.py",
    "tests/parity/test_functional_inputs.py",
    "tests/parity/test_masking.py",
    "tests/parity/test_sequential_parity.py",
    "tests/parity/test_utils_parity.py",
    "tests/reliability/test_batch_zero_and_dtypes.py",
    "tests/reliability/test_hostile_h5.py",
}
# Files that build Keras' applications (10-25 times faster on the NumPy backend) and need nothing more.
KERAS_NUMPY_FILES = {
    "tests/guides/test_transfer_learning.py",
    "tests/keras_format/test_read_applications.py",
    "tests/layers/test_application_builders.py",
    "tests/layers/test_application_builders_efficient.py",
    "tests/layers/test_application_builders_inception.py",
    "tests/layers/test_applications.py",
    "tests/parity/test_applications_modules.py",
}
# A worker whose resident memory passes the line gives back what the test left (garbage
# cycles, the C heap's free pages); the line then stands a margin above what stays. At the
# end of a file, above the second line, it also drops XLA's compiled programs (Keras' oracles
# on JAX), which grow the JAX worker by up to 300 MB a file. Their recompiling costs time: the
# parity and .keras files in one process took 220 s of CPU keeping them (2.4 GB at most), 294 s
# dropping them after every file (1.0 GB) and 252 s past this line (1.8 GB); dropped after every
# test, they cost the suite 4.5 more minutes.
MEMORY_LINE_BYTES = 1_000_000_000
MEMORY_MARGIN_BYTES = 300_000_000
COMPILED_PROGRAMS_LINE_BYTES = 1_500_000_000
# A slow test (the applications' round trips, the benchmarks' smoke runs) can grow a worker by a
# gigabyte: it starts from what a collection leaves whenever the worker holds more than this, and
# more than the margin above what the last collection left, without XLA's programs (Keras' NumPy
# backend too runs its convolutions through JAX: the applications' round trips left 40-100 MB of
# them each, 455 MB against 809 after eight). Without the margin, the NumPy worker, which keeps
# 760-850 MB after a collection, collected before each of its 136 slow tests: 70 s for 40-250 MB each.
SLOW_TEST_LINE_BYTES = 700_000_000
SLOW_TEST_MARGIN_BYTES = 150_000_000


def pytest_runtest_setup(item):
    """A test of ``KERAS_JAX_FILES`` in a process where Keras runs on another backend fails at once, saying why."""
    if item.nodeid.split("::")[0] in KERAS_JAX_FILES and os.environ["KERAS_BACKEND"] != "jax":
        pytest.fail(f"{item.nodeid} compares with Keras on JAX, but this process has KERAS_BACKEND="
                    f"{os.environ['KERAS_BACKEND']!r}: run it with KERAS_BACKEND=jax (or unset).", pytrace=False)


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


def _backend_for(unit: str):
    """The Keras backend the work unit ``unit`` is kept for ("jax", "numpy"), or None for any."""
    path = unit.split("::")[0]
    return "jax" if path in KERAS_JAX_FILES else "numpy" if path in KERAS_NUMPY_FILES else None


def _backend_of(node) -> str:
    """The Keras backend of the pytest-xdist worker ``node``."""
    return "jax" if node.workerinput["workerid"] == JAX_WORKER else "numpy"


class WorkUnitScheduling(LoadScopeScheduling):
    """pytest-xdist's ``loadfile`` with the units of ``_work_unit``, handed out in the order the
    workers collected them (see ``pytest_collection_modifyitems``); a unit kept for a backend
    goes only to a worker on it, and before the units any worker may take."""

    def _split_scope(self, nodeid: str) -> str:
        return _work_unit(nodeid)

    def _assign_work_unit(self, node) -> None:
        backend = _backend_of(node)
        present = {_backend_of(other) for other in self.nodes}  # with one worker, it takes everything
        runnable = [unit for unit in self.workqueue if _backend_for(unit) in (None, backend)
                    or _backend_for(unit) not in present]
        if not runnable:  # what is left is kept for the other backend: this worker is done
            node.shutdown()
            return
        unit = next((unit for unit in runnable if _backend_for(unit) == backend), runnable[0])
        work_unit = self.workqueue.pop(unit)
        self.assigned_work.setdefault(node, {})[unit] = work_unit
        collection = self.registered_collections[node]
        node.send_runtest_some([collection.index(nodeid) for nodeid, done in work_unit.items() if not done])


@pytest.hookimpl(optionalhook=True)  # pytest without pytest-xdist (-p no:xdist) does not know the hook
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") == "loadfile":
        config.option.loadscopereorder = False  # the workers order the units
        return WorkUnitScheduling(config, log)
    return None


def pytest_collection_finish(session):
    """Sets what collecting imported (the test modules, Keras, JAX, PyTorch: 630,000 objects) aside
    from the cyclic garbage collector, which would otherwise walk it in every full collection
    (0.34 s each); it stays for the whole run."""
    gc.collect()
    gc.freeze()


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
    above what a collection leaves and falls with the worker's memory; before a slow test it
    is ``SLOW_TEST_LINE_BYTES``, and XLA's compiled programs go too, as at the end of a file past
    ``COMPILED_PROGRAMS_LINE_BYTES``."""

    def __init__(self):
        self.line = MEMORY_LINE_BYTES
        self.collected_to = 0  # the resident size the last collection left

    def give_back(self, file_ended, slow_next):
        resident = _resident_bytes()
        slow = slow_next and resident > max(SLOW_TEST_LINE_BYTES, self.collected_to + SLOW_TEST_MARGIN_BYTES)
        compiled = "jax" in sys.modules and (slow or file_ended and resident > COMPILED_PROGRAMS_LINE_BYTES)
        if resident > self.line or compiled or slow:
            gc.collect()
            if compiled:
                sys.modules["jax"].clear_caches()
            _trim_heap()
            self.collected_to = _resident_bytes()
            self.line = max(MEMORY_LINE_BYTES, self.collected_to + MEMORY_MARGIN_BYTES)
        else:
            self.line = max(MEMORY_LINE_BYTES, min(self.line, resident + MEMORY_MARGIN_BYTES))


_memory_line = _MemoryLine()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Gives memory back once the test and its fixtures have let go of their objects."""
    result = yield
    _memory_line.give_back(file_ended=nextitem is None or nextitem.path != item.path,
                           slow_next=nextitem is not None and nextitem.get_closest_marker("slow") is not None)
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
