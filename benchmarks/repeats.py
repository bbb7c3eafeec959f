"""``model_to_dot(model, collapse_repeats=True)`` on residual stacks (issue 24, item 4).

The stacks are ``benchmarks/big_graphs.py`` ``residual_stack(n)``: one run of (n - 2) / 3
identical blocks. Each size is drawn plain, with the runs found by ``graph/_repeats.py``,
and, up to OLD_LARGEST layers, with the runs found by the scan it replaced (kept below,
``OldScan``, only for this comparison; it grows about cubically); and the scan alone
(``runs_by_container`` on the walked graph). Goals: 4,001 layers in at
most 1 s, 20,001 in at most 5 s, and time per layer flat from 1,001 to 20,001 layers.
"""

from benchmarks.harness import pin_threads

pin_threads()

import sys

OLD_LARGEST = 2001  # the old scan takes about 10 s at 2,001 layers and 85 s at 4,001
GOALS = {4001: 1.0, 20001: 5.0}  # seconds


def main(smoke=False):
    from benchmarks.big_graphs import residual_stack
    from benchmarks.harness import measure, save
    from graph import model_to_dot
    from graph._repeats import runs_by_container
    from graph._walk import walk

    rows = []
    print(f"{'layers':>7} {'plain s':>8} {'old scan s':>11} {'new scan s':>11} {'new ms/1k layers':>17} "
          f"{'old/new':>8} {'goal s':>7} {'scan alone ms/1k layers':>24}")
    for layers in ([101, 301] if smoke else [1001, 2001, 4001, 20001]):
        model = residual_stack(layers)
        graph = walk(model)
        contenders = {"plain": lambda model=model: model_to_dot(model),
                      "new": lambda model=model: model_to_dot(model, collapse_repeats=True),
                      "scan_alone": lambda graph=graph: runs_by_container(graph, "layer")}
        if layers <= OLD_LARGEST:
            assert with_old_scan(lambda model=model: top_level_runs(model)) == top_level_runs(model), "scans disagree"
            contenders["old"] = lambda model=model: with_old_scan(lambda: model_to_dot(model, collapse_repeats=True))
        result = measure(contenders, repeats=3, warmup=0)
        seconds = {name: value["median"] for name, value in result.items()}
        old = f"{seconds['old']:11.2f}" if "old" in seconds else f"{'not run':>11}"
        versus = f"{seconds['old'] / seconds['new']:8.0f}" if "old" in seconds else f"{'':>8}"
        goal = GOALS.get(layers)
        print(f"{layers:>7} {seconds['plain']:8.2f} {old} {seconds['new']:11.2f} "
              f"{seconds['new'] / layers * 1e6:17.1f} {versus} {goal or '':>7} "
              f"{seconds['scan_alone'] / layers * 1e6:24.1f}", flush=True)
        rows.append({"layers": layers, "seconds": result, "goal_seconds": goal,
                     "new_ms_per_1000_layers": seconds["new"] / layers * 1e6,
                     "scan_alone_ms_per_1000_layers": seconds["scan_alone"] / layers * 1e6})
    save("repeats", {"rows": rows})
    return rows


def top_level_runs(model):
    """``(blocks, calls per block)`` of the runs at the model's top level."""
    from graph._repeats import runs_by_container
    from graph._walk import walk

    return [(len(run.blocks), len(run.blocks[0])) for run in runs_by_container(walk(model), "layer")[None]]


def with_old_scan(draw):
    """``draw()`` with graph/_repeats.py scanning as it did before issue 24."""
    import graph._repeats as repeats

    new = repeats._Scan
    repeats._Scan = lambda calls, links, level, kinds: OldScan(calls, links, level)
    try:
        return draw()
    finally:
        repeats._Scan = new


# The scan graph/_repeats.py used before issue 24, kept only for this comparison: every
# period from every start, each block's signature built call by call, and each call's
# readers checked against a set of the block's positions.


class OldScan:
    """The old ``graph._repeats._Scan`` (see the module docstring)."""

    def __init__(self, calls, links, level):
        self.calls = calls
        position = {id(call): i for i, call in enumerate(calls)}
        self.reads = [[] for _ in calls]
        self.readers = [set() for _ in calls]
        for link in links:
            source, target = position.get(id(link.source)), position.get(id(link.target))
            tensor_index = link.tensor._keras_history.tensor_index
            if target is not None:
                self.reads[target].append((link.reader[1], link.source if source is None else source, tensor_index))
            if source is not None:
                self.readers[source].add(target)
        for reads in self.reads:
            reads.sort(key=lambda read: read[0])
        calls_per_layer = {}
        for call in calls:
            calls_per_layer.setdefault(id(call.layer), set()).add(id(call.node))
        signatures = {}
        self.kinds = []
        for call in calls:
            if level == "layer" and len(calls_per_layer[id(call.layer)]) > 1:
                kind = object()
            else:
                kind = (old_layer_signature(call.layer), tuple(str(t.shape) for t in call.outputs),
                        tuple(str(t.shape) for t in call.reads))
            self.kinds.append(signatures.setdefault(kind, len(signatures)))

    def runs(self):
        from graph._repeats import Run

        found, start = [], 0
        while start < len(self.calls):
            period, blocks = self._longest_from(start)
            if not period:
                start += 1
                continue
            for later in range(start + 1, start + period):
                later_period, later_blocks = self._longest_from(later)
                if later_period * later_blocks >= period * blocks:
                    start, period, blocks = later, later_period, later_blocks
            found.append(Run([self.calls[start + b * period:start + (b + 1) * period] for b in range(blocks)]))
            start += period * blocks
        return found

    def _longest_from(self, start):
        best_period, best_blocks = 0, 0
        for period in range(1, (len(self.calls) - start) // 2 + 1):
            if self.kinds[start] != self.kinds[start + period]:
                continue
            blocks = self._blocks_from(start, period)
            if blocks >= 2 and blocks * period > best_blocks * best_period:
                best_period, best_blocks = period, blocks
        return best_period, best_blocks

    def _blocks_from(self, start, period):
        first = self._block(start, period, None)
        if first is None:
            return 1
        signature, _ = first
        blocks = 1
        while start + (blocks + 1) * period <= len(self.calls):
            begin = start + blocks * period
            block = self._block(begin, period, begin - 1)
            if block is None or block[0] != signature:
                break
            if not self.readers[begin - 1] <= set(range(begin, begin + period)):
                break
            blocks += 1
        return blocks

    def _block(self, begin, period, entry_source):
        end = begin + period
        entry, signature = None, []
        for i in range(begin, end):
            if i < end - 1 and not self.readers[i] <= set(range(begin, end)):
                return None
            wiring = []
            for _, source, tensor_index in self.reads[i]:
                if isinstance(source, int) and begin <= source:
                    wiring.append((i - source, tensor_index))
                    continue
                if entry is None:
                    entry = (source, tensor_index)
                if (source, tensor_index) != entry or (entry_source is not None and source != entry_source):
                    return None
                wiring.append("entry")
            signature.append((self.kinds[i], tuple(wiring)))
        return (tuple(signature), entry) if entry is not None else None


def old_layer_signature(layer):
    """The old ``graph._repeats.layer_signature``: a nested model walked at each of its calls."""
    from graph._walk import plan_of, walk

    if plan_of(layer) is not None:
        graph = walk(layer)
        position = {id(call): i for i, call in enumerate(graph.calls)}
        wiring = sorted((position[id(link.target)], link.reader[1], position[id(link.source)],
                         link.tensor._keras_history.tensor_index) for link in graph.links)
        return (type(layer).__name__, tuple(old_layer_signature(call.layer) for call in graph.calls), tuple(wiring))
    try:
        config = dict(layer.get_config())
    except NotImplementedError:
        return (type(layer).__name__, id(layer))
    config.pop("name", None)
    return (type(layer).__name__, repr(config))


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
