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

How it is found, in near-linear time: from a call, the periods tried are the
distances to the later calls of its kind (from ``_WINDOW`` calls on, to the later
places where the same ``_WINDOW`` kinds in a row start), shortest first, up to the
first block that would read a second tensor from before it. Whether a block is a
chain link is answered in O(1) from arrays worked out in one pass each (how far
back a block must start for nothing it makes but its exit to be read after it; how
far it may reach before a call reads from before its entry; which tensors from
before a start are read first). Blocks are compared by a polynomial hash of their
calls' tokens: a difference of prefix hashes, plus a term per read of the entry. A
period covering every call left ends the search. Hashes only find runs: each run
the scan takes is confirmed by comparing its blocks' signatures exactly, and after
a collision the step is decided again by exact comparison.
"""

import random
from bisect import bisect_left, bisect_right
from collections import OrderedDict

from graph._walk import plan_of, walk

_MODULUS = (1 << 61) - 1  # a Mersenne prime: hashes of distinct blocks of p calls collide with odds p / 2**61
_BASE = 1_000_003
_WINDOW = 16  # periods from this long on are tried only where as many kinds in a row recur
_ELSEWHERE = object()  # the container of a call that is in none of those scanned


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

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(4,), name="x")
        >>> model = Model(x, Dense(4, name="c")(Dense(4, name="b")(Dense(4, name="a")(x))))
        >>> graph = walk(model)
        >>> [[[call.layer.name for call in block] for block in run.blocks]
        ...  for run in find_runs(graph.calls, graph.links, "layer")]
        [[['a'], ['b'], ['c']]]
    """
    return _Scan(calls, links, level, _Kinds()).runs()


def runs_by_container(graph, level, vertices=None) -> dict:
    """The runs of each container of a ``graph._walk.ModelGraph``, as ``plot_model`` collapses them.

    Each container's boxes (one per layer at level "layer", one per call at level
    "node"; expanded nested models left out) are scanned in execution order, and
    each distinct layer's signature is worked out once for all containers. Each
    link is read once, so the time grows with the graph, not with the number of
    containers times the links.

    Args:
        graph: the ModelGraph, from ``graph._walk.walk``.
        level: "layer" or "node", as for ``find_runs``.
        vertices: the boxes to scan, ``{key: calls}`` as ``graph.vertices(level)``
            gives them, or some of them (those a layer range draws); None for all.

    Returns:
        ``{container key: [Run, ...]}``: the key of the expanded nested model at
        ``level`` (``outer/inner``), or None for the model itself; every container
        with a box is there, in execution order, with an empty list if it has no run.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(4,), name="x")
        >>> inner = Model(x, Dense(4, name="b")(Dense(4, name="a")(x)), name="inner")
        >>> y = Input(shape=(4,), name="y")
        >>> runs = runs_by_container(walk(Model(y, inner(y)), expand_nested=True), "layer")
        >>> {key: [len(run.blocks) for run in found] for key, found in runs.items()}
        {None: [], 'inner': [2]}
    """
    sequences = {}  # container key -> its boxes' first calls, in execution order
    for calls in (graph.vertices(level) if vertices is None else vertices).values():
        container = calls[0].container
        sequences.setdefault(None if container is None else container.key(level), []).append(calls[0])
    where = {id(call): key for key, calls in sequences.items() for call in calls}
    links = {key: [] for key in sequences}  # the links that reach each container's boxes
    for link in graph.links:
        ends = {where.get(id(link.source), _ELSEWHERE), where.get(id(link.target), _ELSEWHERE)}
        for key in ends - {_ELSEWHERE}:
            links[key].append(link)
    kinds = _Kinds()
    return {key: _Scan(calls, links[key], level, kinds).runs() for key, calls in sequences.items()}


class _Kinds:
    """Small ints, equal for calls that may stand for each other: the same layer
    signature and the same input and output shapes. Each layer's signature (a
    nested model's walks the model) is worked out once, and kept as a small int
    too, so a nested model's signature holds its layers' ints, not their signatures."""

    def __init__(self):
        self.signatures = {}  # signature -> int
        self.layers = {}  # id(layer) -> the int of its signature
        self.calls = {}  # (signature int, output shapes, input shapes) -> int

    def of_call(self, call):
        key = self.of_layer(call.layer), tuple(t.shape for t in call.outputs), tuple(t.shape for t in call.reads)
        return self.calls.setdefault(key, len(self.calls))

    def alone(self):
        """A kind no other call has (a shared layer's, drawn as one box)."""
        return self.calls.setdefault(object(), len(self.calls))

    def of_layer(self, layer):
        """What two layers share when one may stand for the other in a drawing: class and
        config without the name; for a nested model, its calls' signatures and wiring."""
        known = self.layers.get(id(layer))
        if known is None:
            known = self.layers[id(layer)] = self.signatures.setdefault(self._signature(layer), len(self.signatures))
        return known

    def _signature(self, layer):
        if plan_of(layer) is not None:
            graph = walk(layer)
            position = {id(call): i for i, call in enumerate(graph.calls)}
            wiring = sorted((position[id(link.target)], link.reader[1], position[id(link.source)],
                             link.tensor._keras_history.tensor_index) for link in graph.links)
            return type(layer).__name__, tuple(self.of_layer(call.layer) for call in graph.calls), tuple(wiring)
        try:
            config = dict(layer.get_config())
        except NotImplementedError:
            return type(layer).__name__, id(layer)  # a layer without a config stands only for itself
        config.pop("name", None)
        return type(layer).__name__, repr(config)


class _Scan:
    """The scan of one container's calls. Positions are indices into ``calls``; a
    source in another container is a negative number, so "made before position b"
    is ``source < b`` wherever the source is."""

    def __init__(self, calls, links, level, kinds):
        self.calls = calls
        self.n = n = len(calls)
        self.reads, self.reach = _reads(calls, links)
        calls_per_layer = {}
        for call in calls:
            calls_per_layer.setdefault(id(call.layer), set()).add(id(call.node))
        self.kinds = [kinds.alone() if level == "layer" and len(calls_per_layer[id(call.layer)]) > 1
                      else kinds.of_call(call) for call in calls]
        self.alike = {}  # kind -> its positions, ascending
        self.windows = {}  # the kinds of _WINDOW calls in a row -> the positions they start at, ascending
        for i, kind in enumerate(self.kinds):
            self.alike.setdefault(kind, []).append(i)
        for i in range(n - _WINDOW + 1):
            self.windows.setdefault(tuple(self.kinds[i:i + _WINDOW]), []).append(i)
        self.earliest_start = _earliest_starts(self.reach)
        self.farthest_end = _farthest_ends([min((source for source, _ in r), default=n) for r in self.reads])
        self.entry, self.first_external, self.alone = _entries(self.reads)
        self.readers_of = {}  # source -> the positions reading it, ascending
        read_of = {}  # source -> the tensor index read from it, None when more than one is
        for i, r in enumerate(self.reads):
            for source, tensor in r:
                readers = self.readers_of.setdefault(source, [])
                if not readers or readers[-1] != i:
                    readers.append(i)
                read_of[source] = tensor if read_of.get(source, tensor) == tensor else None
        # Whether a block may end at i: one output of i is read, and in this container only.
        self.exits = [reach < n and read_of.get(i) is not None for i, reach in enumerate(self.reach)]
        self._hash_tokens()
        self.exact = False

    def _hash_tokens(self):
        """Each call's token hashed with every read inside the block, and the prefix hashes of
        their sequence; what reading a source as the entry changes in a token comes later."""
        self.value = _token_hasher()
        self.full = [self.value(self._token(i, lambda source: False)) for i in range(self.n)]
        self.prefix = [0]
        for value in self.full:
            self.prefix.append((self.prefix[-1] * _BASE + value) % _MODULUS)
        self.power = [1]
        for _ in range(self.n):
            self.power.append(self.power[-1] * _BASE % _MODULUS)
        self.deltas = {}  # (position, source) -> what reading the source as the entry adds to its token's hash

    def _token(self, i, is_entry):
        """Call ``i`` in a block: its kind and, per input, ``"entry"`` where ``is_entry(source)``
        (a read of the block's entry), else how far back the call it reads is and which output."""
        return self.kinds[i], tuple("entry" if is_entry(source) else (i - source, tensor)
                                    for source, tensor in self.reads[i])

    def runs(self):
        found, start = [], 0
        while start < self.n:
            taken = self._run_from(start)
            if taken is None:
                start += 1
                continue
            start, period, blocks = taken
            found.append(Run([self.calls[start + b * period:start + (b + 1) * period] for b in range(blocks)]))
            start += period * blocks
        return found

    def _run_from(self, start):
        """``(start, period, blocks)`` of the run the scan takes at ``start``, or None."""
        period, blocks = self._longest_from(start)
        if not period:
            return None
        taken = start, period, blocks
        # A run as long that starts within the first block is taken instead: its blocks end
        # with the blocks' last calls, not with their successor's first (the same layers).
        for later in range(start + 1, start + period):
            later_period, later_blocks = self._longest_from(later)
            if later_period * later_blocks >= taken[1] * taken[2]:
                taken = later, later_period, later_blocks
        if self.exact or (self._confirmed(start, period, blocks) and self._confirmed(*taken)):
            return taken
        self.exact = True  # two different blocks hashed alike: decide again by their signatures
        taken = self._run_from(start)
        self.exact = False
        return taken

    def _confirmed(self, start, period, blocks):
        exact, self.exact = self.exact, True
        confirmed = self._blocks_from(start, period) == blocks
        self.exact = exact
        return confirmed

    def _longest_from(self, start):
        """``(period, blocks)`` of the run from ``start`` covering the most calls (the
        shorter period on a tie), or ``(0, 0)`` when no run starts there."""
        best_period, best_blocks = 0, 0
        room = self.n - start
        last = min(self.alone[start], start + room // 2)  # first blocks ending later read two tensors or cannot repeat
        read_later = start  # first blocks ending up to here make a tensor read after them
        for end in self._ends(start, last):
            if read_later >= last or best_period * best_blocks == room:
                break
            period = end - start
            if end <= read_later or period * (room // period) <= best_period * best_blocks:
                continue  # the first block is no chain link, or even blocks up to the last call would not cover more
            if self.earliest_start[end] > start:
                read_later = self.reach[self.earliest_start[end] - 1]
                continue
            blocks = self._blocks_from(start, period)
            if blocks >= 2 and blocks * period > best_period * best_blocks:
                best_period, best_blocks = period, blocks
        return best_period, best_blocks

    def _ends(self, start, last):
        """The ends up to ``last`` of first blocks from ``start`` whose next block may be like
        them, ascending: the later calls of its kind, and from ``_WINDOW`` calls on, the
        later starts of the same ``_WINDOW`` kinds in a row."""
        alike = self.alike[self.kinds[start]]
        for index in range(bisect_right(alike, start), bisect_right(alike, min(last, start + _WINDOW - 1))):
            yield alike[index]
        if last >= start + _WINDOW:
            same = self.windows[tuple(self.kinds[start:start + _WINDOW])]
            for index in range(bisect_left(same, start + _WINDOW), bisect_right(same, last)):
                yield same[index]

    def _blocks_from(self, start, period):
        """How many blocks of ``period`` calls from ``start`` form a run (1 when none does)."""
        end = start + period
        if not self.first_external[start] < end <= self.alone[start] or self.earliest_start[end] > start:
            return 1  # the first block reads no tensor, or two, from before it, or one it makes is read after it
        signature = self._signature(start, period, self.entry[start])
        blocks, begin = 1, end
        while begin + period <= self.n and self._links(begin, period) \
                and self._signature(begin, period, begin - 1) == signature:
            blocks += 1
            begin += period
        return blocks

    def _links(self, begin, period):
        """Whether the block of ``period`` calls from ``begin`` is a chain link after the
        block before it: it reads one output of the call before it and nothing else from
        before itself, that call is read in it only, and nothing it makes but its last
        output is read after it."""
        return (self.exits[begin - 1] and self.earliest_start[begin + period] < begin
                and self.farthest_end[begin] >= begin + period)

    def _signature(self, begin, period, entry):
        """The block's signature (exactly, or hashed): its calls' tokens, where ``entry``
        is the source of the one tensor it reads from before itself."""
        end = begin + period
        if self.exact:
            return tuple(self._token(i, lambda source: source < begin) for i in range(begin, end))
        value = self.prefix[end] - self.prefix[begin] * self.power[period]
        readers = self.readers_of.get(entry, ())
        for index in range(bisect_left(readers, begin), bisect_left(readers, end)):
            i = readers[index]
            delta = self.deltas.get((i, entry))
            if delta is None:
                delta = self.deltas[i, entry] = self.value(self._token(i, lambda source: source == entry)) - self.full[i]
            value += delta * self.power[end - 1 - i]
        return value % _MODULUS


def _reads(calls, links):
    """Per call, the ``(source, tensor index)`` it reads in input order (a source in another
    container numbered -1, -2, ...), and its last reader (``len(calls)`` for one elsewhere,
    -1 for none)."""
    n = len(calls)
    position = {id(call): i for i, call in enumerate(calls)}
    outside = {}  # id(Call) in another container -> its negative number
    reads, reach = [[] for _ in calls], [-1] * n
    for link in links:
        source, target = position.get(id(link.source)), position.get(id(link.target))
        if source is not None:
            reach[source] = n if target is None else max(reach[source], target)
        if target is not None:
            if source is None:
                source = outside.setdefault(id(link.source), -1 - len(outside))
            reads[target].append((link.reader[1], source, link.tensor._keras_history.tensor_index))
    return [[(source, tensor) for _, source, tensor in sorted(r, key=lambda read: read[0])] for r in reads], reach


def _entries(reads):
    """Per start position: the source of the first tensor made before it that the calls
    from it on read, the first call that reads one, and the first call by which they have
    read two (``len(reads)`` for none). One pass from the end, keeping the tensors made
    before the start in the order of their next reader."""
    n = len(reads)
    entry, first, second = [None] * n, [n] * n, [n] * n
    made = {}  # source -> the tensors of it that are read
    for r in reads:
        for tensor in r:
            made.setdefault(tensor[0], set()).add(tensor)
    waiting = OrderedDict()  # tensor made before start -> its first reader from start on, ascending
    for start in range(n - 1, -1, -1):
        for tensor in made.get(start, ()):
            waiting.pop(tensor, None)
        for tensor in reads[start]:
            waiting[tensor] = start
            waiting.move_to_end(tensor, last=False)
        upcoming = iter(waiting.items())
        (source, _), first[start] = next(upcoming, ((None, None), n))
        entry[start] = source
        second[start] = next(upcoming, (None, n))[1]
    return entry, first, second


def _token_hasher():
    """A function that gives each token a random 61-bit number, the same for equal tokens
    and, token for token, the same in every run."""
    draw, values = random.Random(24), {}

    def value(token):
        if token not in values:
            values[token] = draw.getrandbits(61)
        return values[token]

    return value


def _earliest_starts(reach):
    """Per end ``e``: the earliest start of a block ending at ``e`` (its last call at
    ``e - 1``) that makes nothing read at ``e`` or later but its last call's outputs
    (``reach[i]`` is the last reader of call ``i``). One pass, with a stack of positions
    (ascending) whose reach descends."""
    starts, stack = [0] * (len(reach) + 1), []
    for end in range(len(reach) + 1):
        if end >= 2:
            while stack and reach[stack[-1]] <= reach[end - 2]:
                stack.pop()
            stack.append(end - 2)
        while stack and reach[stack[-1]] < end:
            stack.pop()
        starts[end] = stack[-1] + 1 if stack else 0
    return starts


def _farthest_ends(first_source):
    """Per start ``b``: the farthest end of a block from ``b`` that reads nothing made before
    ``b - 1`` (``first_source[i]`` is the first source call ``i`` reads): the first call from
    ``b`` on that does, or ``len(first_source)``. One pass from the end, with a stack of
    positions (descending) whose first sources ascend."""
    n = len(first_source)
    ends, stack = [n] * (n + 1), []
    for begin in range(n - 1, -1, -1):
        while stack and first_source[stack[-1]] >= first_source[begin]:
            stack.pop()
        stack.append(begin)
        while stack and first_source[stack[-1]] >= begin - 1:
            stack.pop()
        ends[begin] = stack[-1] if stack else n
    return ends
