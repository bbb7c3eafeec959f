"""What ``graph`` lends the engine, which cannot import it (``engine.extensions``): the notebook displays of
models, layers, Nodes and tensors, ``Model.summary`` and ``Model.export``."""

from engine import extensions
from graph.display import layer_bundle, model_bundle, node_bundle, tensor_bundle
from graph.model_summary import summary
from graph.onnx_export import save_onnx

extensions.provide("model_display", model_bundle)
extensions.provide("layer_display", layer_bundle)
extensions.provide("node_display", node_bundle)
extensions.provide("tensor_display", tensor_bundle)
extensions.provide("model_summary", summary)
extensions.provide("onnx_export", save_onnx)
