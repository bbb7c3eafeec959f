"""Every benchmark runs at its smallest size and writes its fields (timings are not checked)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.__main__ import BENCHMARKS
from benchmarks.harness import measure, summarize

ROOT = Path(__file__).parents[2]
ROW_FIELDS = {
    "graph_build": {"depth", "nodeweave_us_per_layer", "keras_us_per_layer"},
    "graph_width": {"width", "nodeweave_us_per_branch", "keras_us_per_branch"},
    "inference": {"batch", "seconds", "ratio_to_numpy", "keras_ratio_to_numpy", "goal"},
    "memory": {"depth", "peak_mb", "activation_mb"},
    "layer_speed": {"layer", "seconds", "ratio_to_numpy", "goal"},
    "layer_families": {"case", "seconds", "ratio_to_torch", "goal"},
    "training": {"model", "nodeweave_seconds_per_epoch", "nodeweave_test_accuracy", "torch_seconds_per_epoch", "goal"},
    "saving": {"model", "save_seconds", "load_seconds", "file_bytes"},
    "hostile_loads": {"case"},
    "autodiff": {"case", "seconds", "ratio", "goal"},
    "dask_scoring": {"model", "samples", "in_memory_samples_per_s", "dask_threads_samples_per_s",
                     "local_cluster_samples_per_s", "block_generation_samples_per_s"},
    "streaming_memory": {"data", "array_mb", "seconds", "peak_mb"},
    "keras_apps": {"case", "seconds", "ratios"},
    "repeats": {"layers", "seconds", "new_ms_per_1000_layers"},
    "static_layout": {"graph", "layers", "edges", "built_in", "dot_seconds"},
    "html_view": {"graph", "layers", "to_html_seconds", "first_render_seconds", "page_kb"},
    "onnx_export": {"model", "to_onnx_seconds", "save_onnx_seconds", "goal", "file_bytes", "weight_bytes"},
    "to_python": {"model", "layers", "to_python_seconds", "run_source_seconds", "goal", "same_config_but_names"},
    "surgery": {"model", "layers", "edit", "seconds", "goal", "new_layers"},
    "model_diff": {"layers", "case", "seconds", "goal_seconds", "added", "changed"},
    "rnn_speed": {"case", "units", "return_sequences", "seconds", "ratio_to_torch", "goal"},
    "training_steps": {"case", "batch", "seconds", "ratio_to_torch", "goal", "peak_rss_mb"},
    "conv_speed": {"case", "batch", "seconds", "cpu_seconds", "ratio_to_torch", "goal"},
    "norm_pool_speed": {"case", "seconds", "ratio_to_torch", "goal", "peak_mb"},
    "keras_test_parity": {"file", "collected", "not_applicable", "passed", "failed", "pass_rate"},
}


def test_every_benchmark_has_its_fields_listed():
    assert set(BENCHMARKS) == set(ROW_FIELDS)


@pytest.mark.slow  # a Python process each, importing the benchmark's libraries: 3-35 s
@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_smoke_run_writes_its_fields(name, tmp_path):
    env = {**os.environ, "NODEWEAVE_BENCH_RESULTS": str(tmp_path)}
    subprocess.run([sys.executable, "-m", f"benchmarks.{name}", "--smoke"], cwd=ROOT, env=env, check=True,
                   capture_output=True, text=True)
    result = json.loads((tmp_path / f"{name}.json").read_text())
    assert result["benchmark"] == name and result["date"]
    assert {"cores", "threads", "blas", "numpy"} <= set(result["machine"])
    assert result["rows"] and all(ROW_FIELDS[name] <= set(row) for row in result["rows"])


def test_measure_alternates_contenders_and_reports_median_and_spread():
    calls = []
    result = measure({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeats=3, warmup=1)
    assert calls == ["a", "b"] * 4
    assert set(result) == {"a", "b"} and set(result["a"]) == {"median", "min", "max"}
    assert summarize([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0}


def test_unknown_benchmark_names_are_refused():
    run = subprocess.run([sys.executable, "-m", "benchmarks", "nope"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode != 0 and "Unknown benchmark(s) ['nope']" in run.stderr
