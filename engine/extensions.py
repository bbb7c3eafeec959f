"""What the modules built on others lend the ones below them: displays, the summary, export, the catalog.

A module never imports one built on it, so the import graph has no circle (tests/test_import_graph.py).
Where a lower module needs a higher one, the higher one lends it what is needed when it is imported:
``graph`` lends the engine its displays, ``Model.summary`` and ``Model.export``; ``layers`` registers the
built-in layers; inside the engine, the operator layers lend ``KerasTensor`` its ``x + y``, ``Functional``
lends ``Model(inputs, outputs)``, pickling lends ``Module.__reduce__`` (``engine/__init__.py`` imports
them all). Where the engine needs ``graph`` or ``layers`` before the user imported them (a notebook showing a
model after ``from engine import Input, Model``, a file naming ``Dense`` read first thing), it loads the
packages that nodeweave's installation declares as entry points of the group ``nodeweave.extensions``
(setup.cfg), as pandas finds its plotting backends.
"""

import importlib.metadata
import threading

#: The entry-point group naming the packages that provide for the engine.
GROUP = "nodeweave.extensions"

_PROVIDED = {}
_LOADED = set()
_LOCK = threading.RLock()


def provide(name, function):
    """Lends the engine ``function`` under ``name`` (called by the package above, when it is imported).

    Args:
        name: what the engine asks for, e.g. ``"model_display"``.
        function: the function that does it.

    Example:
        >>> from engine import extensions
        >>> extensions.provide("example_greeting", lambda who: f"hello {who}")
        >>> extensions.provided("example_greeting")("layer")
        'hello layer'
    """
    _PROVIDED[name] = function


def load(package):
    """Imports the package declared as the ``nodeweave.extensions`` entry point ``package`` (once).

    Args:
        package: the entry point's name, ``"layers"`` or ``"graph"``.

    Raises:
        LookupError: nodeweave's installation declares no such entry point.
    """
    with _LOCK:
        if package in _LOADED:
            return
        found = importlib.metadata.entry_points(group=GROUP, name=package)
        if not found:
            raise LookupError(
                f"No package {package!r} is declared in the entry points {GROUP!r}: nodeweave's installation is "
                f"incomplete. Reinstall it (pip install -e .) or import {package} before using the engine.")
        for entry_point in found:
            entry_point.load()
        _LOADED.add(package)


def provided(name):
    """The function lent under ``name``, loading the declared packages if none lent it yet.

    Args:
        name: what the engine asks for, e.g. ``"model_display"``.

    Raises:
        LookupError: no package provides ``name``.
    """
    function = _PROVIDED.get(name)
    if function is None:
        for entry_point in importlib.metadata.entry_points(group=GROUP):
            load(entry_point.name)
        function = _PROVIDED.get(name)
    if function is None:
        raise LookupError(f"No package lends the engine {name!r}: import the package that provides it "
                          f"(graph or layers), or reinstall nodeweave (pip install -e .).")
    return function
