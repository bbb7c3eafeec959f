"""Every notebook in notebooks/ runs from top to bottom without an error."""

import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch, tmp_path):
    # The kernel is started as `python`: make it this environment's interpreter.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [output for cell in notebook.cells for output in cell.get("outputs", [])]
    assert not [output for output in outputs if output.output_type == "error"]
    streams = "".join(output.get("text", "") for output in outputs if output.output_type == "stream")
    assert "TqdmWarning" not in streams and "IProgress not found" not in streams
    if path.stem == "03_training":  # fit prints one line per epoch where nobody watches a live bar
        assert all(f"Epoch {epoch}/8" in streams for epoch in range(1, 9))
        # ...and ends by running its ONNX export in ONNX Runtime, which agrees with predict
        difference = re.search(r"largest difference from predict: (\S+)", streams)
        assert difference and float(difference.group(1)) <= 1e-4, streams[-500:]
        assert "same digit predicted for 100% of" in streams
    if path.stem == "05_inspect_and_edit":  # the extracted parts, the edits and the code give back what they should
        assert "True\nTrue\n" in streams and "False" not in streams
        assert "5 added, 0 removed" in streams


def test_there_are_the_five_notebooks():
    assert [p.stem for p in NOTEBOOKS] == ["01_functional_api", "02_connectivity", "03_training", "04_custom_layers",
                                           "05_inspect_and_edit"]
