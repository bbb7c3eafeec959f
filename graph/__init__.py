"""Looking at graphs: drawing, querying and summarizing models."""

from graph.display import summary_html
from graph.model_summary import summary, summary_text
from graph.networkx_graph import to_networkx
from graph.plot import model_to_dot, plot_model
from graph.profiler import Profile, profile
from graph.tabular import print_tabular

__all__ = [
    "Profile",
    "model_to_dot",
    "plot_model",
    "print_tabular",
    "profile",
    "summary",
    "summary_html",
    "summary_text",
    "to_networkx",
]
