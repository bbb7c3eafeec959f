"""Text forms shared by the views: shapes, tensor references and byte sizes."""


def shapes_text(tensors):
    """``(None, 8)`` for one tensor, ``[(None, 1), (None, 4)]`` for several."""
    shapes = [str(t.shape) for t in tensors]
    return shapes[0] if len(shapes) == 1 else f"[{', '.join(shapes)}]"


def tensor_ref(tensor):
    """``dense[1][0]``: the layer, node index and tensor index that made ``tensor``
    (its name for a tensor made directly, which no layer made)."""
    layer, node_index, tensor_index = tensor._keras_history or (None, 0, 0)
    return tensor.name if layer is None else f"{layer.name}[{node_index}][{tensor_index}]"


def merged(texts):
    """The distinct texts in order of first appearance, joined by ``"; "`` (one per call of a layer)."""
    return "; ".join(dict.fromkeys(texts))


def readable_size(num_bytes):
    """``3.33 KB`` for 3,412 bytes, with Keras' units (powers of 1024)."""
    size = float(num_bytes)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"
