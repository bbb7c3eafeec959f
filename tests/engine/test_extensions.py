"""The engine imports neither ``graph`` nor ``layers``; they lend it displays, the summary and the catalog."""

import subprocess
import sys
import textwrap

import pytest

from engine import extensions


def _run(code):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_importing_the_engine_imports_neither_graph_nor_layers():
    assert _run("""
        import sys
        import engine
        from engine import Input, Model, Sequential
        print('graph' in sys.modules, 'layers' in sys.modules)
    """) == ["False", "False"]


def test_a_model_built_from_the_engine_alone_still_displays_summarizes_and_reads_layer_names():
    out = _run("""
        import sys
        from engine import Input, Model
        from engine.files.registry import lookup
        dense = lookup("Dense")  # a file naming Dense, read before layers was imported
        x = Input(shape=(3,), name="x")
        model = Model(x, dense(2, name="d")(x))
        bundle = model._repr_mimebundle_()
        lines = []
        model.summary(print_fn=lines.append)
        print(dense.__module__, ",".join(sorted(bundle)), lines[0].replace(" ", "_"))
    """)
    assert out == ["layers.core.dense", "image/svg+xml,text/html,text/plain", 'Model:_"functional"']


def test_what_no_package_provides_is_named():
    with pytest.raises(LookupError, match="'no such display'.*graph or layers"):
        extensions.provided("no such display")


def test_an_undeclared_package_is_named_with_the_fix():
    with pytest.raises(LookupError, match="No package 'nowhere' is declared.*pip install -e"):
        extensions.load("nowhere")
