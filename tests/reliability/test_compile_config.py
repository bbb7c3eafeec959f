"""Compile configs naming what nodeweave cannot make (issue #28, item 6): an
unknown metric was accepted at load and failed on the first batch of
``evaluate`` with a ValueError naming no file; now every loss and metric of a
``.nw`` or ``.keras`` file's compile config is made at load, and one that
cannot be is refused there, naming the file and the field."""

import json
import re
import zipfile

import keras
import numpy as np
import pytest

from engine import Input, Model, ModelFormatError, load_model
from layers import Dense

X, Y = np.ones((4, 4), "float32"), {"a": np.ones((4, 2), "float32"), "b": np.ones((4, 1), "float32")}


def double_error(y_true, y_pred):
    return keras.ops.mean(2 * (y_true - y_pred), axis=-1)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``{".keras": path, ".nw": path}``: the same two-output model compiled
    with a loss and metrics per output, saved by Keras 3 and by nodeweave."""
    folder = tmp_path_factory.mktemp("compiled")
    x = keras.Input((4,), name="x")
    model = keras.Model(x, {"a": keras.layers.Dense(2, name="a")(x), "b": keras.layers.Dense(1, name="b")(x)})
    model.compile(optimizer="adam", loss={"a": "mse", "b": "mae"}, weighted_metrics={"a": ["mse"]},
                  metrics={"a": ["mae", keras.metrics.AUC()], "b": ["acc", double_error]})
    model.save(folder / "m.keras")
    ours_x = Input((4,), name="x")
    ours = Model(ours_x, {"a": Dense(2, name="a")(ours_x), "b": Dense(1, name="b")(ours_x)})
    ours.compile(optimizer="adam", loss={"a": "mse", "b": "mae"}, metrics={"a": ["mae", "auc"], "b": ["acc"]},
                 weighted_metrics={"a": ["mse"]})
    ours.save(folder / "m.nw")
    return {".keras": folder / "m.keras", ".nw": folder / "m.nw"}


def with_compile_config(path, tmp_path, edit):
    """A copy of the model file ``path`` whose config.json's compile_config went through ``edit``."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    config = json.loads(members["config.json"])
    edit(config["compile_config"])
    members["config.json"] = json.dumps(config).encode()
    target = tmp_path / f"edited{path.suffix}"
    with zipfile.ZipFile(target, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return target


def _metrics_a(config):
    return config["metrics"]["a"]


@pytest.mark.parametrize("suffix", [".nw", ".keras"])
@pytest.mark.parametrize("edit, field", [
    pytest.param(lambda c: c.update(metrics=["not_a_metric"]), r"compile_config\.metrics\[0\] is 'not_a_metric'",
                 id="metric in a list"),
    pytest.param(lambda c: _metrics_a(c).append("not_a_metric"),
                 r"compile_config\.metrics\['a'\]\[2\] is 'not_a_metric'", id="metric in a list per output"),
    pytest.param(lambda c: c["metrics"].update(b="not_a_metric"), r"compile_config\.metrics\['b'\] is 'not_a_metric'",
                 id="metric per output"),
    pytest.param(lambda c: c.update(weighted_metrics=["mse", "not_a_metric"]),
                 r"compile_config\.weighted_metrics\[1\] is 'not_a_metric'", id="weighted metric"),
    pytest.param(lambda c: c["loss"].update(b="not_a_loss"), r"compile_config\.loss\['b'\] is 'not_a_loss'",
                 id="loss per output"),
    pytest.param(lambda c: _metrics_a(c).__setitem__(0, {"class_name": "NotAMetric", "config": {}}),
                 r"compile_config\.metrics\['a'\]\[0\] is \{'class_name': 'NotAMetric'", id="metric class"),
])
def test_an_unknown_loss_or_metric_is_refused_at_load_naming_the_file_and_field(files, tmp_path, suffix, edit, field):
    path = with_compile_config(files[suffix], tmp_path, edit)
    with pytest.raises(ModelFormatError) as refused:
        load_model(path, custom_objects={"double_error": double_error})
    message = str(refused.value)
    assert f"The compile_config of {str(path)!r} cannot be applied: " in message
    assert re.search(field, message), message
    assert "Unknown" in message and "compile=False" in message
    model = load_model(path, compile=False, custom_objects={"double_error": double_error})
    assert model(X)["a"].shape == (4, 2)


@pytest.mark.parametrize("suffix", [".nw", ".keras"])
def test_the_metrics_a_file_names_are_made_at_load_and_evaluate_reports_them(files, suffix):
    model = load_model(files[suffix], custom_objects={"double_error": double_error})
    logs = model.evaluate(X, Y, verbose=0, return_dict=True)
    assert {"loss", "a_loss", "b_loss", "a_mae", "b_acc"} <= set(logs), logs
    assert any(name.startswith("a_auc") for name in logs), logs  # Keras numbers a second AUC of the process
    if suffix == ".keras":
        assert "b_double_error" in logs and np.isfinite(logs["b_double_error"])


def test_a_keras_metric_function_needs_custom_objects(files):
    with pytest.raises(ModelFormatError, match=r"compile_config\.metrics\['b'\]\[1\] is 'double_error': .* "
                                               r"custom_objects=\{'double_error': fn\}"):
        load_model(files[".keras"])


def test_an_unknown_optimizer_is_named_too(files, tmp_path):
    path = with_compile_config(files[".nw"], tmp_path, lambda c: c.update(optimizer="not_an_optimizer"))
    with pytest.raises(ModelFormatError, match=r"compile_config\.optimizer is 'not_an_optimizer'"):
        load_model(path)


def test_metrics_that_do_not_fit_the_outputs_are_refused_naming_the_file(files, tmp_path):
    path = with_compile_config(files[".nw"], tmp_path, lambda c: c.update(metrics={"no_such_output": ["mae"]}))
    with pytest.raises(ModelFormatError, match=r"The compile_config of '.*edited\.nw' cannot be applied: its "
                                               r"arguments do not fit the model: .*no_such_output"):
        load_model(path)
