"""Model-level conveniences: summary, notebook display, frozen sub-layers."""

import numpy as np
import pytest

from engine import Input, Model, Sequential, clone_model
from layers import Dense


def _model():
    x = Input(shape=(3,), name="x")
    return Model(x, Dense(2, name="out")(Dense(4, name="hidden")(x)), name="tiny")


def test_summary_prints_the_graph_table():
    from graph import summary_text

    lines = []
    model = _model()
    model.summary(print_fn=lines.append)
    assert "\n".join(lines) == summary_text(model)
    assert any("hidden (Dense)" in line for line in lines)


def test_notebook_display_is_the_view_with_a_picture_by_dot_or_the_built_in_layout(monkeypatch):
    bundle = _model()._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/svg+xml", "text/plain"} and "Total params" in bundle["text/plain"]
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml") and "hidden" in bundle["image/svg+xml"]
    assert '"hidden"' in bundle["text/html"]
    monkeypatch.setenv("PATH", "/nonexistent")
    bundle = _model()._repr_mimebundle_()
    assert bundle["image/svg+xml"].startswith("<svg") and "hidden" in bundle["image/svg+xml"]
    assert set(Sequential([Dense(2)])._repr_mimebundle_()) == {"text/plain"}


def test_frozen_sub_layers_leave_the_trainable_weights():
    model = _model()
    model.get_layer("hidden").trainable = False
    assert [v.path for v in model.trainable_weights] == ["out/kernel", "out/bias"]
    assert [v.path for v in model.non_trainable_weights] == ["hidden/kernel", "hidden/bias"]
    model.get_layer("hidden").trainable = True
    assert len(model.trainable_weights) == 4
    np.testing.assert_array_equal(model.get_weights()[0], model.get_layer("hidden").kernel.value)


def test_compiled_says_whether_compile_ran_and_a_clone_keeps_it():
    model = _model()
    assert model.compiled is False and clone_model(model).compiled is False
    model.compile(optimizer="adam", loss="mse")
    assert model.compiled is True and clone_model(model).compiled is True


def test_export_names_an_unrecognized_format_and_the_one_it_supports(tmp_path):
    with pytest.raises(ValueError, match=r"Unrecognized format='tf_saved_model': Model.export supports format='onnx'"):
        _model().export(tmp_path / "model", format="tf_saved_model")
