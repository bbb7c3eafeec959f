"""A laid-out scene as a vector PDF, written directly: the built-in drawing's PDF, without ``dot``.

The page is the layout's size in points (PDF's own unit), and the text is set in
PDF's standard Helvetica and Helvetica-Bold, which every PDF reader has, so the
file embeds no font and the widths ``graph._layout`` measured are the widths
drawn. The standard fonts hold Windows-1252's characters; any other character
is drawn as ``?``. A page larger than the 14,400 units PDF readers accept is
described in bigger units (``/UserUnit``), at the same size.
"""

import math
import zlib

from graph._layout import (
    FONT_SIZE,
    LINE_HEIGHT,
    PAD_X,
    PAD_Y,
    SWATCH,
    line_width,
    text_width,
)
from graph._scene import format_value

_MUTED = (0.4, 0.4, 0.4)
_LARGEST_PAGE = 14400  # units: the largest page side PDF readers accept
_ARROW_LENGTH, _ARROW_WIDTH = 10.0, 8.0
_CORNER = 4.0  # the radius of a box's rounded corners
_BASELINE = 0.78  # where a line's baseline sits within its height, as a fraction of the font size


def layout_to_pdf(scene, layout) -> bytes:
    """``scene`` drawn where ``layout`` (from ``graph._layout.layout_scene``) puts it, as a one-page PDF.

    Example:
        >>> from graph._layout import layout_scene
        >>> from graph._scene import Box, Edge, Scene
        >>> scene = Scene({"a": Box("a", ((("a", True),),)), "b": Box("b", ((("b", False),),))}, {},
        ...               [Edge("a", "b")])
        >>> pdf = layout_to_pdf(scene, layout_scene(scene))
        >>> pdf[:8], pdf.rstrip().endswith(b"%%EOF")
        (b'%PDF-1.6', True)
    """
    page = _Page(layout.height)
    for key, cluster in scene.clusters.items():
        page.rounded(layout.clusters[key], stroke=_MUTED, dashed=cluster.dashed)
        page.lines(cluster.title, layout.titles[key], (0, 0, 0))
    for edge, points in zip(scene.edges, layout.edges):
        page.polyline(points, _MUTED if edge.muted else (0, 0, 0), dashed=edge.muted)
    for key, box in scene.boxes.items():
        rect = layout.boxes[key]
        if not box.muted:
            page.rounded(rect, stroke=(0, 0, 0), fill=_rgb(box.fill or "#ffffff"))
        page.lines(box.label, rect, _MUTED if box.muted else (0, 0, 0))
    if scene.legend is not None:
        page.legend(scene.legend, layout.legend)
    return _document(page.content(), layout.width, layout.height)


class _Page:
    """A page's content stream, in PDF operators, from coordinates measured down from the top."""

    def __init__(self, height):
        self.height = height
        self.operators = ["1 J 1 j"]

    def rounded(self, rect, stroke, fill=None, dashed=False):
        x, y, w, h = rect.x, self.height - rect.y - rect.height, rect.width, rect.height
        r, k = _CORNER, _CORNER * 0.4477  # k: how far a corner's Bézier handles reach
        path = [f"{x + r:.2f} {y:.2f} m", f"{x + w - r:.2f} {y:.2f} l",
                f"{x + w - k:.2f} {y:.2f} {x + w:.2f} {y + k:.2f} {x + w:.2f} {y + r:.2f} c",
                f"{x + w:.2f} {y + h - r:.2f} l",
                f"{x + w:.2f} {y + h - k:.2f} {x + w - k:.2f} {y + h:.2f} {x + w - r:.2f} {y + h:.2f} c",
                f"{x + r:.2f} {y + h:.2f} l", f"{x + k:.2f} {y + h:.2f} {x:.2f} {y + h - k:.2f} {x:.2f} {y + h - r:.2f} c",
                f"{x:.2f} {y + r:.2f} l", f"{x:.2f} {y + k:.2f} {x + k:.2f} {y:.2f} {x + r:.2f} {y:.2f} c", "h"]
        self.operators.append(f"{_colour(stroke)} RG {'[5 2] 0 d' if dashed else '[] 0 d'}")
        if fill is not None:
            self.operators.append(f"{_colour(fill)} rg")
        self.operators.extend(path)
        self.operators.append("B" if fill is not None else "S")

    def polyline(self, points, colour, dashed):
        """A line through ``points`` with an arrowhead at its end."""
        (x0, y0), (x1, y1) = points[-2], points[-1]
        length = math.hypot(x1 - x0, y1 - y0) or 1.0
        ux, uy = (x1 - x0) / length, (y1 - y0) / length
        base = (x1 - ux * _ARROW_LENGTH, y1 - uy * _ARROW_LENGTH)
        shaft = [*points[:-1], base]
        self.operators.append(f"{_colour(colour)} RG {_colour(colour)} rg {'[5 2] 0 d' if dashed else '[] 0 d'}")
        self.operators.append(" ".join(f"{x:.2f} {self.height - y:.2f} {'m' if i == 0 else 'l'}"
                                       for i, (x, y) in enumerate(shaft)) + " S")
        half = _ARROW_WIDTH / 2
        corners = [(x1, y1), (base[0] - uy * half, base[1] + ux * half), (base[0] + uy * half, base[1] - ux * half)]
        self.operators.append("[] 0 d " + " ".join(f"{x:.2f} {self.height - y:.2f} {'m' if i == 0 else 'l'}"
                                                    for i, (x, y) in enumerate(corners)) + " f")

    def lines(self, label, rect, colour):
        """A label's lines centred in ``rect``, each run in its font."""
        top = rect.y + (rect.height - len(label) * LINE_HEIGHT) / 2
        for i, line in enumerate(label):
            x = rect.x + (rect.width - line_width(line)) / 2
            for text, bold in line:
                self.text(x, top + i * LINE_HEIGHT, text, bold, colour)
                x += text_width(text, bold)

    def text(self, x, top, text, bold, colour):
        """``text`` from ``x`` on the line whose line box starts at ``top``."""
        baseline = self.height - (top + (LINE_HEIGHT - FONT_SIZE) / 2 + _BASELINE * FONT_SIZE)
        self.operators.append(f"BT {_colour(colour)} rg /F{2 if bold else 1} {FONT_SIZE:g} Tf "
                              f"{x:.2f} {baseline:.2f} Td ({_pdf_string(text)}) Tj ET")

    def legend(self, legend, rect):
        """The legend: a frame, its title, then per stop a swatch of its colour and its value."""
        self.rounded(rect, stroke=_MUTED, fill=(1, 1, 1))
        self.lines((((legend.title, True),),), rect._replace(height=LINE_HEIGHT + 2 * PAD_Y), (0, 0, 0))
        for i, (value, colour) in enumerate(legend.stops):
            top = rect.y + PAD_Y + (i + 1) * LINE_HEIGHT
            swatch_y = self.height - (top + LINE_HEIGHT - 2)
            self.operators.append(f"{_colour(_MUTED)} RG {_colour(_rgb(colour))} rg [] 0 d "
                                  f"{rect.x + PAD_X:.2f} {swatch_y:.2f} {SWATCH:g} {LINE_HEIGHT - 4:g} re B")
            self.text(rect.x + 2 * PAD_X + SWATCH, top, format_value(value), False, (0, 0, 0))

    def content(self):
        return "\n".join(self.operators).encode("latin-1")


def _document(content, width, height):
    """A one-page PDF holding ``content`` (its operators) on a ``width`` x ``height`` point page."""
    unit = max(1.0, max(width, height) / _LARGEST_PAGE)
    if unit > 1:
        content = f"{1 / unit:.6f} 0 0 {1 / unit:.6f} 0 0 cm\n".encode("latin-1") + content
    stream = zlib.compress(content)
    user_unit = f" /UserUnit {unit:.6f}" if unit > 1 else ""
    fonts = "/Font << /F1 5 0 R /F2 6 0 R >>"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width / unit:.2f} {height / unit:.2f}]{user_unit} "
         f"/Resources << {fonts} >> /Contents 4 0 R >>").encode("latin-1"),
        f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode("latin-1") + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
    ]
    out = bytearray(b"%PDF-1.6\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode("latin-1") + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode("latin-1")
    out += b"".join(f"{offset:010d} 00000 n \n".encode("latin-1") for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode("latin-1")
    return bytes(out)


def _pdf_string(text):
    """``text`` as the inside of a PDF string in Windows-1252 (the fonts' encoding), ``?`` for what it lacks."""
    encoded = text.encode("cp1252", errors="replace").decode("latin-1")
    return encoded.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _rgb(colour):
    """``(r, g, b)`` from 0 to 1 for ``"#rrggbb"``."""
    return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))


def _colour(rgb):
    return " ".join(f"{channel:.3g}" for channel in rgb)
