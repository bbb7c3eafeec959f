"""fit's progress: one line per epoch wherever the output is kept (a pipe, a file, a
notebook without widgets), a live bar in a terminal and a widget that leaves text."""

import io
import json
import os
import re
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

from engine import Input, Model
from layers import Dense

EPOCHS, SAMPLES, BATCH = 3, 40, 8  # 32 training samples: 4 steps per epoch


class FakeTerminal(io.StringIO):
    """An output a person watches: ``isatty()`` is True."""

    def isatty(self):
        return True


def _fit(stdout, monkeypatch, verbose=1):
    monkeypatch.setattr(sys, "stdout", stdout)
    x = Input(shape=(3,))
    model = Model(x, Dense(2, activation="softmax")(x))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    rng = np.random.default_rng(0)
    history = model.fit(rng.normal(size=(SAMPLES, 3)), rng.integers(0, 2, SAMPLES), epochs=EPOCHS, batch_size=BATCH,
                        validation_split=0.2, verbose=verbose)
    return history.history, stdout.getvalue()


def _assert_one_line_per_epoch(text, history):
    lines = text.splitlines()
    assert len(lines) == EPOCHS and "\r" not in text
    for epoch, line in enumerate(lines):
        assert line.startswith(f"Epoch {epoch + 1}/{EPOCHS} - ") and "ms/step - " in line
        for name in ("accuracy", "loss", "val_accuracy", "val_loss"):
            assert f" - {name}: {history[name][epoch]:.4f}" in line


@pytest.mark.parametrize("verbose", [1, 2])
def test_into_a_pipe_each_epoch_is_one_line_with_its_metrics(monkeypatch, capfd, verbose):
    history, text = _fit(io.StringIO(), monkeypatch, verbose)
    _assert_one_line_per_epoch(text, history)
    assert capfd.readouterr().err == ""  # nothing on stderr either


def test_a_process_that_imported_ipykernel_without_being_a_kernel_still_prints_lines(monkeypatch):
    import ipykernel.ipkernel  # noqa: F401  (Keras' test, "ipykernel" in sys.modules, would now draw a bar)

    history, text = _fit(io.StringIO(), monkeypatch)
    _assert_one_line_per_epoch(text, history)


def test_in_a_terminal_verbose_1_draws_the_live_bar_and_verbose_2_prints_lines(monkeypatch):
    history, text = _fit(FakeTerminal(), monkeypatch)
    assert text.count("\r") > EPOCHS  # redrawn in place
    for epoch in range(EPOCHS):
        assert re.search(rf"\rEpoch {epoch + 1}/{EPOCHS}: 100%\|\S+\| 4/4 \[", text)
        assert f"val_loss: {history['val_loss'][epoch]:.4f}" in text  # the epoch's summary stays on its bar
    history, text = _fit(FakeTerminal(), monkeypatch, verbose=2)
    _assert_one_line_per_epoch(text, history)


def _run_in_a_kernel(tmp_path, monkeypatch, setup):
    """Runs fit(verbose=1) in a notebook kernel as nbclient does (no widget
    JavaScript); returns the cell's saved outputs and the epochs' losses."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    code = f"""{setup}
import json
import numpy as np
from engine import Input, Model
from layers import Dense
x = Input(shape=(3,))
model = Model(x, Dense(2, activation="softmax")(x))
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
rng = np.random.default_rng(0)
history = model.fit(rng.normal(size=({SAMPLES}, 3)), rng.integers(0, 2, {SAMPLES}), epochs={EPOCHS},
                    batch_size={BATCH}, validation_split=0.2)"""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code),
                                               nbformat.v4.new_code_cell("print(json.dumps(history.history))")])
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.validate(notebook)
    fit_outputs, (history,) = notebook.cells[0].outputs, notebook.cells[1].outputs
    return fit_outputs, json.loads(history.text)


def _assert_the_saved_outputs_read_one_line_per_epoch(outputs, history):
    assert not [output for output in outputs if output.output_type == "error"]
    streams = [output for output in outputs if output.output_type == "stream"]
    assert {output.name for output in streams} == {"stdout"}
    _assert_one_line_per_epoch("".join(output.text for output in streams), history)
    saved = json.dumps(outputs)
    assert "0%|" not in saved and "widget-view" not in saved and "\\r" not in saved


def test_a_notebook_without_ipywidgets_keeps_one_line_per_epoch(tmp_path, monkeypatch):
    setup = "import sys; sys.modules['ipywidgets'] = None  # as if not installed"
    outputs, history = _run_in_a_kernel(tmp_path, monkeypatch, setup)
    _assert_the_saved_outputs_read_one_line_per_epoch(outputs, history)
    assert all(output.output_type == "stream" for output in outputs)


def test_a_notebook_with_ipywidgets_replaces_each_widget_bar_by_the_epochs_line(tmp_path, monkeypatch):
    pytest.importorskip("ipywidgets")
    outputs, history = _run_in_a_kernel(tmp_path, monkeypatch, "import ipywidgets")
    _assert_the_saved_outputs_read_one_line_per_epoch(outputs, history)
    bars = [output for output in outputs if output.output_type == "display_data"]
    assert len(bars) == EPOCHS and all(bar.data == {"text/plain": ""} for bar in bars)  # blanked, not left behind
