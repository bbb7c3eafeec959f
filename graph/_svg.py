"""A laid-out scene as SVG text, and as PNG through resvg: the built-in drawing used without ``dot``.

Every box, cluster, title and edge is an element of its own that says what it
is: a box's ``<g class="box">`` holds ``data-key`` (its walk key), an edge's
``<g class="edge">`` holds ``data-source`` and ``data-target``, so a picture can
be checked, or read by a script, without parsing coordinates. Text is drawn in
Helvetica (or the closest sans-serif there is) and each line is held to the
width measured for it (``textLength``), so it fits its box in any font. All
text is escaped.
"""

import html

from graph._layout import (
    FONT_SIZE,
    LINE_HEIGHT,
    PAD_X,
    PAD_Y,
    SWATCH,
    layout_scene,
    text_width,
)
from graph._scene import format_value

_FONTS = "Helvetica,Arial,'Liberation Sans',sans-serif"
_MUTED = "#666666"
_BASELINE = 0.78  # where a line's baseline sits within its height, as a fraction of the font size
_ARROW = ('<marker id="{id}" viewBox="0 0 10 8" refX="10" refY="4" markerWidth="10" markerHeight="8" '
          'markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0L10,4L0,8z" fill="{colour}"/></marker>')


def scene_to_svg(scene, rankdir="TB") -> str:
    """``scene`` laid out by ``graph._layout`` and drawn as an SVG document.

    Example:
        >>> from graph._scene import Box, Edge, Scene
        >>> scene = Scene({"a": Box("a", ((("a<b", True),),)), "b": Box("b", ((("b", False),),))}, {},
        ...               [Edge("a", "b")])
        >>> svg = scene_to_svg(scene)
        >>> svg.startswith("<svg"), "a&lt;b" in svg, svg.count('class="edge"')
        (True, True, 1)
    """
    return layout_to_svg(scene, layout_scene(scene, rankdir))


def layout_to_svg(scene, layout) -> str:
    """``scene`` drawn where ``layout`` (from ``graph._layout.layout_scene``) puts it."""
    width, height = layout.width, layout.height
    header = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}pt" height="{height:.0f}pt" '
              f'viewBox="0 0 {width:.2f} {height:.2f}" font-family="{_FONTS}" font-size="{FONT_SIZE:g}">')
    markers = _ARROW.format(id="arrow", colour="black") + _ARROW.format(id="arrow-muted", colour=_MUTED)
    parts = [header, f"<defs>{markers}</defs>", f'<rect width="{width:.2f}" height="{height:.2f}" fill="white"/>']
    for key, cluster in scene.clusters.items():
        rect = layout.clusters[key]
        dash = ' stroke-dasharray="5,2"' if cluster.dashed else ""
        parts.append(f'<g class="cluster" data-key="{_attr(key)}">{_rect(rect, "none", _MUTED, dash)}'
                     f'{_lines(cluster.title, layout.titles[key], "black")}</g>')
    for edge, points in zip(scene.edges, layout.edges):
        colour, marker, dash = (_MUTED, "arrow-muted", ' stroke-dasharray="5,2"') if edge.muted else \
            ("black", "arrow", "")
        path = "M" + "L".join(f"{x:.2f},{y:.2f}" for x, y in points)
        parts.append(f'<g class="edge" data-source="{_attr(edge.source)}" data-target="{_attr(edge.target)}">'
                     f'<path d="{path}" fill="none" stroke="{colour}"{dash} marker-end="url(#{marker})"/></g>')
    for key, box in scene.boxes.items():
        rect = layout.boxes[key]
        frame = "" if box.muted else _rect(rect, box.fill or "white", "black", "")
        parts.append(f'<g class="box" data-key="{_attr(key)}">{frame}'
                     f'{_lines(box.label, rect, _MUTED if box.muted else "black")}</g>')
    if scene.legend is not None:
        parts.append(_legend(scene.legend, layout.legend))
    parts.append("</svg>")
    return "\n".join(parts)


def svg_to_png(svg, dpi) -> bytes:
    """The PNG of an SVG from ``layout_to_svg`` at ``dpi`` (its sizes are in points, 72 to the inch).

    Example:
        >>> from graph._scene import Box, Scene
        >>> svg_to_png(scene_to_svg(Scene({"a": Box("a", ((("a", True),),))})), 96)[:8]
        b'\\x89PNG\\r\\n\\x1a\\n'
    """
    import resvg_py

    return bytes(resvg_py.svg_to_bytes(svg_string=svg, dpi=float(dpi), background="white"))


def _rect(rect, fill, stroke, dash):
    return (f'<rect x="{rect.x:.2f}" y="{rect.y:.2f}" width="{rect.width:.2f}" height="{rect.height:.2f}" rx="4" '
            f'fill="{fill}" stroke="{stroke}"{dash}/>')


def _lines(label, rect, colour):
    """A label's lines centred in ``rect``, each held to its measured width."""
    top = rect.y + (rect.height - len(label) * LINE_HEIGHT) / 2
    centre = rect.x + rect.width / 2
    texts = []
    for i, line in enumerate(label):
        baseline = _baseline(top + i * LINE_HEIGHT)
        runs = "".join(_run(text, bold) for text, bold in line)
        texts.append(f'<text x="{centre:.2f}" y="{baseline:.2f}" text-anchor="middle" fill="{colour}" '
                     f'xml:space="preserve">{runs}</text>')
    return "".join(texts)


def _run(text, bold):
    """A run of text held to its measured width (textLength on the whole line would
    be spread over its runs unevenly by some renderers)."""
    weight = ' font-weight="bold"' if bold else ""
    return (f'<tspan{weight} textLength="{text_width(text, bold):.2f}" lengthAdjust="spacingAndGlyphs">'
            f"{_text(text)}</tspan>")


def _legend(legend, rect):
    """The legend: a frame, its title, then per stop a swatch of its colour and its value."""
    parts = [f'<g class="legend">{_rect(rect, "white", _MUTED, "")}',
             _lines((((legend.title, True),),), rect._replace(height=LINE_HEIGHT + 2 * PAD_Y), "black")]
    for i, (value, colour) in enumerate(legend.stops):
        top = rect.y + PAD_Y + (i + 1) * LINE_HEIGHT
        text = format_value(value)
        parts.append(f'<rect x="{rect.x + PAD_X:.2f}" y="{top + 2:.2f}" width="{SWATCH:g}" '
                     f'height="{LINE_HEIGHT - 4:g}" fill="{colour}" stroke="{_MUTED}"/>')
        parts.append(f'<text x="{rect.x + 2 * PAD_X + SWATCH:.2f}" y="{_baseline(top):.2f}">{_run(text, False)}</text>')
    parts.append("</g>")
    return "".join(parts)


def _baseline(top):
    """The baseline of a line of text whose line box starts at ``top``."""
    return top + (LINE_HEIGHT - FONT_SIZE) / 2 + _BASELINE * FONT_SIZE


def _text(text):
    return html.escape(text, quote=False)


def _attr(text):
    return html.escape(text, quote=True)

