"""Runs of identical blocks in a chain of calls, which ``plot_model(collapse_repeats=True)`` draws once.

A *block* is ``p`` consecutive calls, in execution order, of one container (the
model, or one expanded nested model). Blocks ``B0 ... Bk-1`` (``k >= 2``, back to
back) form a *run* when

- they are identical: call by call, the same layer class, the same config apart
  from the layer's name (for a nested model: the same calls, recursively), the
  same input and output shapes, and the same wiring: each input is read from the
  same position inside the block, or is the block's entry;
- they form a chain: each block reads exactly one tensor made outside itself, its
  *entry*, which for ``B1 ... Bk-1`` is an output of the previous block's last
  call (its *exit*); nothing made in a block is read outside it but its exit, and
  the exits of all blocks but the last are read by the next block only.

A ResNet stage of 12 residual blocks is such a run (``p`` = the calls of one
block, ``k`` = 12), and so is a stack of identical Dense layers (``p`` = 1).
Scanning from the first call, the run starting there that covers the most
calls is taken (the shorter block on a tie), unless one as long starts within
its first block: that one is taken, so that blocks end with their own last
layer (after a unique block, its last call is alike the last call of every
block, and would otherwise start the run). The scan resumes after the run.
"""

from graph._walk import plan_of, walk


class Run:
    """Blocks of calls (lists of ``graph._walk.Call``), identical and chained, first block first."""

    __slots__ = ("blocks",)

    def __init__(self, blocks):
        self.blocks = blocks


def find_runs(calls, links, level) -> list[Run]:
    """The runs among ``calls``, the drawn calls of one container in execution order.

    Args:
        calls: ``graph._walk.Call`` objects, none of them an expanded nested model.
        links: the ``graph._walk.Link`` objects drawn (any others are ignored).
        level: "layer" or "node", as drawn; at layer level, the calls of a layer
            called more than once are one box, so they are never part of a run.

    Returns:
        The runs, in execution order, none overlapping.
    """
    return _Scan(calls, links, level).runs()


class _Scan:
    def __init__(self, calls, links, level):
        self.calls = calls
        position = {id(call): i for i, call in enumerate(calls)}
        self.reads = [[] for _ in calls]  # per call: (input index, source position or source Call, tensor index)
        self.readers = [set() for _ in calls]  # per call: reader positions, None for a reader elsewhere
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
        self.kinds = []  # per call: a small int, equal for calls that may stand for each other
        for call in calls:
            if level == "layer" and len(calls_per_layer[id(call.layer)]) > 1:
                kind = object()  # equal to nothing else
            else:
                kind = (layer_signature(call.layer), tuple(str(t.shape) for t in call.outputs),
                        tuple(str(t.shape) for t in call.reads))
            self.kinds.append(signatures.setdefault(kind, len(signatures)))

    def runs(self):
        found, start = [], 0
        while start < len(self.calls):
            period, blocks = self._longest_from(start)
            if not period:
                start += 1
                continue
            # A run as long that starts within the first block is taken instead: its blocks end
            # with the blocks' last calls, not with their successor's first (the same layers).
            for later in range(start + 1, start + period):
                later_period, later_blocks = self._longest_from(later)
                if later_period * later_blocks >= period * blocks:
                    start, period, blocks = later, later_period, later_blocks
            found.append(Run([self.calls[start + b * period:start + (b + 1) * period] for b in range(blocks)]))
            start += period * blocks
        return found

    def _longest_from(self, start):
        """``(period, blocks)`` of the run from ``start`` covering the most calls (the
        shorter period on a tie), or ``(0, 0)`` when no run starts there."""
        best_period, best_blocks = 0, 0
        for period in range(1, (len(self.calls) - start) // 2 + 1):
            if self.kinds[start] != self.kinds[start + period]:
                continue
            blocks = self._blocks_from(start, period)
            if blocks >= 2 and blocks * period > best_blocks * best_period:
                best_period, best_blocks = period, blocks
        return best_period, best_blocks

    def _blocks_from(self, start, period):
        """How many blocks of ``period`` calls from ``start`` form a run (1 when none does)."""
        first = self._block(start, period, None)
        if first is None:
            return 1
        signature, entry = first
        blocks = 1
        while start + (blocks + 1) * period <= len(self.calls):
            begin = start + blocks * period
            block = self._block(begin, period, begin - 1)
            if block is None or block[0] != signature:
                break
            if not self.readers[begin - 1] <= set(range(begin, begin + period)):
                break  # the previous exit is read beyond this block: it must stay the last
            blocks += 1
        return blocks

    def _block(self, begin, period, entry_source):
        """``(signature, entry)`` of the block of ``period`` calls from ``begin``, or None
        when it is not a chain link: it reads more than one outside tensor (or, with
        ``entry_source``, one not made by that call), or something besides its exit
        is read outside it."""
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


def layer_signature(layer):
    """What two layers share when one may stand for the other in a drawing: class
    and config without the name; for a nested model, its calls' signatures and wiring."""
    if plan_of(layer) is not None:
        graph = walk(layer)
        position = {id(call): i for i, call in enumerate(graph.calls)}
        wiring = sorted((position[id(link.target)], link.reader[1], position[id(link.source)],
                         link.tensor._keras_history.tensor_index) for link in graph.links)
        return (type(layer).__name__, tuple(layer_signature(call.layer) for call in graph.calls), tuple(wiring))
    try:
        config = dict(layer.get_config())
    except NotImplementedError:
        return (type(layer).__name__, id(layer))  # a layer without a config stands only for itself
    config.pop("name", None)
    return (type(layer).__name__, repr(config))
