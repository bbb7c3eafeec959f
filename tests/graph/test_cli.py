import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from engine import Input, Model
from graph.cli import main
from layers import Dense


@pytest.fixture
def model_file(tmp_path):
    a = Input(shape=(3,), name="a")
    shared = Dense(4, name="shared")
    model = Model(a, Dense(2, name="head")(shared(a) + shared(a * 2.0)), name="saved")
    path = tmp_path / "saved.nw"
    model.save(path)
    return path


def test_summary_prints_the_table(model_file, capsys):
    main(["summary", str(model_file)])
    out = capsys.readouterr().out
    assert 'Model: "saved"' in out and "shared[1] (Dense)" in out and "Total params: 26" in out


def test_plot_writes_the_requested_format(model_file, tmp_path, capsys):
    target = tmp_path / "graph.svg"
    main(["plot", str(model_file), "-o", str(target), "--show-shapes", "--per-call"])
    assert target.read_text().lstrip().startswith("<?xml")
    assert "shared[1]" in target.read_text()
    main(["plot", str(model_file), "-o", str(tmp_path / "graph.dot")])
    assert "digraph" in (tmp_path / "graph.dot").read_text()


def test_inspect_shows_inbound_and_outbound_links(model_file, capsys):
    main(["inspect", str(model_file), "--layer", "shared"])
    out = capsys.readouterr().out.splitlines()
    assert out == ["shared (Dense)", "  call 0: inbound a[0][0]", "  call 1: inbound multiply[0][0]", "  outbound: add"]


def test_bad_files_and_layers_exit_with_a_message(model_file, tmp_path):
    broken = tmp_path / "broken.nw"
    broken.write_bytes(b"not a model")
    with pytest.raises(SystemExit, match="nodeweave: .*not a zip archive"):
        main(["summary", str(broken)])
    with pytest.raises(SystemExit, match="has no layer 'nope'; its layers are"):
        main(["inspect", str(model_file), "--layer", "nope"])


@pytest.mark.parametrize("command", [[], ["summary"], ["plot"], ["inspect"], ["demo"]])
def test_console_script_has_help_for_every_command(command):
    script = Path(sys.executable).parent / "nodeweave"
    result = subprocess.run([str(script), *command, "--help"], capture_output=True, text=True, check=True)
    assert result.stdout.startswith("usage: nodeweave")


def test_python_dash_m_runs_the_same_command(model_file):
    result = subprocess.run([sys.executable, "-m", "graph.cli", "inspect", str(model_file), "--layer", "shared"],
                            capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[0] == "shared (Dense)"
    failed = subprocess.run([sys.executable, "-m", "graph.cli", "summary", "missing.nw"],
                            capture_output=True, text=True, check=False)
    assert failed.returncode == 1 and failed.stderr.startswith("nodeweave: Cannot read model file 'missing.nw'")


def test_a_model_with_the_users_own_layer_opens_with_custom_objects(tmp_path, capsys, monkeypatch):
    source = tmp_path / "my_layers.py"
    source.write_text("from engine import Layer\n\n\nclass Doubling(Layer):\n    def call(self, x):\n"
                      "        return x * 2.0\n")
    spec = importlib.util.spec_from_file_location("my_layers", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    a = Input(shape=(3,), name="a")
    path = tmp_path / "custom.nw"
    Model(a, Dense(2, name="head")(module.Doubling(name="twice")(a)), name="custom").save(path)
    with pytest.raises(SystemExit, match="Doubling.*custom_objects"):
        main(["summary", str(path)])
    main(["summary", str(path), "--custom-objects", str(source)])
    assert "twice (Doubling)" in capsys.readouterr().out
    monkeypatch.syspath_prepend(str(tmp_path))  # a module name is imported from the Python path
    monkeypatch.delitem(sys.modules, "my_layers", raising=False)
    main(["inspect", str(path), "--layer", "twice", "--custom-objects", "my_layers"])
    assert capsys.readouterr().out.splitlines()[:2] == ["twice (Doubling)", "  call 0: inbound a[0][0]"]
    with pytest.raises(SystemExit, match="--custom-objects no_such_module_here: No module named"):
        main(["inspect", str(path), "--custom-objects", "no_such_module_here"])
