"""Static pictures without graphviz's dot (issue 24): the built-in layout against ``dot``.

- The built-in drawing of the big graphs (``benchmarks/big_graphs.py``): reading the
  model, deciding the scene, laying it out (``graph.plot.static_layout``) and writing
  the SVG, against ``dot -Tsvg`` on the same graph's DOT (stopped after DOT_TIMEOUT).
  Goal: the 4,001-layer residual stack laid out in at most 5 s.
- The layered-layout libraries on the same edge lists: igraph's ``layout_sugiyama``
  (the one used), and where installed grandalf (pure Python) and fast-sugiyama (Rust):
  seconds and edge crossings between adjacent layers.
"""

from benchmarks.harness import pin_threads

pin_threads()

import itertools
import subprocess
import sys
import time

DOT_TIMEOUT = 120  # seconds
GOAL_SECONDS = 5.0  # the 4,001-layer residual stack, laid out


def models(smoke):
    from benchmarks.big_graphs import densenet_like, residual_stack

    if smoke:
        return {"residual 101": residual_stack(101), "densenet-like 35": densenet_like(35)}
    return {"residual 1,001": residual_stack(1001), "residual 4,001": residual_stack(4001),
            "densenet-like 681": densenet_like(681), "densenet-like 1,701": densenet_like(1701)}


def built_in(model):
    from graph._svg import layout_to_svg
    from graph.plot import static_layout

    scene, layout = static_layout(model, show_shapes=True)
    return layout_to_svg(scene, layout)


def dot_seconds(model):
    """Seconds ``dot -Tsvg`` takes on the model's DOT, or None when it did not finish in DOT_TIMEOUT."""
    from graph import model_to_dot

    source = model_to_dot(model, show_shapes=True).source.encode()
    start = time.perf_counter()
    try:
        subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, timeout=DOT_TIMEOUT, check=True)
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - start


def edge_list(model):
    from graph._walk import walk

    graph = walk(model)
    index = {key: i for i, key in enumerate(graph.vertices("layer"))}
    return len(index), [(index[source], index[target]) for source, target, _ in graph.edges("layer")]


def crossings(segments):
    """Crossings among ``(layer, x above, x below)`` segments between adjacent layers (inversions, by merge sort)."""
    def inversions(values):
        if len(values) < 2:
            return values, 0
        left, a = inversions(values[:len(values) // 2])
        right, b = inversions(values[len(values) // 2:])
        merged, count, i, j = [], a + b, 0, 0
        while i < len(left) and j < len(right):
            if left[i] <= right[j]:
                merged.append(left[i])
                i += 1
            else:
                merged.append(right[j])
                j += 1
                count += len(left) - i
        return merged + left[i:] + right[j:], count

    by_layer = {}
    for layer, above, below in segments:
        by_layer.setdefault(layer, []).append((above, below))
    return sum(inversions([below for _, below in sorted(pairs)])[1] for pairs in by_layer.values())


def with_igraph(n, edges):
    import igraph

    drawn = igraph.Graph(n=n, edges=edges, directed=True).layout_sugiyama()
    coords = drawn.coords  # a copy at each reading
    segments = []
    for (source, target), route in zip(edges, drawn.edge_routing):
        points = [tuple(coords[source]), *map(tuple, route), tuple(coords[target])]
        if points[0][1] > points[-1][1]:
            points.reverse()
        segments += [(round(a[1]), a[0], b[0]) for a, b in itertools.pairwise(points)]
    return segments


def with_fast_sugiyama(n, edges):
    import fast_sugiyama

    segments = []
    for positions, _, _, links in fast_sugiyama.from_edges(edges, dummy_vertices=True):
        place = dict(positions)
        layer = {y: i for i, y in enumerate(sorted({y for _, y in place.values()}))}
        for source, target in links:
            (x1, y1), (x2, _) = sorted([place[source], place[target]], key=lambda point: layer[point[1]])
            segments.append((layer[y1], x1, x2))
    return segments


def with_grandalf(n, edges):
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout

    class View:
        w, h = 10, 10

    vertices = [Vertex(i) for i in range(n)]
    for vertex in vertices:
        vertex.view = View()
    graph = Graph(vertices, [Edge(vertices[s], vertices[t]) for s, t in edges])
    layout = SugiyamaLayout(graph.C[0])
    layout.init_all()
    layout.draw(2)  # its dummy points are not read back here: time only, no crossings


LIBRARIES = {"igraph": with_igraph, "fast-sugiyama": with_fast_sugiyama, "grandalf": with_grandalf}


def main(smoke=False):
    from benchmarks.harness import measure, save

    rows = []
    print(f"{'graph':>20} {'layers':>7} {'edges':>6} {'built-in s':>11} {'dot -Tsvg s':>12}")
    for name, model in models(smoke).items():
        n, edges = edge_list(model)
        result = measure({"built-in": lambda model=model: built_in(model)}, repeats=3, warmup=1)
        dot = dot_seconds(model)
        dot_text = f"{dot:12.2f}" if dot is not None else f"{'> ' + str(DOT_TIMEOUT):>12}"
        print(f"{name:>20} {n:>7,} {len(edges):>6,} {result['built-in']['median']:11.2f} {dot_text}", flush=True)
        row = {"graph": name, "layers": n, "edges": len(edges), "built_in": result["built-in"], "dot_seconds": dot}
        for library, lay_out in LIBRARIES.items():
            try:
                start = time.perf_counter()
                segments = lay_out(n, edges)
                row[library] = {"seconds": time.perf_counter() - start,
                                "crossings": None if segments is None else crossings(segments)}
            except ImportError:
                row[library] = None
        print("   " + "; ".join(f"{library}: " + ("not installed" if row[library] is None else
                                                   f"{row[library]['seconds']:.2f} s, crossings "
                                                   f"{row[library]['crossings']}") for library in LIBRARIES))
        rows.append(row)
    goal = next((row for row in rows if row["graph"] == "residual 4,001"), None)
    if goal is not None:
        print(f"residual 4,001 laid out in {goal['built_in']['median']:.2f} s (goal <= {GOAL_SECONDS} s)")
    save("static_layout", {"rows": rows, "dot_timeout": DOT_TIMEOUT})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
