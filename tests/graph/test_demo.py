"""The README's main job: the digits CNN trains to a useful accuracy (behaviour, not timing)."""

from engine.utils import set_random_seed
from graph import demo
from graph.demo import build_digits_model, load_digits_split


def test_digits_cnn_has_a_branch_and_learns_the_digits():
    set_random_seed(0)
    (x_train, y_train), (x_test, y_test) = load_digits_split()
    model = build_digits_model()
    merge = model.get_layer("merge")
    assert [layer.name for layer in merge.inbound_nodes[0].inbound_layers] == ["branch_3x3", "branch_1x1"]
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, epochs=8, batch_size=32, verbose=0)
    _, accuracy = model.evaluate(x_test, y_test, verbose=0)
    assert accuracy > 0.95


def test_without_dot_the_graph_is_still_drawn_and_the_view_written(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` on PATH
    monkeypatch.setattr(demo, "OUTPUT", tmp_path)
    image, view = demo._draw(build_digits_model())
    assert image == tmp_path / "digits_cnn.png" and image.read_bytes().startswith(b"\x89PNG")
    page = view.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and '"merge"' in page and "FLOPs" in page
