"""Running graphviz's ``dot`` program for plot_model and the notebook displays.

``dot`` prints its warnings on stderr, where they would land in the user's
terminal or notebook cell; every run here captures them. They reach the user
only when ``dot`` fails, inside the error raised. The one warning that matters,
a bitmap too large for graphviz's cairo renderer (which then shrinks the whole
picture into a strip), is foreseen instead: such a drawing is written as SVG,
with a Python warning saying so and what to do.
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
    pixels = [math.ceil(size * dpi / 72) for size in (width, height)]
    if max(pixels) <= CAIRO_MAX_PIXELS:
        drawn = dot.copy()
        drawn.graph_attr["dpi"] = str(dpi)
        _save(to_file, pipe(drawn, fmt))
        return
    svg_file = os.path.splitext(to_file)[0] + ".svg"
    fitting_dpi = math.floor(CAIRO_MAX_PIXELS * 72 / max(width, height))
    lower_dpi = f", or pass dpi={fitting_dpi} or less" if fitting_dpi >= _READABLE_DPI else ""
    warnings.warn(
        f"plot_model: model {model_name!r} at dpi {dpi} would be {pixels[0]:,} x {pixels[1]:,} pixels, past the "
        f"{CAIRO_MAX_PIXELS:,} that graphviz can draw as {fmt.upper()} (it would shrink the picture until it is "
        f"unreadable), so it was written as SVG to {svg_file!r} instead of {to_file!r}. For a bitmap, draw fewer "
        f"boxes (collapse_repeats=True, layer_range=(first, last), max_depth=){lower_dpi}.",
        stacklevel=3,
    )
    _save(svg_file, svg)


def _save(path, data):
    with open(path, "wb") as file:
        file.write(data)
