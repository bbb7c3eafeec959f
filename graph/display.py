"""Notebook renderings: what Jupyter shows for a Model, a Layer, a Node and a KerasTensor.

Each ``*_bundle`` function returns the mime bundle that the object's
``_repr_mimebundle_`` hands to Jupyter, always with the object's plain text as
``text/plain`` beside the rich type. Nothing here runs until a notebook
displays the object. Every user string in HTML goes through ``html.escape``;
graphviz escapes its own SVG.

A Model shows the interactive view of its graph (``graph.html_view``, as
``text/html``: groups that open, search, cards) with a static picture of it
beside it in the same bundle (``image/svg+xml``, drawn by ``dot`` or the
built-in layout), which a viewer that runs no JavaScript shows instead. Both
are bounded however big the model: the view starts with its groups closed in
a frame of fixed height, and the picture shows runs of identical blocks once
and is scaled to fit ``MAX_PICTURE_POINTS``. Its summary as HTML is
``summary_html``, on request.
"""

import html
import re

from graph._format import shapes_text, tensor_ref
from graph._scene import build_scene
from graph._walk import Call, ancestry, plan_of
from graph.html_view import to_html
from graph.model_summary import summary_table, summary_text
from graph.plot import scene_svg, static_svg

# The largest width and height, in points, of the static picture of a model in a notebook: a
# bigger drawing is scaled down to fit (MobileNetV2 drawn whole is 15,000 pixels tall).
MAX_PICTURE_POINTS = 1000


def model_bundle(model) -> dict:
    """A model's interactive view (HTML) and static picture (SVG), with its text
    summary; the summary alone for a model without a graph of calls.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> sorted(model_bundle(Model(x, Dense(2)(x))))
        ['image/svg+xml', 'text/html', 'text/plain']
    """
    text = summary_text(model)
    if plan_of(model) is None:
        return {"text/plain": text}
    picture = bounded(static_svg(model, show_shapes=True, collapse_repeats=True), MAX_PICTURE_POINTS)
    return {"text/html": to_html(model), "image/svg+xml": picture, "text/plain": text}


def bounded(svg, points) -> str:
    """``svg`` with its width and height scaled down, keeping its proportions (its
    ``viewBox`` keeps the drawing whole), so that neither exceeds ``points``.

    Example:
        >>> bounded('<svg width="400pt" height="4000pt" viewBox="0 0 400 4000"></svg>', 1000)
        '<svg width="100pt" height="1000pt" viewBox="0 0 400 4000"></svg>'
    """
    size = re.search(r'<svg[^>]*?\swidth="([\d.]+)pt" height="([\d.]+)pt"', svg)
    width, height = float(size.group(1)), float(size.group(2))
    scale = min(1.0, points / max(width, height, 1.0))
    if scale == 1.0:
        return svg
    start, end = size.span(1)[0], size.span(2)[1]
    return f'{svg[:start]}{width * scale:.0f}pt" height="{height * scale:.0f}{svg[end:]}'


def layer_bundle(layer) -> dict:
    """An HTML card of a layer: name, class, built state, one row per call
    (``dense[1]``: inputs as ``layer[node_index][tensor_index]``, shapes in
    and out, outputs) and one per weight (path, shape, dtype, trainable).

    Example:
        >>> from engine import Input
        >>> from layers import Dense
        >>> dense = Dense(2, name="d")
        >>> _ = dense(Input(shape=(3,), name="x"))
        >>> "<td>x[0][0]</td>" in layer_bundle(dense)["text/html"]
        True
    """
    calls = [Call(node, None, node.input_tensors) for node in layer.inbound_nodes]
    call_rows = [[call.call_name, _refs(call.reads), f"{_shapes(call.reads)} → {_shapes(call.outputs)}",
                  _refs(call.outputs)] for call in calls]
    trainable = {id(v) for v in layer.trainable_weights}
    weight_rows = [[v.path, str(v.shape), str(v.dtype), "Y" if id(v) in trainable else "N"]
                   for v in layer.weights]
    state = f"built, {layer.count_params():,} params" if layer.built else "not built"
    parts = [_title(layer.name, type(layer).__name__, state),
             _table("Calls", ["Call", "Inputs", "Shapes", "Outputs"], call_rows, "not called on symbolic tensors"),
             _table("Weights", ["Path", "Shape", "Dtype", "Trainable"], weight_rows, "no weights")]
    return {"text/html": _card(parts), "text/plain": repr(layer)}


def node_bundle(node) -> dict:
    """An HTML card of a Node: the layer it calls, then per input tensor its
    inbound layer, ``node_indices`` and ``tensor_indices`` entries and shape,
    then the output tensors.

    Example:
        >>> from engine import Input
        >>> from layers import Dense
        >>> y = Dense(2, name="d")(Input(shape=(3,), name="x"))
        >>> "<td>(None, 2)</td>" in node_bundle(y._keras_history.layer.inbound_nodes[0])["text/html"]
        True
    """
    call = Call(node, None, node.input_tensors)
    input_rows = [["-" if layer is None else layer.name, str(node_index), str(tensor_index), tensor_ref(t),
                   str(t.shape)]
                  for t, layer, node_index, tensor_index in zip(node.input_tensors, node.inbound_layers,
                                                                 node.node_indices, node.tensor_indices)]
    output_rows = [[tensor_ref(t), str(t.shape), t.dtype] for t in node.output_tensors]
    layer = node.outbound_layer
    parts = [_title(f"Node {call.call_name}", type(layer).__name__, f"a call of layer {layer.name}"),
             _table("Inputs", ["Inbound layer", "Node index", "Tensor index", "Tensor", "Shape"], input_rows,
                    "none: an input node"),
             _table("Outputs", ["Tensor", "Shape", "Dtype"], output_rows, "none")]
    return {"text/html": _card(parts), "text/plain": repr(node)}


def tensor_bundle(tensor) -> dict:
    """The calls a KerasTensor's value depends on, back to the Inputs, as SVG
    (one box per call, ``dense[1]``; drawn by ``dot`` or the built-in layout),
    with a text naming the call that made it. A tensor made directly shows text only.
    Nothing is recorded on the graph: no model is built.

    Example:
        >>> from engine import Input
        >>> from layers import Dense
        >>> bundle = tensor_bundle(Dense(2, name="d")(Input(shape=(3,), name="x")))
        >>> bundle["text/plain"].splitlines()[1]
        'made by d[0] (Dense), output 0'
    """
    layer, node_index, tensor_index = tensor._keras_history or (None, 0, 0)
    if layer is None:
        return {"text/plain": f"{tensor!r}\nmade directly: no layer call made it"}
    text = f"{tensor!r}\nmade by {layer.name}[{node_index}] ({type(layer).__name__}), output {tensor_index}"
    svg = scene_svg(build_scene(ancestry(tensor), per_call=True, show_shapes=True), tensor.name)
    return {"image/svg+xml": bounded(svg, MAX_PICTURE_POINTS), "text/plain": text}


def summary_html(model, expand_nested=False, show_trainable=False) -> str:
    """The summary of ``model`` as an HTML table: the rows and columns of
    ``model.summary()``, then the parameter totals.

    A Model cell shows the graph; show this with
    ``IPython.display.HTML(summary_html(model))``.

    Args:
        model: a model, as for ``summary``.
        expand_nested: add the rows of nested models' layers, indented.
        show_trainable: add the "Trainable" column.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> text = summary_html(Model(x, Dense(2, name="d")(x), name="tiny"))
        >>> "<td>d (Dense)</td><td>(None, 2)</td><td>8</td>" in text
        True
    """
    header, rows, totals = summary_table(model, expand_nested, show_trainable)
    parts = [_title(model.name, type(model).__name__, "model"), _table(None, header, rows, "no layers"),
             *(f"<p>{html.escape(total)}</p>" for total in totals)]
    return _card(parts)


def _refs(tensors):
    return ", ".join(tensor_ref(t) for t in tensors) or "-"


def _shapes(tensors):
    return shapes_text(tensors) if tensors else "-"


def _card(parts):
    return '<div class="nodeweave">' + "".join(parts) + "</div>"


def _title(name, class_name, state):
    return (f"<p><b>{html.escape(name)}</b> ({html.escape(class_name)}): "
            f"{html.escape(state)}</p>")


def _table(caption, header, rows, empty):
    """An HTML table of text cells (escaped here), or ``empty`` in a paragraph when there are no rows."""
    title = "" if caption is None else f"<b>{html.escape(caption)}</b>: "
    if not rows:
        return f"<p>{title}{html.escape(empty)}</p>"
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    caption_tag = "" if caption is None else f"<caption>{html.escape(caption)}</caption>"
    return f"<table>{caption_tag}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
