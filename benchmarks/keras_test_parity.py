"""Keras 3's own tests of the graph engine, pointed at nodeweave through renames only (issue 26).

At run time this reads ten test files from the installed ``keras`` package (the
functional API, Sequential, Model, cloning, Node, KerasTensor, Layer, InputLayer,
Dense, merging layers), rewrites their imports through one table (``RENAMES``),
writes them to a temporary directory (never into the repository: we do not copy
Keras' tests), runs pytest on them with ``KERAS_BACKEND=jax`` and prints per file:
tests collected, not applicable (with the reason, from one table, ``NOT_APPLICABLE``,
plus the tests Keras itself skips on the jax backend), passed, failed, and the pass
rate of the applicable ones; then the failures grouped by their first error line.

Keras' testing harness (``keras.src.testing``), its backend (backend tensors, masks,
the backend's name), its ``tree`` utilities and the features nodeweave does not
have (dtype policies, quantization, export, rematerialization) stay Keras'. Besides
the renames, one bridge (``CONFTEST``): Keras' registry is told nodeweave's layer and
model classes, so that the harness's serialization round trip can find them; Keras'
custom object scopes and session clearing reach nodeweave's too.

Run: ``python -m benchmarks keras_test_parity`` (``--verbose`` lists every failure;
``--smoke`` runs only Keras' Node tests, to check the machinery).
"""

from benchmarks.harness import pin_threads

pin_threads()

import importlib.util  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

from benchmarks.harness import save  # noqa: E402

GOAL = 0.95
FILES = [
    "models/functional_test.py", "models/sequential_test.py", "models/model_test.py", "models/cloning_test.py",
    "ops/node_test.py", "backend/common/keras_tensor_test.py", "layers/layer_test.py",
    "layers/core/input_layer_test.py", "layers/core/dense_test.py", "layers/merging/merging_test.py",
]
SMOKE_FILES = ["ops/node_test.py"]

# Keras' import line -> ours. A line not listed stays Keras' (the harness, backend, tree, and
# the features nodeweave does not have, whose tests NOT_APPLICABLE lists).
RENAMES = {
    "from keras.src import Input": "from nodeweave import Input",
    "from keras.src import Layer": "from nodeweave import Layer",
    "from keras.src import applications": "from nodeweave import applications",
    "from keras.src import constraints": "from nodeweave import constraints",
    "from keras.src import layers": "from nodeweave import layers",
    "from keras.src import losses": "from nodeweave import losses",
    "from keras.src import metrics": "from nodeweave import metrics",
    "from keras.src import models": "from nodeweave import models",
    "from keras.src import ops": "from nodeweave import ops",
    "from keras.src import optimizers": "from nodeweave import optimizers",
    "from keras.src import random": "from nodeweave import random",
    "from keras.src import saving": "from nodeweave import saving",
    "from keras.src.backend import KerasTensor": "from nodeweave import KerasTensor",
    "from keras.src.backend.common import keras_tensor": "import engine.network.keras_tensor as keras_tensor",
    "from keras.src.backend.common.keras_tensor import KerasTensor": "from nodeweave import KerasTensor",
    "from keras.src.layers import InputLayer": "from nodeweave.layers import InputLayer",
    "from keras.src.layers.core.input_layer import Input": "from nodeweave import Input",
    "from keras.src.layers.input_spec import InputSpec": "from nodeweave import InputSpec",
    "from keras.src.models import Functional": "from engine import Functional",
    "from keras.src.models import Model": "from nodeweave import Model",
    "from keras.src.models import Sequential": "from nodeweave import Sequential",
    "from keras.src.models.cloning import clone_model": "from nodeweave.models import clone_model",
    "from keras.src.models.functional import Functional": "from engine import Functional",
    "from keras.src.models.model import Model": "from nodeweave import Model",
    "from keras.src.models.model import model_from_json": "from nodeweave.models import model_from_json",
    "from keras.src.models.sequential import Sequential": "from nodeweave import Sequential",
    "from keras.src.ops.node import Node": "from engine import Node",
    # TensorFlow is not installed; the tests that use it are TF-only (NOT_APPLICABLE).
    "import tensorflow as tf": "tf = None",
}
# Names Keras' tests reach through Keras' backend module that are ours: the symbolic tensor and the variable.
NAME_RENAMES = {r"\bbackend\.KerasTensor\b": "nodeweave.KerasTensor", r"\bbackend\.Variable\b": "nodeweave.Variable"}

# The bridge besides the renames, in the run's conftest: Keras' harness round-trips objects through its
# own registry (``serialize_keras_object``/``deserialize_keras_object``), so that registry is told
# nodeweave's layer and model classes under their names, as ``custom_objects`` would; the objects a test
# puts in Keras' ``custom_object_scope`` are put in nodeweave's scope too; and as Keras' TestCase.setUp
# clears Keras' session before each test (automatic names start again), nodeweave's is cleared too.
CONFTEST = """
import keras
import pytest
from keras.src.saving import object_registration

import engine
import engine.files.registry
import engine.utils
from nodeweave import layers

keras.saving.get_custom_objects().update(
    {name: obj for name, obj in [*vars(layers).items(), *vars(engine).items()]
     if isinstance(obj, type) and issubclass(obj, engine.Layer)})

_keras_enter, _keras_exit = object_registration.CustomObjectScope.__enter__, object_registration.CustomObjectScope.__exit__


def _enter(scope):
    scope._nodeweave_scope = engine.files.registry.custom_object_scope(scope.custom_objects)
    scope._nodeweave_scope.__enter__()
    return _keras_enter(scope)


def _exit(scope, *args, **kwargs):
    _keras_exit(scope, *args, **kwargs)
    scope._nodeweave_scope.__exit__(None, None, None)


object_registration.CustomObjectScope.__enter__ = _enter
object_registration.CustomObjectScope.__exit__ = _exit


@pytest.fixture(autouse=True)
def clear_nodeweave_session():
    engine.utils.clear_session()
"""

_DTYPE_POLICY = "dtype policies (mixed precision, DTypePolicyMap): nodeweave computes in float32 by design"
_QUANT = "quantization (int8/int4/float8, GPTQ, AWQ): nodeweave has no quantized kernels by design"
_TF_TORCH = "TensorFlow or PyTorch objects (tf.data, tf.SparseTensor, ragged): not installed, not our backend"
_SPARSE = "sparse backend tensors: nodeweave computes on dense NumPy arrays"
_OPS_DISPATCH = ("patches Keras' internal op classes (keras.src.ops.X.symbolic_call): nodeweave's KerasTensor "
                 "records its operators without them")
_REMAT = "rematerialization (RematScope): a JAX/TF memory feature nodeweave does not have"
_EXPORT = "keras.export (TF SavedModel / ExportArchive): nodeweave exports ONNX instead"
_LAYER_HARNESS = ("Keras' run_layer_test calls the layer on Keras' own KerasTensors and trains it inside a Keras "
                  "Model under jax.jit: a step of Keras' backend harness that only a Keras layer can take")
_LORA = "LoRA (enable_lora): nodeweave has no low-rank adapters"
_BYTECODE = ("a Lambda's Python bytecode saved in a .keras file and loaded back (safe_mode=False): nodeweave "
             "never unmarshals code from a file, by design (a Lambda is saved by its function's registered or "
             "importable name)")

# (file, test name pattern matched from the start of the test's name, reason).
NOT_APPLICABLE = [
    ("keras_tensor_test", r"test_(abs|neg|sub|mul|matmul|pow|mod|lt|and|or|getitem|radd|rsub|rmul|rmatmul|rpow|"
                          r"floordiv|rfloordiv|rmod|le|gt|ge|ne|rand|ror|invert|xor|rxor|truediv|rtruediv|div|"
                          r"rdiv|add|eq)_method", _OPS_DISPATCH),
    ("keras_tensor_test", r"test_(attributes_sparse|attributes_ragged|init_sparse_ragged_raises)", _SPARSE),
    ("keras_tensor_test", r"test_invalid_usage", _TF_TORCH),
    ("dense_test", r"test_(quantize|int4|int8|float8|gptq|awq|.*quantiz)", _QUANT),
    ("dense_test", r"test_.*(lora)", _LORA),
    ("dense_test", r"test_dense_sparse", _SPARSE),
    ("dense_test", r"test_legacy_load_own_variables", _QUANT),  # five of its six stores are quantized layers'
    ("sequential_test", r"test_serialization_with_lambda_layer", _BYTECODE),
    ("dense_test", r"test_dense_basics", _LAYER_HARNESS),
    ("dense_test", r"test_.*export", _EXPORT),
    ("layer_test", r"test_(remat|.*remat)", _REMAT),
    ("layer_test", r"test_(dtype_policy|mixed_precision|autocast|.*dtype_policy|serialize_dtype|"
                   r"keras_mask_with_autocast)", _DTYPE_POLICY),
    ("layer_test", r"test_(gptq_quantization|not_implemented_error_(quantize|quantized_build|int8_call|"
                   r"float8_call))", _QUANT),
    ("model_test", r"test_quantize", _QUANT),
    ("input_layer_test", r"test_input_basic_sparse", _SPARSE),
    ("merging_test", r"test_sparse", _SPARSE),
    ("merging_test", r"test_basic_", _LAYER_HARNESS),
    ("functional_test", r"test_(dtype_policy|.*dtype_policy)", _DTYPE_POLICY),
]


def keras_sources():
    """The directory of the installed ``keras.src``, found without importing Keras."""
    spec = importlib.util.find_spec("keras")
    if spec is None:
        sys.exit("keras is not installed: `pip install keras` (it comes with the test extra)")
    return Path(spec.origin).parent / "src"


def rewrite(text):
    """Keras' test file with its imports renamed to nodeweave's (RENAMES, NAME_RENAMES)."""
    lines = []
    for line in text.splitlines():
        ours = RENAMES.get(line.strip())
        lines.append(line if ours is None else line[: len(line) - len(line.lstrip())] + ours)
    text = "\n".join(lines) + "\n"
    for pattern, ours in NAME_RENAMES.items():
        text = re.sub(pattern, ours, text)
    return "import nodeweave\n" + text


def not_applicable(stem, name):
    for file, pattern, reason in NOT_APPLICABLE:
        if file == stem and re.match(pattern, name):
            return reason
    return None


def run_pytest(directory):
    """Runs pytest on the rewritten files; returns the JUnit XML's test cases."""
    report = directory / "report.xml"
    (directory / "pytest.ini").write_text("[pytest]\n")
    (directory / "conftest.py").write_text(CONFTEST)
    env = {**os.environ, "KERAS_BACKEND": "jax"}
    subprocess.run(
        [sys.executable, "-m", "pytest", str(directory), "-q", "-p", "no:cacheprovider", "-c",
         str(directory / "pytest.ini"), "--rootdir", str(directory), "--import-mode=importlib",
         "--timeout=300", f"--junitxml={report}", "-W", "ignore"],
        env=env, cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return ET.parse(report).getroot().iter("testcase")


def first_error_line(element):
    message = element.get("message") or ""
    text = element.text or ""
    lines = [line for line in text.splitlines() if line.startswith("E   ")]
    line = lines[0][4:].strip() if lines else message.splitlines()[0] if message else "?"
    return line[:200]


def group_of(line):
    """The failure's group: its first error line without the parts that name one test's objects
    (<reprs>, quoted text but short names, numbers), cut to 100 characters."""
    line = re.sub(r"<[^<>]*>", "<...>", line)
    line = re.sub(r"(?<!\w)'([^']*)'|\"([^\"]*)\"",
                  lambda m: m.group(0) if re.fullmatch(r"[\w.]{1,30}", m.group(1) or m.group(2) or "") else "'...'",
                  line)
    return re.sub(r"\d+", "N", line)[:100]


def classify(cases):
    """Per file: tests collected, not applicable (by reason, and which), passed, and failures as
    (test, first error line). A file that fails to import counts as one failure."""
    files = defaultdict(lambda: {"collected": 0, "not_applicable": Counter(), "not_applicable_tests": [],
                                 "not_applicable_but_passing": 0, "passed": 0, "failed": []})
    for case in cases:
        outcome = next(iter(case), None)
        if not case.get("classname"):  # a collection error: pytest names the file instead of a test
            files[Path(case.get("name")).stem]["failed"].append(("<import>", first_error_line(outcome)))
            continue
        stem, name = case.get("classname").split(".")[0], case.get("name")
        entry = files[stem]
        entry["collected"] += 1
        reason = not_applicable(stem, name)
        if reason is None and outcome is not None and outcome.tag == "skipped":
            reason = "skipped by Keras' own condition on jax: " + (outcome.get("message") or "")[:80]
        if reason is not None:
            entry["not_applicable"][reason] += 1
            entry["not_applicable_tests"].append(name)
            entry["not_applicable_but_passing"] += outcome is None
        elif outcome is None:
            entry["passed"] += 1
        else:
            entry["failed"].append((name, first_error_line(outcome)))
    return files


def main(argv):
    sources = keras_sources()
    chosen = SMOKE_FILES if "--smoke" in argv else FILES
    with tempfile.TemporaryDirectory(prefix="keras_test_parity_") as tmp:
        directory = Path(tmp)
        for relative in chosen:
            (directory / Path(relative).name).write_text(rewrite((sources / relative).read_text()))
        files = classify(run_pytest(directory))

    total = Counter()
    groups = Counter()
    examples = {}
    print(f"{'file':<22}{'collected':>10}{'n/a':>6}{'passed':>8}{'failed':>8}{'rate':>8}")
    per_file = {}
    for relative in chosen:
        stem = Path(relative).stem
        entry = files[stem]
        na = sum(entry["not_applicable"].values())
        failed = len(entry["failed"])
        applicable = entry["passed"] + failed
        rate = entry["passed"] / applicable if applicable else 0.0
        print(f"{stem:<22}{entry['collected']:>10}{na:>6}{entry['passed']:>8}{failed:>8}{rate:>8.1%}")
        for reason, count in entry["not_applicable"].most_common():
            print(f"    n/a {count:>3}: {reason}")
        if entry["not_applicable_but_passing"]:
            print(f"    (of the n/a, {entry['not_applicable_but_passing']} pass anyway)")
        for name, line in entry["failed"]:
            groups[group_of(line)] += 1
            examples.setdefault(group_of(line), f"{stem}::{name}")
            if "--verbose" in argv:
                print(f"    FAIL {name}: {line}")
        total.update(collected=entry["collected"], na=na, passed=entry["passed"], failed=failed)
        per_file[stem] = {"collected": entry["collected"], "not_applicable": dict(entry["not_applicable"]),
                          "not_applicable_tests": entry["not_applicable_tests"], "passed": entry["passed"],
                          "failed": failed, "pass_rate": rate,
                          "failures": entry["failed"]}
    applicable = total["passed"] + total["failed"]
    rate = total["passed"] / applicable if applicable else 0.0
    print(f"{'all':<22}{total['collected']:>10}{total['na']:>6}{total['passed']:>8}{total['failed']:>8}"
          f"{rate:>8.1%}   (goal {GOAL:.0%})")
    print("\nfailures by first error line:")
    for line, count in groups.most_common():
        print(f"  {count:>3}  {line}\n         e.g. {examples[line]}")
    rows = [{"file": stem, **entry} for stem, entry in per_file.items()]
    save("keras_test_parity", {"rows": rows, "collected": total["collected"], "not_applicable": total["na"],
                               "passed": total["passed"], "failed": total["failed"], "pass_rate": rate,
                               "goal": GOAL, "groups": dict(groups.most_common())})


if __name__ == "__main__":
    main(sys.argv[1:])
