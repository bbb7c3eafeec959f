"""Graph surgery: edit a functional model into a new one, leaving the original intact.

Each function first finds the calls (Nodes) to change, then rebuilds the model by
replaying its execution plan on new Inputs (``ExecutionPlan.replay``, as
``clone_model`` does), changing those calls on the way. Untouched layers are the
same layer objects called again: their weights are the original's, bit for bit, a
shared layer stays one layer, and training either model trains both. The new model's
graph is a new set of Nodes: each layer gains a call, as a layer called by two models
does, so ``layer.output`` (of its only call) raises and the new model names its calls
by their index, ``"conv[1]"`` (``model.get_tensor("conv[0][0]")`` still names the
original's). A nested model holding a change is rebuilt as a new model of the same
name (a Sequential one as a functional model); one without is reused as is. The new
model is not compiled.

``where`` names the places to change, at any depth:

- a layer's qualified name, ``"block/conv"`` (engine/network/qualified_names.py), or its
  plain name when one layer at any depth has it: every call of that layer;
- a call, ``"shared[1]"``: that call only;
- a layer instance, a layer class (``Conv2D``: every call of every Conv2D) or a
  predicate on layers (``lambda layer: layer.name.startswith("block1")``).

A new ``layer`` is an instance (used at one matched layer: its calls share it) or a
factory ``lambda old: NewLayer(...)``, called once per matched layer.
"""

import graphlib
import inspect

from engine import tree
from engine.network.cloning import _functional_like_constructor
from engine.network.functional import Functional, functional_of
from engine.network.input_layer import Input, InputLayer
from engine.network.keras_tensor import KerasTensor
from engine.network.layer import Layer
from engine.network.qualified_names import (_CALL_SUFFIX, find_layer, find_node, find_tensor, layer_paths, node_paths,
                                            path_of)



def insert_after(model: Functional, where, layer) -> Functional:
    """Returns a new model with ``layer`` applied to the output of every call ``where`` matches.

    Args:
        model: a functional model.
        where: the places (see the module docstring); an Input by name too.
        layer: a layer, or ``lambda old: NewLayer(...)`` when ``where`` matches several layers.

    Example:
        >>> from engine import Input, Model
        >>> from layers import BatchNormalization, Dense
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(2)(Dense(4)(x)))
        >>> new = insert_after(model, Dense, lambda old: BatchNormalization())
        >>> [type(l).__name__ for l in new.layers]
        ['InputLayer', 'Dense', 'BatchNormalization', 'Dense', 'BatchNormalization']
    """
    calls = _matched_calls(model, where, "insert_after", inputs_allowed=True)
    new_layer = _layer_maker(layer, calls, "insert_after")

    def edit(node, args, call, new_tensor):
        outputs = call(args)
        if len(outputs) != 1:
            raise ValueError(
                f"Cannot insert a layer after {_described(model, node)}: the call makes {len(outputs)} tensors and "
                "insert_after applies a layer to one. Use replace() with a layer making all of them, or "
                "replace_pattern().")
        return [new_layer(node.outbound_layer)(outputs[0])]

    return _rebuild(model, {id(node): edit for _, node in calls}, _holders(model, [path for path, _ in calls]))


def insert_before(model: Functional, where, layer) -> Functional:
    """Returns a new model with ``layer`` applied to the input of every call ``where`` matches.

    Args:
        model: a functional model.
        where: the places (see the module docstring); each call must take one tensor.
        layer: a layer, or ``lambda old: NewLayer(...)`` when ``where`` matches several layers.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense, Dropout
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(2, name="head")(Dense(4)(x)))
        >>> [type(l).__name__ for l in insert_before(model, "head", Dropout(0.5)).layers]
        ['InputLayer', 'Dense', 'Dropout', 'Dense']
    """
    calls = _matched_calls(model, where, "insert_before")
    new_layer = _layer_maker(layer, calls, "insert_before")

    def edit(node, args, call, new_tensor):
        inputs, extra, kwargs = args
        if not isinstance(inputs, KerasTensor):
            raise ValueError(
                f"Cannot insert a layer before {_described(model, node)}: its first argument is "
                f"{_count(tree.flatten(inputs))} and insert_before applies a layer to one tensor. Use insert_after() "
                "on the layers making its inputs.")
        return call((new_layer(node.outbound_layer)(inputs), extra, kwargs))

    return _rebuild(model, {id(node): edit for _, node in calls}, _holders(model, [path for path, _ in calls]))


def replace(model: Functional, where, layer) -> Functional:
    """Returns a new model calling ``layer`` where ``where`` matches, on the same arguments.

    Args:
        model: a functional model.
        where: the places (see the module docstring).
        layer: a layer, or ``lambda old: NewLayer(...)`` when ``where`` matches several layers.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense, ReLU
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(2, activation="relu", name="out")(x))
        >>> new = replace(model, "out", lambda old: Dense(old.units, activation="tanh", name="out"))
        >>> new.get_layer("out").get_config()["activation"], model.get_layer("out").get_config()["activation"]
        ('tanh', 'relu')
    """
    calls = _matched_calls(model, where, "replace")
    new_layer = _layer_maker(layer, calls, "replace")

    def edit(node, args, call, new_tensor):
        inputs, extra, kwargs = args
        return _flat(new_layer(node.outbound_layer)(inputs, *extra, **kwargs))

    return _rebuild(model, {id(node): edit for _, node in calls}, _holders(model, [path for path, _ in calls]))


def remove(model: Functional, where) -> Functional:
    """Returns a new model without the calls ``where`` matches: each call's input
    takes the place of its output, so each must take one tensor and make one of
    the same shape and dtype (a Dropout, an activation, a normalization).

    Args:
        model: a functional model.
        where: the places (see the module docstring).

    Raises:
        ValueError: a matched call changes the shape or dtype, or does not map one tensor to one.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense, Dropout
        >>> x = Input(shape=(3,))
        >>> model = Model(x, Dense(2)(Dropout(0.5)(Dense(4)(x))))
        >>> [type(l).__name__ for l in remove(model, Dropout).layers]
        ['InputLayer', 'Dense', 'Dense']
    """
    calls = _matched_calls(model, where, "remove")

    def edit(node, args, call, new_tensor):
        tensors = [t for t in tree.flatten(args) if isinstance(t, KerasTensor)]
        if len(tensors) != 1 or len(node.output_tensors) != 1:
            raise ValueError(
                f"Cannot remove {_described(model, node)}: it takes {_count(tensors)} and makes "
                f"{_count(node.output_tensors)}, and only a call of one tensor making one can be removed (its input "
                "takes its output's place). Use rewire() to say which tensor takes the place of which.")
        source, expected = tensors[0], node.output_tensors[0]
        if tuple(source.shape) != tuple(expected.shape) or source.dtype != expected.dtype:
            raise ValueError(
                f"Cannot remove {_described(model, node)}: its input has shape {tuple(source.shape)} ({source.dtype}) "
                f"but the layers after it read its output of shape {tuple(expected.shape)} ({expected.dtype}). Only a "
                "layer whose output is shaped like its input can be removed; replace() it with a layer making "
                f"{tuple(expected.shape)} instead.")
        return [source]

    return _rebuild(model, {id(node): edit for _, node in calls}, _holders(model, [path for path, _ in calls]))


def rewire(model: Functional, tensor, new_source) -> Functional:
    """Returns a new model in which every reader of ``tensor`` (a model output
    too) reads ``new_source`` instead; layers no output depends on any more drop out.

    Args:
        model: a functional model.
        tensor: a KerasTensor of the graph or its qualified name (``"conv[0][0]"``, an input's name).
        new_source: the tensor to read in its place, of the same shape and dtype, in the same
            (nested) model, not computed from ``tensor``'s readers.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Add, Dense
        >>> x = Input(shape=(4,), name="x")
        >>> h = Dense(4, name="h")(x)
        >>> model = Model(x, Add(name="skip")([Dense(4, name="f")(h), h]))
        >>> [l.name for l in rewire(model, "f[0][0]", "x").layers]
        ['x', 'h', 'skip']
    """
    old, old_path = _tensor_of(model, tensor)
    new, new_path = _tensor_of(model, new_source)
    level = _level(old_path)
    if _level(new_path) != level:
        raise ValueError(
            f"Cannot rewire {old_path!r} to {new_path!r} in model {model.name!r}: they are in different models "
            f"({_where_level(level)} and {_where_level(_level(new_path))}). Rewire two tensors of one model; to "
            "change what a nested model computes, rewire inside it.")
    if tuple(old.shape) != tuple(new.shape) or old.dtype != new.dtype:
        raise ValueError(
            f"Cannot rewire {old_path!r} of shape {tuple(old.shape)} ({old.dtype}) to {new_path!r} of shape "
            f"{tuple(new.shape)} ({new.dtype}) in model {model.name!r}: its readers expect the shape and dtype they "
            "were built on. Pick a tensor of the same shape, or insert a layer making it.")
    target = find_layer(model, level) if level else model
    order = _rewired_order(target.plan, old, new, model, old_path, new_path)
    holders = _holders(model, [level + "/"] if level else [])
    return _rebuild(model, {}, holders, _Rewire(target, old, new, order))


def replace_pattern(model: Functional, pattern, replacement) -> Functional:
    """Returns a new model in which every match of ``pattern`` is replaced by ``replacement``
    called on the match's inputs, as torch.fx's subgraph rewriter does.

    ``pattern`` and ``replacement`` are functions of the same symbolic tensors.
    ``pattern`` is traced on new Inputs (all shaped like one tensor of the model, the
    first on which it builds) into a template graph; a match is a part of the model
    (at any depth, within one model) with the template's connections and a layer of
    the same class at each of its calls (configs are not compared: ``Conv2D(1, 1)``
    matches every Conv2D), whose inner tensors nothing outside it reads. Matches do
    not overlap; the first in the model's order wins.

    Args:
        model: a functional model.
        pattern: ``fn(*tensors) -> tensor`` built of new layers.
        replacement: ``fn(*tensors) -> tensor`` of the same arguments, called once per match.

    Example:
        >>> from engine import Input, Model
        >>> from layers import BatchNormalization, Conv2D, ReLU
        >>> x = Input(shape=(8, 8, 3))
        >>> model = Model(x, ReLU()(BatchNormalization()(Conv2D(4, 3)(x))))
        >>> new = replace_pattern(model, lambda t: ReLU()(BatchNormalization()(Conv2D(1, 1)(t))),
        ...                       lambda t: Conv2D(4, 3, activation="relu")(t))
        >>> [type(l).__name__ for l in new.layers]
        ['InputLayer', 'Conv2D']
    """
    template = _trace(model, pattern)
    matches = _pattern_matches(model, template)
    if not matches:
        classes = " -> ".join(type(step.layer).__name__ for step in template.plan.steps)
        raise ValueError(
            f"The pattern {_name_of(pattern)} ({classes}) matched nothing in model {model.name!r}: no part of it, at "
            "any depth, has calls of those classes connected as in the pattern with inner tensors read only inside "
            "it. Check the pattern's layer classes and the order of its arguments.")
    edits, levels = {}, []
    for level, match in matches:
        levels.append(level + "/" if level else "")
        for node in match.inner:
            edits[id(node)] = _skipped
        edits[id(match.anchor)] = _replacement_edit(replacement, match)
    return _rebuild(model, edits, _holders(model, levels))


# ----------------------------------------------------------------- rebuilding
class _Rewire:
    """The readers of ``old`` read ``new`` instead, in ``target`` (a model of the graph), its steps in ``order``."""

    def __init__(self, target, old, new, order):
        self.target, self.old, self.new, self.order = target, old, new, order


def _rebuild(model, edits, holders, rewiring=None):
    """Replays ``model``'s plan on new Inputs: the calls in ``edits`` (by ``id(node)``)
    go through ``edit(node, args, call, new_tensor)``, the nested models in
    ``holders`` (ids) are rebuilt the same way, every other call is the same layer
    called on the new tensors."""
    rebuilt = {}

    def rebuild(current):
        if id(current) in rebuilt:
            return rebuilt[id(current)]
        plan = current.plan
        inputs = tree.map_structure(_input_like, current.input)
        new_of = {}
        rewired = rewiring if rewiring is not None and rewiring.target is current else None

        def new_tensor(original):
            return new_of[id(original)]

        values = []
        for original, fresh in zip(plan.inputs, tree.flatten(inputs)):
            node = _node_of(original)
            value = edits[id(node)](node, (fresh, (), {}), lambda args: [args[0]], new_tensor)[0] \
                if id(node) in edits else fresh
            new_of[id(original)] = value
            values.append(value)

        def action(step, *args):
            if rewired is not None and id(rewired.old) in new_of:
                old = new_of[id(rewired.old)]
                args = tree.map_structure(lambda leaf: new_of[id(rewired.new)] if leaf is old else leaf, args)

            def call(arguments):
                layer = rebuild(step.layer) if id(step.layer) in holders else step.layer
                first, extra, kwargs = arguments
                return _flat(layer(first, *extra, **kwargs))

            edit = edits.get(id(step.node))
            try:
                outputs = call(args) if edit is None else edit(step.node, args, call, new_tensor)
            except Exception as error:
                if edit is None:
                    error.add_note(f"(Raised while graph surgery rebuilt model {current.name!r}: a change before "
                                   f"{path_of(current, step.node)!r} gave it tensors its layer was not built for.)")
                raise
            if len(outputs) != len(step.out_slots):
                raise ValueError(
                    f"Rebuilding {_described(current, step.node)}: the new call makes {len(outputs)} tensors where "
                    f"the original made {len(step.out_slots)}, and the layers after it read those. Make the new "
                    f"layer return {len(step.out_slots)}.")
            new_of.update(zip(map(id, step.node.output_tensors), outputs))
            return outputs

        outputs = plan.replay(values, action, rewired.order if rewired is not None else None)
        if rewired is not None:
            outputs = [new_of[id(rewired.new)] if tensor is rewired.old else value
                       for tensor, value in zip(plan.outputs, outputs)]
        cls = type(current) if _functional_like_constructor(type(current)) else Functional
        new_model = cls(inputs, tree.pack_as(current.output, outputs), name=current.name)
        new_model._trainable = current.trainable  # frozen as the original, leaving the flags of its layers alone
        rebuilt[id(current)] = new_model
        return new_model

    return rebuild(model)


def _input_like(tensor):
    return Input(batch_shape=tensor.shape, dtype=tensor.dtype, name=tensor.name,
                 optional=getattr(tensor._keras_history.layer, "optional", False))


def _node_of(tensor):
    layer, node_index, _ = tensor._keras_history
    return layer.inbound_nodes[node_index]


def _flat(outputs):
    return [outputs] if isinstance(outputs, KerasTensor) else tree.flatten(outputs)


def _holders(model, paths):
    """The ids of the nested models holding the places at ``paths`` (``"a/b/conv[0]"``
    is held by ``a`` and ``a/b``), which must be rebuilt to change them."""
    layers = layer_paths(model)
    holders = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            holder = layers["/".join(parts[:depth])]
            if functional_of(holder) is None:
                raise ValueError(
                    f"Cannot change {path!r} in model {model.name!r}: it is inside {'/'.join(parts[:depth])!r}, a "
                    f"{type(holder).__name__} without a functional graph, which surgery cannot rebuild. Rebuild that "
                    "model yourself, or change the layers around it.")
            holders.add(id(holder))
    return holders


# ----------------------------------------------------------------- matching
def _matched_calls(model, where, function, inputs_allowed=False):
    """``[(path, node)]``: the calls of ``model`` (at any depth) that ``where`` names, in plan order."""
    if functional_of(model) is None:
        raise ValueError(
            f"{function} edits a functional or Sequential model; received {getattr(model, 'name', model)!r} of type "
            f"{type(model).__name__}. A subclassed model has no graph to edit.")
    nodes = node_paths(model)
    if isinstance(where, str):
        calls = _calls_named(model, where, nodes)
    else:
        if isinstance(where, Layer):
            matches = lambda layer: layer is where  # noqa: E731
        elif isinstance(where, type):
            matches = lambda layer: isinstance(layer, where)  # noqa: E731
        elif callable(where):
            matches = where
        else:
            raise TypeError(
                f"{function}: `where` names the places to change: a layer's name or qualified path, a call "
                f"('shared[1]'), a layer, a layer class or a predicate on layers. Received {where!r} of type "
                f"{type(where).__name__}.")
        calls = [(path, node) for path, node in nodes.items()
                 if not isinstance(node.outbound_layer, InputLayer) and matches(node.outbound_layer)]
    if not calls:
        raise ValueError(
            f"{function}: {_where_text(where)} matched no layer of model {model.name!r}. Its layer classes are: "
            f"{', '.join(sorted({type(n.outbound_layer).__name__ for n in nodes.values()}))}.")
    inputs = [_CALL_SUFFIX.match(path).group(1) for path, node in calls if isinstance(node.outbound_layer, InputLayer)]
    if inputs and not inputs_allowed:
        raise ValueError(
            f"{function}: {_where_text(where)} names the Input {inputs[0]!r} of model {model.name!r}, which "
            f"{function} cannot change: only insert_after() edits an Input (a layer applied to it).")
    return calls


def _calls_named(model, where, nodes):
    """The calls a string names: a layer's path (or its plain name, if one layer at any depth has it), or a call."""
    layers = layer_paths(model)
    if where not in layers and "/" not in where and not _CALL_SUFFIX.match(where):
        named = [path for path in layers if path.rsplit("/", 1)[-1] == where]
        if len(named) > 1:
            raise ValueError(
                f"{where!r} is ambiguous in model {model.name!r}: {len(named)} layers have that name "
                f"({', '.join(map(repr, named))}). Pass the qualified path of the one to change.")
        where = named[0] if named else where
    if where in layers:
        return [(path, node) for path, node in nodes.items() if _CALL_SUFFIX.match(path).group(1) == where]
    if _CALL_SUFFIX.match(where):
        node = find_node(model, where)
        return [(path_of(model, node), node)]
    find_layer(model, where)  # raises, naming the closest paths
    raise AssertionError(where)


def _layer_maker(layer, calls, function):
    """``fn(old_layer) -> new layer`` from an instance or a factory; a factory is
    called once per matched layer, so the calls of a shared layer share the new one."""
    if isinstance(layer, Layer):
        distinct = {}
        for path, node in calls:
            distinct.setdefault(id(node.outbound_layer), _CALL_SUFFIX.match(path).group(1))
        distinct = list(distinct.values())
        if len(distinct) > 1:
            kind = type(layer).__name__
            raise ValueError(
                f"{function} matched {len(distinct)} layers ({_listed(distinct)}), and the one {kind} instance "
                f"{layer.name!r} would be shared by all of them by accident (one set of weights). Pass a factory "
                f"instead, which makes one new layer per matched layer: `lambda old: {kind}(...)`.")
        return lambda old: layer
    if isinstance(layer, type) or not callable(layer):
        raise TypeError(
            f"{function} takes a layer instance or a factory `lambda old: NewLayer(...)` making one from the layer it "
            f"replaces or follows; received {layer!r}.")
    made = {}

    def make(old):
        if id(old) not in made:
            new = layer(old)
            if not isinstance(new, Layer):
                raise TypeError(
                    f"The factory given to {function} returned {new!r} of type {type(new).__name__} for layer "
                    f"{old.name!r}; it must return a new layer.")
            made[id(old)] = new
        return made[id(old)]

    return make


def _tensor_of(model, tensor):
    """``(tensor, its qualified name)`` for a KerasTensor of the graph or a name."""
    if isinstance(tensor, str):
        tensor = find_tensor(model, tensor)
    elif not isinstance(tensor, KerasTensor):
        raise TypeError(
            f"rewire takes tensors of model {model.name!r} or their qualified names ('conv[0][0]'); received "
            f"{tensor!r} of type {type(tensor).__name__}.")
    return tensor, path_of(model, tensor)


def _level(path):
    """The qualified name of the model holding the tensor or call at ``path`` ('' for the model itself)."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _where_level(level):
    return f"nested model {level!r}" if level else "the outer model"


def _rewired_order(plan, old, new, model, old_path, new_path):
    """The plan's steps in an order where the readers of ``old`` come after the maker of ``new`` (and of ``old``,
    whose new tensor is how the rebuild finds the arguments to change)."""
    makers = {slot: index for index, step in enumerate(plan.steps) for slot in step.out_slots}
    old_slot, new_slot = plan.slot_of[id(old)], plan.slot_of[id(new)]
    sorter = graphlib.TopologicalSorter()
    for index, step in enumerate(plan.steps):
        reads = step.in_slots + (new_slot,) if old_slot in step.in_slots else step.in_slots
        sorter.add(index, *(makers[slot] for slot in reads if slot in makers))
    try:
        return [plan.steps[index] for index in sorter.static_order()]
    except graphlib.CycleError:
        raise ValueError(
            f"Cannot rewire {old_path!r} to {new_path!r} in model {model.name!r}: {new_path!r} is computed from "
            f"{old_path!r}'s readers, so the graph would have a cycle. Pick a tensor computed before them.") from None


# ----------------------------------------------------------------- patterns
class _Match:
    """One match of a pattern: the call making its output, its other calls, and the
    model's tensors bound to the pattern's inputs."""

    def __init__(self, anchor, inner, inputs):
        self.anchor, self.inner, self.inputs = anchor, inner, inputs


def _trace(model, pattern):
    """The pattern as a Functional model, traced on Inputs shaped like the first tensor of the model it builds on."""
    parameters = inspect.signature(pattern).parameters.values()
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
        raise ValueError(
            f"The pattern {_name_of(pattern)} takes *args or **kwargs; give it one named parameter per input tensor.")
    count = sum(p.default is p.empty for p in parameters)
    shapes = {}
    for _, layer in [("", model), *layer_paths(model).items()]:
        if functional_of(layer) is not None:
            for tensor in layer.plan.tensors:
                shapes.setdefault((tuple(tensor.shape), tensor.dtype), None)
    errors = []
    for shape, dtype in shapes:
        inputs = [Input(batch_shape=shape, dtype=dtype) for _ in range(count)]
        try:
            outputs = pattern(*inputs)
        except Exception as error:  # a pattern of other shapes: try the next
            errors.append(f"{shape}: {type(error).__name__}: {error}")
            continue
        if not isinstance(outputs, KerasTensor) or any(outputs is tensor for tensor in inputs):
            raise ValueError(
                f"The pattern {_name_of(pattern)} returned {outputs!r}; it must return one tensor made by its layers "
                "(the output of the part of the graph to replace).")
        return Functional(inputs, outputs, name="pattern")
    raise ValueError(
        f"The pattern {_name_of(pattern)} could not be traced on Inputs shaped like any tensor of model "
        f"{model.name!r}: {'; '.join(errors[:3])}. A pattern is traced on {count} Inputs of one shape.")


def _pattern_matches(model, template):
    """``[(level, _Match)]``: the matches of the template in ``model`` and its nested models, in plan order."""
    levels, seen, found = [("", model)], set(), []
    levels += [(path, layer) for path, layer in layer_paths(model).items() if functional_of(layer) is not None]
    for level, holder in levels:
        if id(holder) not in seen:
            seen.add(id(holder))
            found += [(level, match) for match in _matches_in(holder.plan, template.plan)]
    return found


def _matches_in(plan, template):
    makers = {slot: (index, position) for index, step in enumerate(plan.steps)
              for position, slot in enumerate(step.out_slots)}
    readers = {}
    for index, step in enumerate(plan.steps):
        for slot in step.in_slots:
            readers.setdefault(slot, set()).add(index)
    template_makers = {slot: (index, position) for index, step in enumerate(template.steps)
                       for position, slot in enumerate(step.out_slots)}
    anchor = template_makers[template.output_slots[0]][0]
    used, matches = set(), []
    for index, step in enumerate(plan.steps):
        if type(step.layer) is not type(template.steps[anchor].layer):
            continue
        bound, inputs = {}, {}
        if not _match_step(anchor, index, plan, template, makers, template_makers, bound, inputs):
            continue
        steps = set(bound.values())
        if steps & used or len(inputs) != len(template.inputs):
            continue
        inner = steps - {index}
        escapes = any(not readers.get(slot, set()) <= steps or slot in plan.output_slots
                      for i in inner for slot in plan.steps[i].out_slots)
        if escapes:
            continue
        used |= steps
        matches.append(_Match(step.node, [plan.steps[i].node for i in sorted(inner)],
                              [plan.tensors[inputs[slot]] for slot in template.input_slots]))
    return matches


def _match_step(t_index, m_index, plan, template, makers, template_makers, bound, inputs):
    """Whether template step ``t_index`` matches model step ``m_index`` (and so on up
    its inputs), recording the matched steps in ``bound`` and the pattern's inputs in ``inputs``."""
    if t_index in bound:
        return bound[t_index] == m_index
    t_step, m_step = template.steps[t_index], plan.steps[m_index]
    if (type(t_step.layer) is not type(m_step.layer) or len(t_step.in_slots) != len(m_step.in_slots)
            or t_step.arguments.structure != m_step.arguments.structure):
        return False
    bound[t_index] = m_index
    for t_slot, m_slot in zip(t_step.in_slots, m_step.in_slots):
        if t_slot in template_makers:
            if m_slot not in makers:
                return False
            (t_maker, t_position), (m_maker, m_position) = template_makers[t_slot], makers[m_slot]
            if t_position != m_position or not _match_step(t_maker, m_maker, plan, template, makers,
                                                            template_makers, bound, inputs):
                return False
        elif inputs.setdefault(t_slot, m_slot) != m_slot:
            return False
    return True


def _skipped(node, args, call, new_tensor):
    """A call inside a replaced match: nothing reads its outputs."""
    return [None] * len(node.output_tensors)


def _replacement_edit(replacement, match):
    def edit(node, args, call, new_tensor):
        return _flat(replacement(*[new_tensor(tensor) for tensor in match.inputs]))

    return edit


# ----------------------------------------------------------------- messages
def _described(model, node):
    return f"{path_of(model, node)!r} ({type(node.outbound_layer).__name__}) of model {model.name!r}"


def _count(tensors):
    return f"{len(tensors)} tensor{'s' if len(tensors) != 1 else ''}"


def _listed(paths):
    shown = ", ".join(map(repr, paths[:5]))
    return shown + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def _name_of(function):
    return getattr(function, "__name__", repr(function))


def _where_text(where):
    if isinstance(where, str):
        return f"where={where!r}"
    if isinstance(where, type):
        return f"the class {where.__name__}"
    if isinstance(where, Layer):
        return f"the layer {where.name!r}"
    return f"the predicate {_name_of(where)}"
