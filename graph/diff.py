"""diff: what changed between two versions of a model, layer by layer.

Layers are matched by where they sit in the graph, not by their names, which
Keras makes up (VGG16's input is ``input_layer``, VGG19's ``input_layer_1``
when both are built in one session). Matching pairs the calls of the two
models' plans, in plan order, by these rules, each tried only where the
earlier ones found nothing:

1. the models' inputs, by position;
2. a call whose inputs are all matched: the call of the same class that reads
   the matched tensors, in the same order (of several, the one whose layer has
   the same name, else the first that no call of the second model will claim
   by its name in rule 3);
3. a call of a layer of the same name and class and the same call index: the
   calls after a layer inserted into a chain (VGG19's ``block3_pool`` after
   its new ``block3_conv4``);
4. across a gap: a call whose inputs come, through calls not matched, from
   matched tensors, and a call of the same class and config reached from those
   tensors through calls not matched (layers inserted or removed in models
   whose names differ);
5. in place: a call whose inputs are all matched and a call not matched that
   reads the same tensors, whatever its class (a layer replaced).

Each rule sweeps the calls not yet matched in plan order, trying rule 2 first
at every call, so that what follows a new match is matched in the same sweep.
A layer is matched where its first matched call is; two matched nested models
are compared the same way, inside, and their layers named by qualified paths
(``block/inner/conv``, ``engine.network.qualified_names``).
"""

import html
import math
import os
from dataclasses import dataclass, field, replace

import graphviz
import numpy as np

from engine.network.plan import ExecutionPlan
from engine.network.qualified_names import _plan_of

# How many calls in a row matching looks across, on each side, for layers inserted or removed (rule 4).
_LONGEST_GAP = 8
# The renamed layers str() lists before it only counts the others.
_RENAMES_LISTED = 10
_DPI = 96  # as plot_model draws bitmaps
_FILLS = {"added": "#b7e4b0", "removed": "#f4b0ab", "changed": "#ffd28a", "outputs": "#d8c8f0"}


@dataclass(frozen=True)
class LayerChange:
    """How a matched layer differs between the two models.

    Attributes:
        before: its path in the first model.
        after: its path in the second.
        class_name: ``(before, after)`` when the class changed, else None.
        config: ``{key: (before, after)}`` for each key of ``get_config()``
            (its name apart) whose value changed; a missing key is None.
        weights: ``{weight name: (before shape, after shape)}`` for each weight
            whose shape changed; a missing weight is None.
        inputs: ``{call: (before, after)}``, per call of the layer (its path in
            the second model, ``"dense[1]"``) that reads other tensors: their
            qualified names in each model.
    """

    before: str
    after: str
    class_name: tuple | None = None
    config: dict = field(default_factory=dict)
    weights: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)

    def __bool__(self):
        return bool(self.class_name or self.config or self.weights or self.inputs)

    def details(self) -> list[str]:
        """One line per difference: ``"units: 4 -> 8"``, ``"kernel shape: (3, 4) -> (3, 8)"``."""
        lines = []
        if self.class_name:
            lines.append(f"class: {self.class_name[0]} -> {self.class_name[1]}")
        lines += [f"{key}: {old!r} -> {new!r}" for key, (old, new) in self.config.items()]
        lines += [f"{name} shape: {old} -> {new}" for name, (old, new) in self.weights.items()]
        lines += [f"{call} inputs: {', '.join(old) or '-'} -> {', '.join(new) or '-'}"
                  for call, (old, new) in self.inputs.items()]
        return lines

    def summary(self) -> str:
        """What changed in a few words, for a box of ``ModelDiff.plot``: ``"units, kernel, inputs"``."""
        parts = (["class"] if self.class_name else []) + list(self.config) + list(self.weights)
        return ", ".join(parts + (["inputs"] if self.inputs else []))


class ModelDiff:
    """The differences between two models, as ``diff(a, b)`` finds them
    (``diff`` makes it; its arguments are the attributes below).

    Args:
        a, b: the two models compared.
        added, removed, changes, renamed, outputs, output_differences: as
            the attributes of the same names.
        classes: ``{("a" or "b", path): class name}`` of the layers named above.

    Attributes:
        added: the layers of ``b`` matched to none of ``a``, by path, in plan order.
        removed: the layers of ``a`` matched to none of ``b``, by path.
        changed: the matched layers that differ (class, config, weight shapes or
            the tensors a call reads), by their path in ``b``.
        changes: a ``LayerChange`` per path of ``changed``.
        renamed: ``{path in a: path in b}`` for matched layers whose paths differ
            (names are not what a layer computes: they make no difference).
        outputs: ``(before, after)``, the qualified names of the models' outputs,
            when ``b``'s outputs are not the tensors matched to ``a``'s; else None.
        output_differences: with ``data``, ``{path in b: largest absolute
            difference}`` of the outputs of each matched layer on that batch
            (``inf`` where their shapes differ): the layers whose outputs differ
            first, in plan order, so the first is where the models start to
            disagree; then those that agree. Without ``data``, None.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> a = Model(x, Dense(2, name="out")(Dense(4, name="hidden")(x)), name="a")
        >>> y = Input(shape=(3,), name="y")
        >>> b = Model(y, Dense(2, name="out")(Dense(8, name="hidden")(y)), name="b")
        >>> print(diff(a, b))
        Model 'a' -> 'b': 0 added, 0 removed, 2 changed, 1 renamed
        ~ hidden (Dense)
            units: 4 -> 8
            kernel shape: (3, 4) -> (3, 8)
            bias shape: (4,) -> (8,)
        ~ out (Dense)
            kernel shape: (4, 2) -> (8, 2)
        renamed: x -> y
    """

    def __init__(self, a, b, added, removed, changes, renamed, classes, outputs, output_differences):
        self.added = added
        self.removed = removed
        self.changes = changes
        self.changed = list(changes)
        self.renamed = renamed
        self.outputs = outputs
        self.output_differences = output_differences
        self._a, self._b = a, b
        self._classes = classes  # ("a" or "b", path) -> class name

    @property
    def is_empty(self) -> bool:
        """Whether nothing was added, removed or changed (renamed layers and outputs that differ
        in value on ``data`` do not count)."""
        return not (self.added or self.removed or self.changed or self.outputs)

    @property
    def first_disagreement(self) -> str | None:
        """With ``data``: the first layer in plan order whose outputs differ, or None."""
        first = next(iter(self.output_differences or {}), None)
        return first if first is not None and self.output_differences[first] != 0 else None

    def __repr__(self):
        return (f"<ModelDiff {self._a.name!r} -> {self._b.name!r}: {len(self.added)} added, "
                f"{len(self.removed)} removed, {len(self.changed)} changed>")

    def __str__(self):
        head = (f"Model {self._a.name!r} -> {self._b.name!r}: {len(self.added)} added, {len(self.removed)} removed, "
                f"{len(self.changed)} changed" + (f", {len(self.renamed)} renamed" if self.renamed else ""))
        lines = [head]
        lines += [f"+ {path} ({self._classes['b', path]})" for path in self.added]
        lines += [f"- {path} ({self._classes['a', path]})" for path in self.removed]
        for path, change in self.changes.items():
            renamed = f" (was {change.before})" if change.before != path else ""
            lines.append(f"~ {path} ({self._classes['b', path]}){renamed}")
            lines += [f"    {line}" for line in change.details()]
        if self.outputs:
            lines.append(f"~ model outputs: {', '.join(self.outputs[0])} -> {', '.join(self.outputs[1])}")
        if self.renamed:
            shown = [f"{old} -> {new}" for old, new in list(self.renamed.items())[:_RENAMES_LISTED]]
            more = len(self.renamed) - len(shown)
            lines.append("renamed: " + ", ".join(shown) + (f" and {more} more" if more else ""))
        if self.output_differences is not None:
            first = self.first_disagreement
            lines.append("outputs agree on the data at every matched layer" if first is None else
                         f"outputs first differ at {first} (largest absolute difference "
                         f"{self.output_differences[first]:.3g})")
        if self.is_empty and len(lines) == 1:
            lines.append("no differences")
        return "\n".join(lines)

    def _rows(self):
        """``(kind, path, class, details)`` per difference, as the notebook table shows them."""
        rows = [("added", path, self._classes["b", path], "") for path in self.added]
        rows += [("removed", path, self._classes["a", path], "") for path in self.removed]
        rows += [("changed", path, self._classes["b", path], "; ".join(change.details()))
                 for path, change in self.changes.items()]
        if self.outputs:
            rows.append(("changed", "(model outputs)", "", f"{', '.join(self.outputs[0])} -> "
                         f"{', '.join(self.outputs[1])}"))
        if self.first_disagreement is not None:
            path = self.first_disagreement
            rows.append(("outputs", path, self._classes["b", path],
                         f"first to differ on the data, by {self.output_differences[path]:.3g}"))
        return rows

    def _repr_html_(self):
        """Notebook display: the head line, then a table of the differences, each row coloured by its kind."""
        head = html.escape(str(self).splitlines()[0])
        cells = "".join(
            f'<tr style="background:{_FILLS[kind]}"><td>{kind}</td><td><code>{html.escape(path)}</code></td>'
            f"<td>{html.escape(class_name)}</td><td>{html.escape(details)}</td></tr>"
            for kind, path, class_name, details in self._rows())
        table = (f'<table><tr><th>change</th><th>layer</th><th>class</th><th>details</th></tr>{cells}</table>'
                 if cells else "<p>no differences</p>")
        return f"<div><b>{head}</b>{table}</div>"

    def plot(self, to_file) -> None:
        """Draws both models side by side in ``to_file`` (``.svg``, ``.png``, ``.pdf`` or ``.dot``),
        the first on the left: removed layers red, added green, changed orange with what
        changed, and with ``data`` the first layer whose outputs differ purple.

        Args:
            to_file: the file to write; its extension picks the format, as for ``plot_model``.

        Example:
            >>> import os, tempfile
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,), name="x")
            >>> a = Model(x, Dense(2, name="d")(x))
            >>> path = os.path.join(tempfile.mkdtemp(), "diff.svg")
            >>> diff(a, a).plot(path)
            >>> os.path.getsize(path) > 0
            True
        """
        from graph._dot import scene_to_dot
        from graph._layout import layout_scene
        from graph._render import BUILT_IN_FORMATS, write, write_built_in
        from graph.plot import dot_installed

        to_file = os.fspath(to_file)
        scene, name = self._scene(), f"{self._a.name} -> {self._b.name}"
        dot = scene_to_dot(scene, name)
        extension = os.path.splitext(to_file)[1][1:].lower() or "png"
        if extension in ("dot", "gv"):
            with open(to_file, "w", encoding="utf-8") as file:
                file.write(dot.source)
        elif dot_installed() and extension in graphviz.FORMATS:
            write(dot, to_file, extension, _DPI, name)
        elif extension in BUILT_IN_FORMATS:
            write_built_in(scene, layout_scene(scene, "TB"), to_file, extension, _DPI, name)
        else:
            raise ValueError(f"ModelDiff.plot cannot write {to_file!r}: it draws .svg, .png, .pdf"
                             f"{' and the formats of graphviz' if dot_installed() else ''}, or .dot for the DOT "
                             "source.")

    def _scene(self):
        """Both models' pictures side by side, each in a cluster, their differences coloured."""
        from graph._scene import Scene, build_scene
        from graph._walk import walk

        scene = Scene()
        first = ", purple: first output to differ" if self.first_disagreement else ""
        for side, model, key in (("a", self._a, "red: removed, orange: changed"),
                                 ("b", self._b, "green: added, orange: changed")):
            title = (((f"{'before' if side == 'a' else 'after'}: {model.name}", True),), ((key + first, False),))
            boxes, clusters, edges = _side_scene(build_scene(walk(model, expand_nested=True)),
                                                 self._box_marks(side), f"{side}%/", title)
            scene.boxes.update(boxes)
            scene.clusters.update(clusters)
            scene.edges += edges
        return scene

    def _box_marks(self, side):
        """``{path: (kind, note)}`` for the boxes of model ``side`` (``"a"`` or ``"b"``) that ``plot`` colours."""
        marks = {}
        if side == "a":
            marks.update((path, ("removed", "removed")) for path in self.removed)
            marks.update((change.before, ("changed", "changed: " + change.summary()))
                         for change in self.changes.values())
        else:
            marks.update((path, ("added", "added")) for path in self.added)
            marks.update((path, ("changed", "changed: " + change.summary())) for path, change in self.changes.items())
        first = self.first_disagreement
        if first is not None and first not in marks:
            before = {new: old for old, new in self.renamed.items()}.get(first, first)
            marks[first if side == "b" else before] = (
                "outputs", f"outputs differ by {self.output_differences[first]:.3g}")
        return marks


def diff(a, b, data=None) -> ModelDiff:
    """Compares two models layer by layer: what ``b`` adds, removes and changes.

    Layers are matched by their place in the graph (see the module's docstring),
    so automatic names that differ do not matter; nested models are compared
    inside, their layers named by qualified paths (``"block/conv"``).

    Args:
        a: the first model (functional, or Sequential with a known input shape).
        b: the second.
        data: optional input batch for both models, as either model takes it
            when called (an array, a list, a dict): adds each matched layer's
            largest absolute output difference on it
            (``ModelDiff.output_differences``), to find where two versions start
            to disagree.

    Returns:
        A ModelDiff.

    Raises:
        ValueError: a model without a graph to compare (subclassed, or
            Sequential without an input shape).

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model, clone_model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> model = Model(x, Dense(2, name="out")(Dense(4, name="hidden")(x)))
        >>> copy = clone_model(model)
        >>> copy.set_weights(model.get_weights())
        >>> diff(model, copy).is_empty
        True
        >>> _ = copy.get_layer("hidden").bias.assign(np.ones(4, "float32"))
        >>> diff(model, copy, data=np.ones((2, 3), "float32")).first_disagreement
        'hidden'
    """
    plans = [_plan_of(model) for model in (a, b)]
    for model, plan in zip((a, b), plans):
        if plan is None:
            raise ValueError(f"diff compares models by their graphs, but model {model.name!r} "
                             f"({type(model).__name__}) has none: a subclassed model, or a Sequential model whose "
                             "input shape is not known yet. Pass functional models, or build the Sequential model "
                             "(model.build(input_shape)) first.")
    found = _Found()
    pairs = _compare(_Side(plans[0], ""), _Side(plans[1], ""), found)
    outputs = None
    if [pairs.slots.get(slot) for slot in plans[1].output_slots] != list(plans[0].output_slots):
        outputs = tuple([_tensor_name(side, slot) for slot in side.plan.output_slots] for side in (pairs.a, pairs.b))
    differences = None
    if data is not None:
        differences = _output_differences(pairs, a._standardize_inputs(data), b._standardize_inputs(data))
    return ModelDiff(a, b, found.added, found.removed, found.changes, found.renamed, found.classes, outputs,
                     differences)


@dataclass
class _Found:
    """What the comparison finds, at every depth."""

    added: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    changes: dict = field(default_factory=dict)
    renamed: dict = field(default_factory=dict)
    classes: dict = field(default_factory=dict)


class _Side:
    """One model's plan as matching reads it: who reads and who makes each slot,
    and the calls by the slots they read."""

    def __init__(self, plan, prefix):
        self.plan = plan
        self.prefix = prefix
        self.steps = plan.steps
        self.readers = {}  # slot -> indices of the steps reading it
        self.maker = {}  # slot -> index of the step making it
        self.by_inputs = {}  # tuple of slots read -> step indices
        self.by_name = {}  # (layer name, class, call index) -> step index
        self.by_layer = {}  # (layer name, class) -> the indices of its steps
        for index, step in enumerate(self.steps):
            for slot in dict.fromkeys(step.in_slots):
                self.readers.setdefault(slot, []).append(index)
            for slot in step.out_slots:
                self.maker[slot] = index
            self.by_inputs.setdefault(tuple(step.in_slots), []).append(index)
            self.by_name.setdefault((step.layer.name, _class(step.layer), _call_index(step)), index)
            self.by_layer.setdefault((step.layer.name, _class(step.layer)), []).append(index)

    def path(self, layer):
        return self.prefix + layer.name


class _Pairs:
    """The matched calls and tensors of two plans: ``steps`` from the second's
    step index to the first's, ``slots`` likewise for tensors."""

    def __init__(self, a, b):
        self.a, self.b = a, b
        self.steps = {}
        self.taken = set()  # the first plan's matched step indices
        self.slots = dict(zip(b.plan.input_slots, a.plan.input_slots))
        self.configs = {}  # id(layer) -> its config without the name
        self.nested = []  # per pair of nested models matched: their _Pairs, (b, a) step indices of the first call

    def match(self, b_index, a_index):
        self.steps[b_index] = a_index
        self.taken.add(a_index)
        for b_slot, a_slot in zip(self.b.steps[b_index].out_slots, self.a.steps[a_index].out_slots):
            self.slots[b_slot] = a_slot

    def config(self, layer):
        if id(layer) not in self.configs:
            config = layer.get_config() if _plan_of(layer) is None else {}
            config.pop("name", None)
            self.configs[id(layer)] = config
        return self.configs[id(layer)]

    def same_kind(self, b_layer, a_layer):
        return _class(b_layer) == _class(a_layer) and _equal(self.config(b_layer), self.config(a_layer))

    # ------------------------------------------------------------------ rules
    def exact(self, index):
        """Rule 2: the call of the same class that reads the matched tensors."""
        step = self.b.steps[index]
        read = tuple(self.slots.get(slot) for slot in step.in_slots)
        if None in read:
            return None
        candidates = [i for i in self.a.by_inputs.get(read, ()) if i not in self.taken
                      and _class(self.a.steps[i].layer) == _class(step.layer)]
        named = [i for i in candidates if self.a.steps[i].layer.name == step.layer.name]
        if named:
            return named[0]
        for i in candidates:  # one that a layer of its name will claim is left to it (a layer inserted before it;
            # that layer's call index may differ: a model edited by surgery calls the same layers again)
            claimed = self.b.by_layer.get((self.a.steps[i].layer.name, _class(step.layer)), ())
            if all(index in self.steps for index in claimed):
                return i
        return None

    def by_name(self, index):
        """Rule 3: the call of a layer of the same name and class, and the same call index;
        else its first call not matched (a model edited by surgery calls the same layers
        again, so their call indices are shifted)."""
        step = self.b.steps[index]
        found = self.a.by_name.get((step.layer.name, _class(step.layer), _call_index(step)))
        if found is not None and found not in self.taken:
            return found
        return next((i for i in self.a.by_layer.get((step.layer.name, _class(step.layer)), ()) if i not in self.taken),
                    None)

    def across_gap(self, index):
        """Rule 4: a call of the same class and config, reached from the matched tensors this
        call's inputs come from through calls not matched, nearest first."""
        step = self.b.steps[index]
        anchors, pending, seen = [], [(slot, 0) for slot in step.in_slots], set()
        while pending:
            slot, depth = pending.pop()
            if slot in seen:
                continue
            seen.add(slot)
            if slot in self.slots:
                anchors.append(self.slots[slot])
            elif slot in self.b.maker and self.b.maker[slot] not in self.steps and depth < _LONGEST_GAP:
                pending += [(read, depth + 1) for read in self.b.steps[self.b.maker[slot]].in_slots]
        frontier, seen = list(dict.fromkeys(anchors)), set()
        for _ in range(_LONGEST_GAP + 1):
            found, following = [], []
            for slot in frontier:
                for reader in self.a.readers.get(slot, ()):
                    if reader in self.taken or reader in seen:
                        continue
                    seen.add(reader)
                    if self.same_kind(step.layer, self.a.steps[reader].layer):
                        found.append(reader)
                    following += self.a.steps[reader].out_slots
            if found:
                return min(found)
            frontier = following
        return None

    def in_place(self, index):
        """Rule 5: a call not matched that reads the same matched tensors, whatever its class."""
        read = tuple(self.slots.get(slot) for slot in self.b.steps[index].in_slots)
        if None in read:
            return None
        return next((i for i in self.a.by_inputs.get(read, ()) if i not in self.taken), None)

    def run(self):
        """Matches the calls of the two plans by the rules, in order."""
        waiting = list(range(len(self.b.steps)))
        for rule in (None, self.by_name, self.across_gap, self.in_place):
            progressed = True
            while progressed and waiting:
                progressed, left = False, []
                for index in waiting:
                    found = self.exact(index)
                    if found is None and rule is not None:
                        found = rule(index)
                        progressed = progressed or found is not None
                    if found is None:
                        left.append(index)
                    else:
                        self.match(index, found)
                waiting = left


def _compare(a, b, found):
    """Matches the calls of ``a`` and ``b`` (``_Side``) and records in ``found`` what
    differs, nested models compared inside; returns the ``_Pairs``."""
    pairs = _Pairs(a, b)
    pairs.run()
    layer_of = {}  # id(b layer) -> a layer
    paired = set()  # ids of the a layers matched
    input_pairs = zip(b.plan.inputs, a.plan.inputs)
    call_pairs = ((b.steps[i].layer, a.steps[j].layer) for i, j in sorted(pairs.steps.items()))
    for b_layer, a_layer in (*((t._keras_history.layer, s._keras_history.layer) for t, s in input_pairs),
                             *call_pairs):
        if id(b_layer) not in layer_of and id(a_layer) not in paired:
            layer_of[id(b_layer)] = a_layer
            paired.add(id(a_layer))
    for layer in a.plan.layers:
        found.classes["a", a.path(layer)] = _class(layer)
        if id(layer) not in paired:
            found.removed.append(a.path(layer))
    calls = {}  # id(b layer) -> [(b step index, a step index)]
    for b_index, a_index in sorted(pairs.steps.items()):
        calls.setdefault(id(b.steps[b_index].layer), []).append((b_index, a_index))
    for layer in b.plan.layers:
        path = b.path(layer)
        found.classes["b", path] = _class(layer)
        if id(layer) not in layer_of:
            found.added.append(path)
            continue
        old = layer_of[id(layer)]
        if a.path(old) != path:
            found.renamed[a.path(old)] = path
        change = _change(pairs, old, layer, calls.get(id(layer), []))
        if change:
            found.changes[path] = change
        matched_calls = calls.get(id(layer), [])
        inner = (_plan_of(old), _plan_of(layer))
        if None not in inner:
            nested = _compare(_Side(inner[0], a.path(old) + "/"), _Side(inner[1], path + "/"), found)
            pairs.nested.append((nested, matched_calls[0] if matched_calls else None))
    return pairs


def _change(pairs, old, new, calls):
    """The LayerChange of the matched layers ``old`` (first model) and ``new``."""
    a, b = pairs.a, pairs.b
    class_name = None if _class(old) == _class(new) else (_class(old), _class(new))
    before, after = pairs.config(old), pairs.config(new)
    config = {key: (before.get(key), after.get(key)) for key in dict.fromkeys([*before, *after])
              if not _equal(before.get(key), after.get(key))}
    weights = {}
    if _plan_of(new) is None:
        old_shapes = {w.name: tuple(w.shape) for w in old.weights}
        new_shapes = {w.name: tuple(w.shape) for w in new.weights}
        weights = {name: (old_shapes.get(name), new_shapes.get(name)) for name in dict.fromkeys([*old_shapes,
                   *new_shapes]) if old_shapes.get(name) != new_shapes.get(name)}
    inputs = {}
    for b_index, a_index in calls:
        b_step, a_step = b.steps[b_index], a.steps[a_index]
        if [pairs.slots.get(slot) for slot in b_step.in_slots] != list(a_step.in_slots):
            inputs[f"{b.path(new)}[{_call_index(b_step)}]"] = (
                [_tensor_name(a, slot) for slot in a_step.in_slots],
                [_tensor_name(b, slot) for slot in b_step.in_slots])
    return LayerChange(a.path(old), b.path(new), class_name, config, weights, inputs)


def _output_differences(pairs, a_arrays, b_arrays):
    """``{path in the second model: largest absolute difference}`` of the outputs of every
    matched layer, those that differ first, each group in plan order (a nested model's
    layers, then the nested model)."""
    a_values = _all_values(pairs.a.plan, a_arrays)
    b_values = _all_values(pairs.b.plan, b_arrays)
    ordered = {}
    for b_input, a_input in zip(pairs.b.plan.inputs, pairs.a.plan.inputs):
        b_slot, a_slot = pairs.b.plan.slot_of[id(b_input)], pairs.a.plan.slot_of[id(a_input)]
        ordered[pairs.b.path(b_input._keras_history.layer)] = _largest_difference(
            [a_values[a_slot]], [b_values[b_slot]])
    nested = {id(pairs_and_call[0].b.plan): pairs_and_call for pairs_and_call in pairs.nested}
    for b_index, a_index in sorted(pairs.steps.items()):
        b_step, a_step = pairs.b.steps[b_index], pairs.a.steps[a_index]
        path = pairs.b.path(b_step.layer)
        difference = _largest_difference([a_values[s] for s in a_step.out_slots],
                                          [b_values[s] for s in b_step.out_slots])
        inner = _plan_of(b_step.layer)
        if inner is not None and id(inner) in nested:  # a nested model's layers come before the model's own output
            inner_pairs, first_call = nested.pop(id(inner))
            if first_call == (b_index, a_index):
                ordered.update(_output_differences(inner_pairs, _fed(pairs.a, a_step, a_values),
                                                   _fed(pairs.b, b_step, b_values)))
        ordered[path] = max(ordered.get(path, 0.0), difference)
    return {**{p: d for p, d in ordered.items() if d != 0}, **{p: d for p, d in ordered.items() if d == 0}}


def _all_values(plan, arrays):
    """The value of every slot of ``plan`` on ``arrays``, by slot."""
    produced = [tensor for step in plan.steps for tensor in step.node.output_tensors]
    values = ExecutionPlan(plan.inputs, produced).run(list(arrays)) if produced else []
    slots = [slot for step in plan.steps for slot in step.out_slots]
    return {**dict(zip(plan.input_slots, arrays)), **dict(zip(slots, values))}


def _fed(side, step, values):
    """The arrays a call of a nested model feeds to each of its inputs."""
    fed = step.node.fed_inputs or step.node.input_tensors
    return [values[side.plan.slot_of[id(tensor)]] for tensor in fed]


def _largest_difference(old, new):
    """The largest absolute difference between two lists of arrays: ``inf`` when their shapes
    differ, NaN where one holds a NaN and the other not (equal values, NaNs and infinities agree)."""
    if len(old) != len(new) or any(np.shape(x) != np.shape(y) for x, y in zip(old, new)):
        return math.inf
    largest = 0.0
    for x, y in zip(old, new):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        with np.errstate(invalid="ignore"):
            gap = np.abs(x - y)
        gap[(x == y) | (np.isnan(x) & np.isnan(y))] = 0.0
        if gap.size:
            largest = max(largest, float(np.max(gap)), key=lambda value: (math.isnan(value), value))
    return largest


def _tensor_name(side, slot):
    """The qualified name of the tensor in ``slot`` of ``side``'s plan: ``"block/conv[0][0]"``."""
    layer, node_index, tensor_index = side.plan.tensors[slot]._keras_history
    return f"{side.prefix}{layer.name}[{node_index}][{tensor_index}]"


def _call_index(step):
    return step.node.output_tensors[0]._keras_history.node_index


def _class(layer):
    return type(layer).__name__


def _equal(x, y):
    """Whether two config values are equal (arrays compared element by element)."""
    try:
        return bool(x == y)
    except ValueError:
        return bool(np.array_equal(x, y))


def _side_scene(scene, marks, top, title):
    """The boxes, clusters and edges of ``scene`` (``graph._scene``) with their keys under
    ``top`` (``"before/"``), all in one cluster titled ``title``, and the boxes named in
    ``marks`` (``{key: (kind, note)}``) filled with their kind's colour and noted."""
    from graph._scene import Cluster

    boxes = {}
    for key, box in scene.boxes.items():
        kind, note = _mark(marks, key)
        label = box.label if note is None else box.label + (((note, False),),)
        boxes[top + key] = replace(box, key=top + key, label=label, fill=_FILLS.get(kind),
                                   cluster=top + (box.cluster or ""))
    clusters = {top: Cluster(top, title, None, dashed=False, first=next(iter(boxes), None))}
    for key, cluster in scene.clusters.items():
        clusters[top + key] = replace(cluster, key=top + key, parent=top + (cluster.parent or ""),
                                      first=None if cluster.first is None else top + cluster.first)
    edges = [replace(edge, source=top + edge.source, target=top + edge.target) for edge in scene.edges]
    return boxes, clusters, edges


def _mark(marks, key):
    """The mark of the box ``key``: its own, or that of a nested model added or removed
    around it (``"block"`` for ``"block/conv"``); ``(None, None)`` without one."""
    parts = key.split("/")
    for end in range(len(parts), 0, -1):
        mark = marks.get("/".join(parts[:end]))
        if mark is not None and (end == len(parts) or mark[0] in ("added", "removed")):
            return mark
    return None, None
