"""Looking at graphs: drawing, viewing, querying, summarizing and exporting models."""

from graph import extensions  # noqa: F401  (lends the engine its displays, summary and export)
from graph.diff import ModelDiff, diff
from graph.display import summary_html
from graph.extract import extract
from graph.html_view import save_html, to_html
from graph.mermaid import to_mermaid
from graph.model_explorer import save_model_explorer, to_model_explorer
from graph.model_summary import summary, summary_text
from graph.networkx_graph import to_networkx
from graph.onnx_export import OnnxExportError, save_onnx, to_onnx
from graph.plot import model_to_dot, plot_model, static_svg
from graph.profiler import Profile, profile
from graph.surgery import insert_after, insert_before, remove, replace, replace_pattern, rewire
from graph.tabular import print_tabular
from graph.to_python import to_python
from layers._onnx import register_onnx_converter

__all__ = [
    "ModelDiff",
    "OnnxExportError",
    "Profile",
    "diff",
    "extract",
    "insert_after",
    "insert_before",
    "model_to_dot",
    "plot_model",
    "print_tabular",
    "profile",
    "register_onnx_converter",
    "remove",
    "replace",
    "replace_pattern",
    "rewire",
    "save_html",
    "save_model_explorer",
    "save_onnx",
    "static_svg",
    "summary",
    "summary_html",
    "summary_text",
    "to_html",
    "to_mermaid",
    "to_model_explorer",
    "to_networkx",
    "to_onnx",
    "to_python",
]
