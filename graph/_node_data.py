"""The per-box numbers that ``node_data=`` colours a drawing by, and the colour scale.

``plot_model``, the static layout and the HTML view all colour boxes the same
way: ``node_values`` gives one number per box key of a ``graph._walk.ModelGraph``
(a layer key such as ``outer/inner/dense`` at layer level, a call key such as
``dense[1]`` at node level), and ``fill_colour`` maps it onto one light-to-dark
scale. Numbers that are all zero or more (parameters, FLOPs, bytes) are placed
on the scale by ``log10(1 + value)``, since they span orders of magnitude (a
ResNet's Add does thousands of FLOPs, its convolutions hundreds of millions);
numbers with a negative among them are placed linearly.
"""

import difflib
import math
from collections.abc import Mapping

NAMED = ("params", "flops", "activation_bytes", "weight_bytes")
_TITLES = {"params": "parameters", "flops": "FLOPs (batch 1)", "activation_bytes": "activation bytes (batch 1)",
           "weight_bytes": "weight bytes"}
# ColorBrewer's YlOrRd, light to dark: black text stays readable on every stop.
_SCALE = ((255, 255, 204), (255, 237, 160), (254, 217, 118), (254, 178, 76), (253, 141, 60), (252, 78, 42))


def node_values(model, graph, node_data, level) -> tuple[str, dict[str, float]]:
    """One number per box of ``graph`` drawn at ``level``, for colouring.

    Args:
        model: the model ``graph`` was read from (``graph._walk.walk``).
        graph: its ModelGraph.
        node_data: ``"params"``, ``"flops"``, ``"activation_bytes"`` or
            ``"weight_bytes"`` (from ``graph.profile`` at batch 1; a nested model
            drawn as one box sums its inner calls), or a mapping from layer keys
            (``"dense"``, ``"outer/inner/dense"``) or call keys (``"dense[1]"``,
            ``"outer[0]/dense[0]"``) to numbers. A layer key colours every box of
            the layer; at layer level, a call key adds to its layer's box.
        level: ``"layer"`` or ``"node"``, as drawn.

    Returns:
        ``(legend title, {box key: value})``; boxes without a value (a cost
        ``profile`` cannot count, a key the mapping leaves out) are absent.

    Raises:
        ValueError: for an unknown name, or a mapping key that names no layer or
            call of the graph (the closest keys are listed).

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> from graph._walk import walk
        >>> x = Input(shape=(3,), name="x")
        >>> model = Model(x, Dense(4, name="d")(x))
        >>> node_values(model, walk(model), "params", "layer")
        ('parameters', {'x': 0.0, 'd': 16.0})
    """
    boxes = graph.vertices(level)
    if isinstance(node_data, Mapping):
        return "value", _from_mapping(graph, boxes, node_data, level)
    if node_data not in NAMED:
        raise ValueError(f"node_data must be one of {NAMED} or a mapping from layer or call keys to numbers, "
                         f"but received {node_data!r}.")
    if node_data == "params":
        return _TITLES[node_data], {key: float(calls[0].layer.count_params()) for key, calls in boxes.items()}
    from graph.profiler import profile

    per_call = {row["node"]: row[node_data] for row in profile(model).rows}
    values = {}
    for key, calls in boxes.items():
        counted = [_call_value(per_call, call.node_key) for call in calls]
        if node_data == "weight_bytes":
            counted = counted[:1]  # a layer's weights are one cost, however often it is called
        if all(value is not None for value in counted):
            values[key] = float(sum(counted))
    return _TITLES[node_data], values


def fill_colour(value, low, high) -> str:
    """``"#rrggbb"`` for ``value`` on the scale from ``low`` (lightest) to ``high`` (darkest).

    Example:
        >>> fill_colour(0, 0, 100), fill_colour(100, 0, 100)
        ('#ffffcc', '#fc4e2a')
    """
    position = _position(value, low, high)
    scaled = position * (len(_SCALE) - 1)
    index = min(int(scaled), len(_SCALE) - 2)
    fraction = scaled - index
    rgb = (round(a + (b - a) * fraction) for a, b in zip(_SCALE[index], _SCALE[index + 1]))
    return "#" + "".join(f"{channel:02x}" for channel in rgb)


def legend_stops(low, high, count=5) -> list[tuple[float, str]]:
    """``count`` values from ``low`` to ``high``, evenly spaced on the scale, with their colours
    (whole numbers when ``low`` and ``high`` are: counts of parameters or FLOPs).

    Example:
        >>> [value for value, _ in legend_stops(0, 999, count=4)]
        [0.0, 9.0, 99.0, 999.0]
    """
    logarithmic = low >= 0
    whole = float(low).is_integer() and float(high).is_integer()  # counts stay counts in the legend
    stops = []
    for i in range(count):
        fraction = i / (count - 1)
        if logarithmic:
            value = 10 ** (math.log10(1 + low) + fraction * (math.log10(1 + high) - math.log10(1 + low))) - 1
        else:
            value = low + fraction * (high - low)
        value = float(round(value) if whole else round(value, 6))
        stops.append((value, fill_colour(value, low, high)))
    return stops


def _position(value, low, high):
    """Where ``value`` lies between ``low`` and ``high``, from 0 to 1."""
    if low >= 0:
        value, low, high = (math.log10(1 + max(v, 0)) for v in (value, low, high))
    if high <= low:
        return 0.0
    return min(max((value - low) / (high - low), 0.0), 1.0)


def _call_value(per_call, node_key):
    """A call's value: its profile row's, or for a nested model drawn as one box, the
    sum of its inner calls' (None when one of them is unknown)."""
    if node_key in per_call:
        return per_call[node_key]
    inner = [value for key, value in per_call.items() if key.startswith(node_key + "/")]
    return None if any(value is None for value in inner) else sum(inner)


def _from_mapping(graph, boxes, mapping, level):
    by_layer, by_node = {}, {}
    for call in graph.calls:
        by_layer.setdefault(call.layer_key, []).append(call)
        by_node[call.node_key] = call
    values = {}
    for key, value in mapping.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise ValueError(f"node_data[{key!r}] must be a finite number, but received {value!r}.")
        outer = _drawn_container(key, by_layer, by_node)
        if key in by_node:
            calls = [by_node[key]]
        elif key in by_layer:
            calls = by_layer[key]
        elif outer is not None:
            calls, key = outer
        else:
            close = difflib.get_close_matches(str(key), list(by_layer) + list(by_node), n=3)
            hint = f" The closest are {', '.join(map(repr, close))}." if close else ""
            raise ValueError(f"node_data names {key!r}, which is no layer key (such as 'outer/inner/dense') or "
                             f"call key (such as 'dense[1]') of the graph drawn.{hint}")
        adds = key in by_node or outer is not None  # a call's or an inner layer's number adds to its box
        for box in dict.fromkeys(call.key(level) for call in calls):
            if box in boxes:
                values[box] = values.get(box, 0.0) + float(value) if adds else float(value)
    return values


def _drawn_container(key, by_layer, by_node):
    """For the key of a layer or call inside a nested model drawn as one box
    (``"inner/dense"``, ``"inner[0]/dense[0]"``): ``(calls, key)`` of that model's box."""
    parts = str(key).split("/")
    for end in range(len(parts) - 1, 0, -1):
        prefix = "/".join(parts[:end])
        if prefix in by_node:
            return [by_node[prefix]], prefix
        if prefix in by_layer:
            return by_layer[prefix], prefix
    return None
