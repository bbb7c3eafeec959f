"""Writing plot_model's files: with graphviz's ``dot`` program, or with the built-in drawing.

``dot`` prints its warnings on stderr, where they would land in the user's
terminal or notebook cell; every run here captures them. They reach the user
only when ``dot`` fails, inside the error raised. The one warning that matters,
a bitmap too large for graphviz's cairo renderer (which then shrinks the whole
picture into a strip), is foreseen instead: such a drawing is written as SVG,
with a Python warning saying so and what to do. The built-in drawing (PNG, SVG
and PDF, without ``dot``) keeps to the same largest bitmap.
"""

import math
import os
import re
import warnings

# The largest width or height, in pixels, of a bitmap drawn by graphviz's cairo renderer;
# past it, graphviz shrinks the picture to fit and warns on stderr.
CAIRO_MAX_PIXELS = 32767
# Formats made of pixels, the only ones a dpi applies to. Vector formats are drawn at graphviz's 72 dpi:
# graphviz 2.43 writes an SVG drawn at any other dpi with a viewBox that crops it (the drawing is scaled by
# dpi/72, the viewBox is not), so a browser shows only its top-left part.
BITMAP_FORMATS = frozenset({"png", "jpg", "jpeg", "jpe", "gif", "bmp", "tif", "tiff", "webp", "ico"})
# Below this dpi, a box's text is too small to read: plot_model does not suggest drawing with less.
_READABLE_DPI = 36
# What the built-in drawing writes, without graphviz's ``dot``.
BUILT_IN_FORMATS = ("png", "svg", "pdf")


def pipe(dot, fmt) -> bytes:
    """``dot`` drawn in format ``fmt`` by the ``dot`` program, its warnings captured.

    Raises:
        graphviz.ExecutableNotFound: when ``dot`` is not on PATH.
        graphviz.CalledProcessError: when ``dot`` fails; its message holds ``dot``'s stderr.
    """
    return dot.pipe(format=fmt, quiet=True)


def write(dot, to_file, fmt, dpi, model_name) -> None:
    """Draws ``dot`` in ``fmt`` into ``to_file``; a bitmap at ``dpi`` wider or taller
    than graphviz can draw goes to the same name ending in ``.svg``, with a UserWarning."""
    if fmt not in BITMAP_FORMATS:
        _save(to_file, pipe(dot, fmt))
        return
    svg = pipe(dot, "svg")
    width, height = (float(size) for size in re.search(rb'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
    if _fits(width, height, dpi, fmt, to_file, model_name, "that graphviz can draw"):
        drawn = dot.copy()
        drawn.graph_attr["dpi"] = str(dpi)
        _save(to_file, pipe(drawn, fmt))
    else:
        _save(os.path.splitext(to_file)[0] + ".svg", svg)


def write_built_in(scene, layout, to_file, fmt, dpi, model_name) -> None:
    """Draws ``scene`` where ``layout`` puts it (``graph._layout``) in ``fmt`` ("png",
    "svg" or "pdf") into ``to_file``, as ``write`` does with ``dot``."""
    from graph._pdf import layout_to_pdf
    from graph._svg import layout_to_svg, svg_to_png

    if fmt == "pdf":
        _save(to_file, layout_to_pdf(scene, layout))
        return
    svg = layout_to_svg(scene, layout)
    if fmt == "svg":
        _save(to_file, svg.encode("utf-8"))
    elif _fits(layout.width, layout.height, dpi, fmt, to_file, model_name, "that plot_model draws"):
        _save(to_file, svg_to_png(svg, dpi))
    else:
        _save(os.path.splitext(to_file)[0] + ".svg", svg.encode("utf-8"))


def _fits(width, height, dpi, fmt, to_file, model_name, largest):
    """Whether a drawing of ``width`` x ``height`` points fits a bitmap at ``dpi``; if not,
    warns that it goes to SVG instead (``largest`` says whose limit it is)."""
    pixels = [math.ceil(size * dpi / 72) for size in (width, height)]
    if max(pixels) <= CAIRO_MAX_PIXELS:
        return True
    svg_file = os.path.splitext(to_file)[0] + ".svg"
    fitting_dpi = math.floor(CAIRO_MAX_PIXELS * 72 / max(width, height))
    lower_dpi = f", or pass dpi={fitting_dpi} or less" if fitting_dpi >= _READABLE_DPI else ""
    warnings.warn(
        f"plot_model: model {model_name!r} at dpi {dpi} would be {pixels[0]:,} x {pixels[1]:,} pixels, past the "
        f"{CAIRO_MAX_PIXELS:,} {largest} as {fmt.upper()} (it would shrink the picture until it is "
        f"unreadable), so it was written as SVG to {svg_file!r} instead of {to_file!r}. For a bitmap, draw fewer "
        f"boxes (collapse_repeats=True, layer_range=(first, last), max_depth=){lower_dpi}.",
        stacklevel=4,
    )
    return False


def _save(path, data):
    with open(path, "wb") as file:
        file.write(data)
