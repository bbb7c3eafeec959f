"""The API reference: it builds without a warning, its examples run, and no public name lacks one.

`make docs` renders the same modules with pdoc into docs/api/; these tests build it into a
temporary folder so a broken docstring fails CI.
"""

import doctest
import importlib
import inspect
import pathlib
import pkgutil
import re
import subprocess
import sys
import warnings

import pytest

import engine
import graph
import layers
from engine import blas_threads, set_num_threads
from engine.files import registry

PACKAGES = ("engine", "layers", "graph")
ROOT = pathlib.Path(__file__).resolve().parents[2]
# The reference's pages, as `make docs` lists them: the three packages and engine's packages that users
# pick classes from (engine.training.optimizers.Adam, as keras.optimizers.Adam).
REFERENCE_MODULES = tuple(re.search(r"^API_MODULES := (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split())


def _module_names():
    names = []
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        names.append(package_name)
        names.extend(info.name for info in pkgutil.walk_packages(package.__path__, package_name + "."))
    return names


def _doctests():
    finder = doctest.DocTestFinder()
    tests = []
    for module_name in _module_names():
        module = importlib.import_module(module_name)
        tests.extend(test for test in finder.find(module) if test.examples)
    return sorted(tests, key=lambda test: test.name)


def _public(module):
    """The classes and functions a module exports: its ``__all__``, else the public ones it defines."""
    names = getattr(module, "__all__", None) or [name for name, value in vars(module).items()
                                                  if not name.startswith("_") and _ours(value)
                                                  and value.__module__ == module.__name__]
    return [(f"{module.__name__}.{name}", getattr(module, name)) for name in names
            if inspect.isclass(getattr(module, name)) or inspect.isfunction(getattr(module, name))]


def _ours(obj):
    return (getattr(obj, "__module__", None) or "").split(".")[0] in PACKAGES


def _methods(cls):
    """Public methods a class brings in itself or from our bases, each under the class that defines
    it first (an override is documented where the method is introduced); ``__call__`` counts."""
    found = []
    for owner in cls.__mro__:
        if not _ours(owner):
            continue
        for name, value in vars(owner).items():
            if name.startswith("_") and name != "__call__":
                continue
            function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            if not inspect.isfunction(function):
                continue
            introducer = next(base for base in reversed(owner.__mro__) if name in vars(base))
            if introducer is owner:
                found.append((f"{owner.__module__}.{owner.__qualname__}.{name}", function))
    return found


def _properties(cls):
    return [(f"{owner.__module__}.{owner.__qualname__}.{name}", value)
            for owner in cls.__mro__ if _ours(owner)
            for name, value in vars(owner).items() if isinstance(value, property) and not name.startswith("_")]


def _takes_arguments(function):
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(parameter.name not in ("self", "cls") for parameter in parameters)


def _constructor(cls):
    return next((vars(owner)["__init__"] for owner in cls.__mro__ if "__init__" in vars(owner)), None)


def _documented_arguments(docstring):
    """The names an ``Args:`` section documents (``a, b: ...`` documents both), or None without one."""
    section = re.search(r"^Args:\n((?:[ \t]+\S.*\n|\n)+)", docstring + "\n", re.M)
    if section is None:
        return None
    lines = [line for line in section.group(1).splitlines() if line.strip()]
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    heads, pending = [], None  # a list of names may run over lines up to its colon
    for line in lines:
        if pending is None and len(line) - len(line.lstrip()) != indent:
            continue
        pending = line.strip() if pending is None else f"{pending} {line.strip()}"
        if ":" in pending:
            heads.append(pending.split(":")[0])
            pending = None
    return {part.strip().split(" ")[0].lstrip("*") for head in heads for part in head.split(",")}


def _named_parameters(function):
    return [parameter.name for parameter in inspect.signature(function).parameters.values()
            if parameter.name not in ("self", "cls") and parameter.kind not in (parameter.VAR_POSITIONAL,
                                                                                 parameter.VAR_KEYWORD)]


def _missing(obj):
    """What a public class or function's docstring lacks: a summary, Args (naming every parameter of a
    function or of a constructor the class defines itself), an example."""
    docstring = inspect.getdoc(obj) or ""
    arguments_of, own_signature = obj, True
    if inspect.isclass(obj):
        arguments_of, own_signature = _constructor(obj), "__init__" in vars(obj)
        if own_signature:
            docstring += "\n" + (inspect.getdoc(vars(obj)["__init__"]) or "")
        if not inspect.isfunction(arguments_of):  # a builtin's (object, dict, ValueError)
            arguments_of = None
    missing = []
    if not docstring.strip():
        missing.append("a docstring")
    documented = _documented_arguments(docstring)
    if arguments_of is not None and _takes_arguments(arguments_of):
        if documented is None:
            missing.append("Args:")
        elif own_signature:
            undocumented = [name for name in _named_parameters(arguments_of) if name not in documented]
            if undocumented:
                missing.append(f"Args for {', '.join(undocumented)}")
    if ">>>" not in docstring:
        missing.append("a >>> example")
    return missing


def _reference_pages():
    """The modules the reference shows: those `make docs` lists and the submodules they export
    (layers.activations, engine.training.optimizers.schedules)."""
    modules = [importlib.import_module(name) for name in REFERENCE_MODULES]
    return modules + [getattr(module, name) for module in modules for name in getattr(module, "__all__", ())
                      if inspect.ismodule(getattr(module, name))]


def _documented_names():
    public = [item for module in _reference_pages() for item in _public(module)]
    names = dict(public)
    # Every class's public methods count, Model's fit and evaluate through Trainer, except the
    # callbacks': Callback's docstring describes its hooks together.
    for _, obj in public:
        if inspect.isclass(obj) and obj.__module__ != "engine.training.callbacks":
            names.update(_methods(obj))
    return names


def test_reference_builds_without_warnings(tmp_path):
    command = [sys.executable, "-m", "pdoc", "--docformat", "google", "--output-directory", str(tmp_path),
               *REFERENCE_MODULES]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    trainer_page = (tmp_path / "engine" / "training" / "trainer.html").read_text()
    assert 'id="Trainer.fit"' in trainer_page
    assert '<h6 id="arguments">Arguments:</h6>' in trainer_page, "Google-style sections render as headings and lists"
    assert 'href="engine/training/trainer.html#Trainer.fit"' in (tmp_path / "engine.html").read_text(), "Model links to fit"


@pytest.fixture
def threads_kept():
    """The process keeps its thread setting whatever an example sets: ``set_num_threads``' own ends
    with ``set_num_threads(None)``, which gave the worker's BLAS its two threads back under
    ``NODEWEAVE_NUM_THREADS=1``, and every later test of that worker ran its products on both cores
    beside the other worker (the digits CNN's training test: 1.7 s alone, 11-14 s after it)."""
    previous = blas_threads._chosen
    yield
    set_num_threads(previous)


@pytest.mark.parametrize("test", _doctests(), ids=lambda test: test.name)
def test_docstring_example_runs(test, monkeypatch, threads_kept):
    # An example's classes are defined in the module it documents, so nodeweave would register them as
    # its own layers; they are forgotten afterwards, as the example's session ends.
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)


def test_every_public_name_has_arguments_and_an_example():
    incomplete = {name: _missing(obj) for name, obj in _documented_names().items()}
    incomplete = {name: missing for name, missing in incomplete.items() if missing}
    assert incomplete == {}, "\n".join(f"{name}: lacks {', '.join(missing)}" for name, missing in incomplete.items())


def test_every_public_property_has_a_docstring():
    classes = [obj for module in (engine, layers, graph) for _, obj in _public(module) if inspect.isclass(obj)]
    undocumented = sorted({name for cls in classes for name, value in _properties(cls) if not inspect.getdoc(value)})
    assert undocumented == []


def test_the_checks_see_the_methods_users_call():
    names = _documented_names()
    for method in ("fit", "evaluate", "predict", "compile", "train_on_batch", "test_on_batch", "predict_on_batch"):
        assert f"engine.training.trainer.Trainer.{method}" in names
    for method in ("save", "save_weights", "load_weights", "summary", "get_layer", "to_json"):
        assert f"engine.network.model.Model.{method}" in names
    for method in ("build", "call", "get_config", "from_config", "compute_output_shape", "backward"):
        assert f"engine.network.layer.Layer.{method}" in names
    assert "engine.network.layer_calls.LayerCalls.__call__" in names  # Layer inherits it
    assert "engine.network.layer_weights.LayerWeights.add_weight" in names  # and this
    assert "engine.autodiff.tape.GradientTape.gradient" in names
    assert {"graph.to_networkx", "graph.profile", "graph.summary", "engine.training.callbacks.EarlyStopping"} <= set(names)


def test_the_checks_name_what_a_docstring_lacks():
    def bare(units, activation=None):
        pass

    def partly(units, activation=None, **kwargs):
        """Makes a thing.

        Args:
            units, other: sizes.
            **kwargs: more.
        """

    class Documented:
        """A thing.

        Args:
            units: positive
                integer.

        Example:
            >>> Documented(2).units
            2
        """

        def __init__(self, units):
            self.units = units

    class Undocumented(Documented):
        """A thing with more arguments.

        Example:
            >>> Undocumented(2, 3).depth
            3
        """

        def __init__(self, units, depth):
            super().__init__(units)
            self.depth = depth

    assert _missing(bare) == ["a docstring", "Args:", "a >>> example"]
    assert _missing(partly) == ["Args for activation", "a >>> example"]
    assert _missing(Documented) == []
    assert _missing(Undocumented) == ["Args:"]
