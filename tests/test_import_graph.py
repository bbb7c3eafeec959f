"""The import graph of nodeweave's packages: no circle among files, and no arrow from ``engine`` up.

The graph has one node per ``.py`` file under ``engine/``, ``layers/``, ``graph/`` and ``nodeweave/``
and an arrow from file A to file B when A imports B anywhere: at module level or inside a function,
since a function-level import only defers a circle, it does not remove it. An import names the file of
its most specific module: ``from engine.training.losses.loss import Loss`` points at ``engine/training/losses/loss.py``,
``from engine.training.losses import Loss`` at ``engine/training/losses/__init__.py``, and ``from engine import tree`` at
``engine/tree.py`` (a module imported from its package). Python runs a package's ``__init__`` before any
of its modules, but that is not an arrow: a package ``__init__`` that re-exports its own modules makes
no circle with them unless one of them imports the package itself.
"""

import ast
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("engine", "layers", "graph", "nodeweave")


def _modules():
    """``{dotted module name: file path}`` for every .py file of the packages."""
    found = {}
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(ROOT, package)):
            for file in files:
                if file.endswith(".py"):
                    path = os.path.join(folder, file)
                    name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    found[name[: -len(".__init__")] if name.endswith(".__init__") else name] = path
    return found


def _imported(node, module, is_package):
    """The dotted names an Import or ImportFrom node asks for (``from a import b`` asks for ``a.b``
    as well as ``a``: it is a module when such a file exists)."""
    if isinstance(node, ast.Import):
        return [(alias.name,) for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
        base = ".".join(parts + ([base] if base else []))
    return [(f"{base}.{alias.name}", base) for alias in node.names]


def _imports_of(source, module, is_package, modules):
    """The modules among ``modules`` that ``source`` (the text of ``module``) imports, anywhere in it."""
    targets = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for candidates in _imported(node, module, is_package):
                name = next((c for c in candidates if c in modules), candidates[-1])
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    targets.add(name)
    return targets


def _import_graph():
    """``{module: {modules it imports}}`` among the packages' own files."""
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        with open(path, encoding="utf-8") as handle:
            graph[module] = _imports_of(handle.read(), module, path.endswith("__init__.py"), modules)
    return graph


def _circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, circles = {}, {}, set(), [], []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_the_circle_finder_finds_a_circle_and_only_it():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [["a", "b", "c"]]


def test_every_kind_of_import_is_an_arrow_to_the_most_specific_file():
    modules = {name: "" for name in ("p", "p.a", "p.b", "p.c", "p.d", "p.e", "p.sub", "p.sub.f", "q")}
    source = (
        "import p.a\n"
        "from p import b\n"  # a module of its package
        "from p.sub import Thing\n"  # a name from a package's __init__
        "from .d import x\n"  # relative
        "def f():\n"
        "    from p.e import y\n"  # inside a function
        "    import q.missing\n"  # not a file: its nearest package
    )
    assert _imports_of(source, "p.c", False, modules) == {"p.a", "p.b", "p.sub", "p.d", "p.e", "q"}
    assert _imports_of("from . import f", "p.sub", True, modules) == {"p.sub.f"}


def test_no_import_circle_among_files():
    graph = _import_graph()
    circles = _circles(graph)
    described = "\n".join(
        f"{len(circle)} modules: " + "; ".join(f"{module} -> {', '.join(sorted(graph[module] & set(circle)))}"
                                               for module in circle)
        for circle in circles)
    assert not circles, (
        f"The import graph has {len(circles)} circle(s):\n{described}\nBreak each by moving the shared code "
        "to the lower module, passing the dependency in, or registering from the higher module "
        "(engine/extensions.py).")


def test_engine_imports_neither_graph_nor_layers():
    graph = _import_graph()
    upward = sorted((module, target) for module, targets in graph.items() if module.split(".")[0] == "engine"
                    for target in targets if target.split(".")[0] in ("graph", "layers", "nodeweave"))
    assert not upward, (
        f"engine imports the packages built on it: {upward}. Lend the engine what it needs from above "
        "with engine.extensions.provide instead.")


def test_keras_namespaces_import_by_their_paths_from_before_the_rooms():
    namespaces = ["callbacks", "constraints", "initializers", "losses", "metrics", "optimizers", "regularizers"]
    script = "; ".join(f"import engine.{name}" for name in namespaces) + (
        "; from engine.optimizers import Adam; from engine.losses import MeanSquaredError; import engine; "
        f"print([getattr(engine, name).__name__ for name in {namespaces!r}], Adam.__name__, MeanSquaredError.__name__)")
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert run.stdout.split() == [
        "['engine.training.callbacks',", "'engine.training.constraints',", "'engine.network.initializers',",
        "'engine.training.losses',", "'engine.training.metrics',", "'engine.training.optimizers',",
        "'engine.training.regularizers']", "Adam", "MeanSquaredError"]
