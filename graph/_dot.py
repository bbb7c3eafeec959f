"""The drawing behind ``model_to_dot``: a ``graph._scene.Scene`` as a ``graphviz.Digraph``.

``graph._scene`` decides what is drawn (boxes, clusters, edges, legend); this
module only writes it in DOT. A cluster's title is a box of its own beside the
cluster's first box rather than graphviz's cluster label, which the edges
entering the cluster cross. Ids in the DOT source are the keys of
``graph._walk`` (``dense``, ``outer/inner/dense``, ``dense[1]``; ``%`` and
``:`` escaped). The ids of titles, of the legend and of the stand-ins for boxes
left out by a layer range hold a bare ``%/``, which no escaped key does (they
cannot start with ``%``: graphviz renames such ids in what it draws).
"""

import html

import graphviz

from graph._scene import format_value

_FONT = "Helvetica"
_MUTED = "gray40"
LEGEND_ID = "legend%/"


def scene_to_dot(scene, name, rankdir="TB", dpi=None) -> graphviz.Digraph:
    """Writes ``scene`` as a ``graphviz.Digraph`` named ``name``.

    Example:
        >>> from graph._scene import Box, Edge, Scene
        >>> scene = Scene({"a": Box("a", ((("a", True),),)), "b": Box("b", ((("b", False),),))}, {},
        ...               [Edge("a", "b")])
        >>> print(scene_to_dot(scene, "g").source.splitlines()[-1])
        }
    """
    graph_attr = {"rankdir": rankdir, "fontname": _FONT}
    if dpi is not None:
        graph_attr["dpi"] = str(dpi)
    dot = graphviz.Digraph(name=name, graph_attr=graph_attr,
                           node_attr={"shape": "box", "style": "rounded", "fontname": _FONT},
                           edge_attr={"fontname": _FONT, "fontsize": "10"})
    clusters = {key: _cluster(cluster) for key, cluster in scene.clusters.items()}
    for box in scene.boxes.values():
        if not box.muted:
            fill = {} if box.fill is None else {"style": "rounded,filled", "fillcolor": box.fill}
            (dot if box.cluster is None else clusters[box.cluster]).node(_dot_id(box.key), label=_html(box.label),
                                                                          **fill)
    for key, cluster in scene.clusters.items():
        if cluster.first is not None:
            with clusters[key].subgraph() as row:
                row.attr(rank="same")
                row.node(_title_id(key))
                row.node(_dot_id(cluster.first))
    # Attach the deepest clusters first, so that each is complete when copied into its parent.
    depths = {}
    for key, cluster in scene.clusters.items():
        depths[key] = 0 if cluster.parent is None else depths[cluster.parent] + 1
    for key in sorted(scene.clusters, key=lambda key: -depths[key]):
        parent = scene.clusters[key].parent
        (dot if parent is None else clusters[parent]).subgraph(clusters[key])
    drawn = set()
    for edge in scene.edges:
        if not edge.muted:
            dot.edge(_dot_id(edge.source), _dot_id(edge.target))
            continue
        if edge.source not in drawn:
            drawn.add(edge.source)
            dot.node(_outside_id(edge.source), label=_html(scene.boxes[edge.source].label), shape="plaintext",
                     fontcolor=_MUTED)
        dot.edge(_outside_id(edge.source), _dot_id(edge.target), style="dashed", color=_MUTED)
    if scene.legend is not None:
        dot.node(LEGEND_ID, label=_legend_table(scene.legend), shape="plaintext")
    return dot


def _cluster(cluster):
    style = "dashed,rounded" if cluster.dashed else "rounded"
    drawn = graphviz.Digraph(name=f"cluster_{_dot_id(cluster.key)}", graph_attr={"style": style, "color": _MUTED})
    drawn.node(_title_id(cluster.key), label=_html(cluster.title), shape="plaintext")
    return drawn


def _html(label):
    """A scene label as a graphviz HTML-like label: bold runs in ``<b>``, lines joined by ``<br/>``."""
    lines = ("".join(f"<b>{html.escape(text)}</b>" if bold else html.escape(text) for text, bold in line)
             for line in label)
    return "<" + "<br/>".join(lines) + ">"


def _legend_table(legend):
    """The legend as an HTML-like table: its title, then one row per stop, a swatch of its colour and its value."""
    rows = "".join(f'<tr><td bgcolor="{colour}" width="24"> </td><td align="left">{format_value(value)}</td></tr>'
                   for value, colour in legend.stops)
    return (f'<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">'
            f'<tr><td colspan="2"><b>{html.escape(legend.title)}</b></td></tr>{rows}</table>>')


def _title_id(key):
    return f"title%/{_dot_id(key)}"


def _outside_id(key):
    return f"from%/{_dot_id(key)}"


def _dot_id(key):
    """``key`` safe as a DOT edge end, where ``:`` would start a port name."""
    return key.replace("%", "%25").replace(":", "%3A")
