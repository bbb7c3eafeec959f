import importlib.util
import re
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


def test_summary_collapses_runs_of_identical_blocks_on_request(tmp_path, capsys):
    from tests.graph.test_plot_big import resnet

    path = tmp_path / "resnet.nw"
    resnet(3).save(path)
    main(["summary", str(path), "--collapse-repeats"])
    out = capsys.readouterr().out
    assert "⋮ ×3 in all: b1_conv1 …" in out and "b1_conv1 (Conv2D)" not in out


def test_plot_colours_boxes_by_node_data_with_a_legend(model_file, tmp_path, capsys):
    target = tmp_path / "graph.dot"
    main(["plot", str(model_file), "-o", str(target), "--node-data", "params"])
    assert "parameters" in target.read_text() and "fillcolor" in target.read_text()


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
    with pytest.raises(SystemExit, match="has no layer 'nope'. No layer name is close to it. It has 5 layers"):
        main(["inspect", str(model_file), "--layer", "nope"])


def test_a_mistyped_layer_gets_the_closest_names_and_the_count_not_every_name(tmp_path):
    x = Input(shape=(2,), name="x")
    y = x
    for index in range(150):
        y = Dense(2, name=f"block_{index}_dense")(y)
    path = tmp_path / "deep.nw"
    Model(x, y, name="deep").save(path)
    with pytest.raises(SystemExit) as info:
        main(["inspect", str(path), "--layer", "block_7_dnse"])
    message = str(info.value.code)
    assert message.startswith("nodeweave: model 'deep' has no layer 'block_7_dnse'. Did you mean 'block_7_dense'")
    assert 2 <= message.count("_dense'") <= 5 and "block_149_dense" not in message
    assert message.endswith(f"It has 151 layers; `nodeweave inspect {path}` lists them.")


@pytest.mark.parametrize("flags, expected", [
    (["--max-depth", "2"], "--max-depth 2 says how many levels of nested models --expand-nested expands"),
    (["--max-depth", "0", "--expand-nested"], "argument --max-depth: expected a positive integer"),
    (["--layer-range", "sh(", "head"], "argument --layer-range: 'sh(' is not a valid regular expression"),
])
def test_plot_argument_errors_name_the_flags(model_file, tmp_path, capsys, flags, expected):
    with pytest.raises(SystemExit) as info:
        main(["plot", str(model_file), "-o", str(tmp_path / "g.dot"), *flags])
    error = capsys.readouterr().err
    assert info.value.code == 2 and error.startswith("usage: nodeweave plot") and expected in error
    assert not re.search(r"\b(expand_nested|max_depth|layer_range)\b", error)
    assert not (tmp_path / "g.dot").exists()


def test_a_layer_range_matching_no_layer_names_the_flag_and_the_closest_layers(model_file, tmp_path):
    with pytest.raises(SystemExit) as info:
        main(["plot", str(model_file), "-o", str(tmp_path / "g.dot"), "--layer-range", "shraed", "head"])
    message = info.value.code
    assert message.startswith("nodeweave: --layer-range shraed head: no layer name of model 'saved' starts with a "
                              "match of 'shraed'. Did you mean 'shared'")
    assert message.endswith(f"It has 5 layers; `nodeweave inspect {model_file}` lists them.")
    main(["plot", str(model_file), "-o", str(tmp_path / "g.dot"), "--layer-range", "sh.r", "head"])
    assert "shared" in (tmp_path / "g.dot").read_text()


@pytest.mark.parametrize("command", [[], ["summary"], ["plot"], ["view"], ["inspect"], ["demo"]])
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
    with pytest.raises(SystemExit) as info:
        main(["summary", str(path)])
    assert "--custom-objects MODULE (a .py file or module that defines Doubling)" in info.value.code
    assert "custom_objects" not in info.value.code
    main(["summary", str(path), "--custom-objects", str(source)])
    assert "twice (Doubling)" in capsys.readouterr().out
    monkeypatch.syspath_prepend(str(tmp_path))  # a module name is imported from the Python path
    monkeypatch.delitem(sys.modules, "my_layers", raising=False)
    main(["inspect", str(path), "--layer", "twice", "--custom-objects", "my_layers"])
    assert capsys.readouterr().out.splitlines()[:2] == ["twice (Doubling)", "  call 0: inbound a[0][0]"]
    with pytest.raises(SystemExit, match="--custom-objects no_such_module_here: No module named"):
        main(["inspect", str(path), "--custom-objects", "no_such_module_here"])


def test_a_lambda_saved_by_a_script_opens_with_that_script_as_custom_objects(tmp_path, capsys):
    script = tmp_path / "make_model.py"
    script.write_text("from engine import Input, Model\nfrom layers import Lambda\n\n\ndef square(x):\n"
                      "    return x * x\n\n\nif __name__ == '__main__':\n    a = Input(shape=(3,), name='a')\n"
                      "    Model(a, Lambda(square, name='sq')(a)).save('squares.nw')\n")
    subprocess.run([sys.executable, str(script)], cwd=tmp_path, check=True)
    path = tmp_path / "squares.nw"
    with pytest.raises(SystemExit) as info:
        main(["inspect", str(path)])
    assert "uses the function '__main__:square'" in info.value.code
    assert "--custom-objects MODULE (a .py file or module that defines square)" in info.value.code
    assert "load it in Python with load_model(path, safe_mode=False)" in info.value.code
    main(["inspect", str(path), "--layer", "sq", "--custom-objects", str(script)])
    assert capsys.readouterr().out.splitlines() == ["sq (Lambda)", "  call 0: inbound a[0][0]", "  outbound: -"]


def test_view_writes_the_html_view_next_to_where_it_runs(model_file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    main(["view", str(model_file)])
    assert capsys.readouterr().out == "wrote saved.html\n"
    page = (tmp_path / "saved.html").read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html") and "shared" in page and "head" in page


def test_view_passes_node_data_and_the_output_to_save_html(model_file, tmp_path, monkeypatch, capsys):
    import graph.html_view

    calls = []
    monkeypatch.setattr(graph.html_view, "save_html", lambda model, path, **options: calls.append((model, path, options)))
    main(["view", str(model_file), "-o", str(tmp_path / "g.html"), "--node-data", "flops"])
    (model, path, options), = calls
    assert model.name == "saved" and path == str(tmp_path / "g.html") and options == {"node_data": "flops"}
    with pytest.raises(SystemExit):
        main(["view", str(model_file), "--node-data", "watts"])
    assert "argument --node-data: invalid choice: 'watts'" in capsys.readouterr().err
