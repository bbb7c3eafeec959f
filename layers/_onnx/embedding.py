"""ONNX converter of Embedding: a Gather of the rows (the mask of ``mask_zero`` is not exported)."""

from layers._onnx import onnx_converter
from layers.embedding import Embedding


@onnx_converter(Embedding)
def embedding(layer, call):
    """Gather on axis 0 of the embeddings; float and bool indices are cast to int64 first, as the layer does."""
    indices = call.input
    if call.input_dtypes[0] not in ("int32", "int64"):
        indices = call.cast(indices, "int64")
    return call.op("Gather", [call.weight(layer.embeddings), indices], axis=0)
