"""Python source that rebuilds a model's architecture: ``to_python(model)``.

The source defines ``build_model()`` with the functional API, one line per
layer call, each layer written as its class with the keyword arguments of its
config that differ from the class's defaults (a default instance's config,
made from the same required arguments). Nested models become functions of
their own (``build_encoder()``), a shared layer one variable called several
times, ``Sequential`` models ``Sequential([...])``, and operator layers with
automatic names operators (``x + 3.0``, ``x[:, 0]``, ``-x``, ``x.reshape(...)``).
Initializers, regularizers and constraints are written as their objects
(``HeNormal()``); any other value as the literal its config holds, which is
what ``from_config`` passes to the class.

Everything but the automatic names of operator layers is reproduced exactly:
Python operators take no ``name=``, so ``x + 3.0`` gets a fresh automatic name
(``add``, ``add_1``...) when the source runs, as it does when the original
script runs again. Operator layers given a name of their own are written as
their classes (``BinaryOp("add", constant=3.0, name="shift")(x)``).
"""

import builtins
import inspect
import keyword
import math
import re
from collections import Counter

import numpy as np

from engine import tree
from engine.training import constraints, regularizers
from engine.network import initializers
from engine.dtypes import dtype_kind
from engine.network.functional import Functional, functional_of
from engine.network.input_layer import InputLayer
from engine.network.keras_tensor import KerasTensor
from engine.network.layer import Layer
from engine.network.ops import BinaryOp, GetItem, Negative, ReshapeOp, Round, SqueezeOp, UnaryOp
from engine.files.registry import lookup
from engine.network.sequential import Sequential

# Python's operator for each BinaryOp op that has one ("equal" has none: == compares identity).
_OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "floor_divide": "//", "mod": "%",
              "power": "**", "matmul": "@", "less": "<", "less_equal": "<=", "greater": ">",
              "greater_equal": ">=", "not_equal": "!=", "logical_and": "&", "logical_or": "|",
              "logical_xor": "^"}
# The object kinds a config writes as {"class_name", "config"}: the module to import each from.
_OBJECT_MODULES = (initializers, regularizers, constraints)
_MISSING = object()


def to_python(model: Functional) -> str:
    """Python source defining ``build_model()``, which rebuilds ``model``'s architecture.

    The new model has the same layers, names, configs and connections (its
    ``get_config()`` equals the original's, but for the automatic names of
    operator layers written as operators) and fresh weights: the weights stay
    in the model's file.

    Args:
        model: a functional or ``Sequential`` model (built).

    Returns:
        The source of a module: imports, one function per nested model, then
        ``build_model()``.

    Raises:
        ValueError: an unbuilt ``Sequential``, a layer class defined inside a
            function (the source could not import it), or a config value
            that has no Python literal.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(4,), name="features")
        >>> model = Model(x, Dense(2, activation="softmax", name="probs")(x) * 2.0, name="scorer")
        >>> print(to_python(model).split("def build_model")[1])  # doctest: +ELLIPSIS
        ():
            features = Input(shape=(4,), name="features")
            probs = Dense(2, activation="softmax", name="probs")(features)
            multiply... = probs * 2.0
            return Model(inputs=features, outputs=multiply..., name="scorer")
        <BLANKLINE>
        >>> namespace = {}
        >>> exec(to_python(model), namespace)
        >>> namespace["build_model"]().get_layer("probs").get_config() == model.get_layer("probs").get_config()
        True
    """
    if functional_of(model) is None:
        raise ValueError(
            f"to_python expects a functional or built Sequential model, received {type(model).__name__} "
            f"{getattr(model, 'name', model)!r}. Build a Sequential first (model.build(input_shape), or start it "
            "with an Input); a subclassed Model has no graph to write."
        )
    return _Source(model).text()


class _Source:
    """The module being written: its imports and its functions, nested models first."""

    def __init__(self, model):
        self.imports = {}  # module -> names
        self.models = _nested_models(model)  # post-order: each model after the models it holds
        classes = {type(layer) for m in self.models for layer in _own_layers(m)}
        reserved = set(dir(builtins)) | {"np"} | {cls.__name__ for cls in classes}
        self.function_names = {}
        for nested in self.models:
            wanted = "build_model" if nested is model else f"build_{_identifier(nested.name)}"
            self.function_names[id(nested)] = _fresh(wanted, reserved)
        self.reserved = reserved
        self.defaults = {}  # (class, required arguments) -> a default instance's config
        self.objects = {}  # repr of an initializer/regularizer/constraint config -> its expression

    def text(self):
        functions = [self.function(nested) for nested in self.models]
        top = self.models[-1]
        lines = [
            f'"""The architecture of model {top.name!r}, written by nodeweave\'s graph.to_python.',
            "",
            "Its weights stay in the model's file: ``model = build_model()`` then",
            "``model.load_weights(path)`` with a ``.weights.h5``, ``.keras`` or ``.npz`` file",
            "(or ``engine.load_model(path)`` for the whole model, weights included).",
            '"""',
            "",
        ]
        for module in sorted(self.imports, key=lambda m: (m != "numpy", m)):
            names = sorted(self.imports[module])
            if module == "numpy":
                lines.append("import numpy as np")
            else:
                lines.append(f"from {module} import {', '.join(names)}")
        return "\n".join(lines) + "\n\n\n" + "\n\n\n".join(functions) + "\n"

    # ------------------------------------------------------------ functions
    def function(self, model):
        names = set(self.reserved)
        if isinstance(model, Sequential):
            body = self.sequential_body(model, names)
        else:
            body = self.functional_body(model, names)
        return f"def {self.function_names[id(model)]}():\n" + "\n".join(f"    {line}" for line in body)

    def sequential_body(self, model, names):
        self.need("engine", "Sequential")
        items = []
        for layer in model._stack:
            if isinstance(layer, InputLayer):
                items.append(self.input_expression(layer))
            elif functional_of(layer) is not None:
                items.append(f"{self.function_names[id(layer)]}()")
            else:
                items.append(self.constructor(layer))
        stack = [*(f"    {item}," for item in items), f"], {', '.join(self.model_keywords(model))})"]
        if isinstance(model._stack[0], InputLayer):
            return ["return Sequential([", *stack]
        # Built on several inputs, which Input() cannot stand first for: build it on their shapes.
        variable = _fresh("model", names)
        shapes = tree.map_structure(lambda tensor: tuple(tensor.shape), model.input)
        return [f"{variable} = Sequential([", *stack, f"{variable}.build({_literal(shapes)})", f"return {variable}"]

    def functional_body(self, model, names):
        self.need("engine", "Model")
        plan = model.plan
        lines, expressions = [], {}  # id(tensor) -> the expression that holds it
        for tensor in model.inputs:
            layer = tensor._keras_history.layer
            variable = _fresh(_identifier(layer.name), names)
            lines.append(f"{variable} = {self.input_expression(layer)}")
            expressions[id(tensor)] = variable
        calls = Counter(id(step.layer) for step in plan.steps)
        # An operator's fresh automatic name must not be one a layer of this model holds:
        # the operators whose names could be are written with their names (the stems of the others).
        stems = {re.sub(r"_\d+$", "", layer.name) for layer in plan.layers if _operator_base(layer) is None}
        layer_variables, call_numbers = {}, Counter()

        def tensor(value):
            return expressions[id(plan._resolve(value))] if isinstance(value, KerasTensor) else None

        def argument(value):
            return self.literal(value, tensor)

        for step in plan.steps:
            layer, node = step.layer, step.node
            if isinstance(layer, InputLayer):
                continue
            number = call_numbers[id(layer)]
            call_numbers[id(layer)] += 1
            base = _identifier(layer.name)
            if calls[id(layer)] > 1:
                if number == 0:
                    layer_variables[id(layer)] = _fresh(base, names)
                    lines.append(f"{layer_variables[id(layer)]} = {self.layer_expression(layer)}")
                callee, base = layer_variables[id(layer)], f"{base}_call{number}"
                expression = f"{callee}({_call_arguments(node, argument)})"
            else:
                expression = self.operator(layer, node, argument, stems)
                if expression is None:
                    expression = f"{self.layer_expression(layer)}({_call_arguments(node, argument)})"
            lines.append(self.assignment(node.outputs, base, expression, names, expressions))
        structure = {"inputs": model._inputs_struct, "outputs": model._outputs_struct}
        arguments = [f"{key}={argument(value)}" for key, value in structure.items()]
        lines.append(f"return Model({', '.join([*arguments, *self.model_keywords(model)])})")
        return lines

    @staticmethod
    def assignment(outputs, base, expression, names, expressions):
        """``target = expression``, recording the expression of each output tensor."""
        if isinstance(outputs, KerasTensor):
            target = _fresh(base, names)
            expressions[id(outputs)] = target
            return f"{target} = {expression}"
        if isinstance(outputs, (list, tuple)) and all(isinstance(t, KerasTensor) for t in outputs):
            targets = [_fresh(f"{base}_out{i}", names) for i in range(len(outputs))]
            for tensor, target in zip(outputs, targets):
                expressions[id(tensor)] = target
            opening, closing = ("[", "]") if len(targets) == 1 else ("", "")
            return f"{opening}{', '.join(targets)}{closing} = {expression}"
        target = _fresh(base, names)
        stack = [(outputs, target)]
        while stack:
            value, where = stack.pop()
            if isinstance(value, KerasTensor):
                expressions[id(value)] = where
            elif isinstance(value, dict):
                stack.extend((item, f"{where}[{key!r}]") for key, item in value.items())
            else:
                stack.extend((item, f"{where}[{index}]") for index, item in enumerate(value))
        return f"{target} = {expression}"

    @staticmethod
    def model_keywords(model):
        return [f"name={_literal(model.name)}"] + ([] if model.trainable else ["trainable=False"])

    # --------------------------------------------------------------- layers
    def layer_expression(self, layer):
        if functional_of(layer) is not None:
            return f"{self.function_names[id(layer)]}()"
        return self.constructor(layer)

    def input_expression(self, layer):
        self.need("engine", "Input")
        config = layer.get_config()
        shape = tuple(config["batch_shape"])
        arguments = [f"shape={_literal(shape[1:])}" if shape[0] is None else f"batch_shape={_literal(shape)}"]
        if config.get("dtype", "float32") != "float32":
            arguments.append(f"dtype={_literal(config['dtype'])}")
        if config.get("optional"):
            arguments.append("optional=True")
        arguments.append(f"name={_literal(layer.name)}")
        return f"Input({', '.join(arguments)})"

    def constructor(self, layer):
        """``Class(required..., key=value..., name=...)`` for a layer that is not a model."""
        cls = type(layer)
        class_name = self.need_class(cls)
        config = layer.get_config()
        if isinstance(layer, GetItem):
            config = {**config, "key": layer.key}
        elif _from_config_is_overridden(cls) and not _takes_layers(cls):
            return f"{class_name}.from_config({self.literal(config)})"
        required, keys = self.arguments_to_write(cls, config, layer.name)
        # Built-in layers take objects where their configs hold {"class_name", "config"};
        # a user's layer gets what its from_config would pass, the literal.
        builtin = cls.__module__.split(".")[0] in ("engine", "layers")
        special = (lambda v: self.special_value(v, _takes_layers(cls))) if builtin else None
        parts = [self.literal(config[key], special) for key in required]
        parts += [f"{key}={self.literal(config[key], special)}" for key in keys if key not in required]
        parts.append(f"name={_literal(layer.name)}")
        return f"{class_name}({', '.join(parts)})"

    def arguments_to_write(self, cls, config, name):
        """The keys of ``config`` that ``__init__`` takes without a default, and all
        the keys to write: those, and each whose value the class would not give
        without it. A default may follow another argument (a pooling's ``strides``
        its ``pool_size``), so the layer made from the keys kept is checked."""
        required = _required_arguments(cls, config)
        key = (cls, repr([config[k] for k in required]))
        if key not in self.defaults:
            self.defaults[key] = _made_config(cls, {k: config[k] for k in required}, name)
        default = self.defaults[key]
        keys = [k for k in config if k in required or k != "name" and not _same(default.get(k, _MISSING), config[k])]
        while True:
            made = _made_config(cls, {k: config[k] for k in keys}, name)
            missing = [k for k in config
                       if k != "name" and k not in keys and not _same(made.get(k, _MISSING), config[k])]
            if not missing:
                return required, keys
            keys += missing

    def operator(self, layer, node, argument, stems):
        """The operator expression (``x + 3.0``) for an operator layer with an automatic
        name (whose base is none of ``stems``) that its operator makes; None otherwise."""
        base = _operator_base(layer)
        if (base is None or base in stems or node.call_kwargs or len(node.call_args) != 1
                or not re.fullmatch(rf"{re.escape(base)}(_\d+)?", layer.name)):
            return None
        operand, config = node.call_args[0], layer.get_config()
        if isinstance(layer, BinaryOp):
            symbol = _OPERATORS.get(layer.op)
            constant = layer.constant
            if symbol is None or not (constant is None or type(constant) in (int, float, bool)):
                return None
            if constant is None:
                left, right = argument(operand[0]), argument(operand[1])
                twin = BinaryOp(layer.op, name=layer.name)
            else:
                dtype = operand.dtype if dtype_kind(operand.dtype) == "f" else "float32"
                twin = BinaryOp(layer.op, constant=constant, constant_position=layer.constant_position,
                                dtype=dtype, name=layer.name)
                text = _literal(constant)
                left, right = argument(operand), f"({text})" if text.startswith("-") else text
                if layer.constant_position == "left":
                    left, right = right, left
            expression = f"{left} {symbol} {right}"
        elif not isinstance(operand, KerasTensor):
            return None
        elif isinstance(layer, Negative):
            twin, expression = Negative(name=layer.name), f"-{argument(operand)}"
        elif type(layer) is UnaryOp and layer.op in ("absolute", "logical_not"):
            twin = UnaryOp(layer.op, name=layer.name)
            expression = f"abs({argument(operand)})" if layer.op == "absolute" else f"~{argument(operand)}"
        elif isinstance(layer, Round):
            twin = Round(layer.decimals, name=layer.name)
            expression = f"round({argument(operand)}{f', {layer.decimals}' if layer.decimals else ''})"
        elif isinstance(layer, GetItem):
            twin, expression = GetItem(layer.key, name=layer.name), f"{argument(operand)}[{_index(layer.key)}]"
        elif isinstance(layer, ReshapeOp):
            twin = ReshapeOp(layer.newshape, name=layer.name)
            expression = f"{argument(operand)}.reshape({_literal(layer.newshape)})"
        elif isinstance(layer, SqueezeOp):
            twin = SqueezeOp(layer.axis, name=layer.name)
            axis = "" if layer.axis is None else _literal(layer.axis)
            expression = f"{argument(operand)}.squeeze({axis})"
        else:
            return None
        return expression if twin.get_config() == config else None

    # --------------------------------------------------------------- values
    def literal(self, value, special=None):
        """``_literal(value, special)``, importing NumPy when the source may need it."""
        text = _literal(value, special)
        if "np." in text:
            self.need("numpy", "np")
        return text

    def special_value(self, value, layers):
        """An initializer, regularizer or constraint config as its object (``HeNormal()``),
        and, when ``layers``, a serialized layer as its constructor; None for other values."""
        if isinstance(value, dict) and set(value) == {"class_name", "config"}:
            return self.object_expression(value)
        if layers and isinstance(value, dict) and {"class_name", "name", "config"} <= set(value):
            cls = lookup(value["class_name"])
            if isinstance(cls, type) and issubclass(cls, Layer) and not issubclass(cls, (Functional, Sequential)):
                return self.constructor(cls.from_config(value["config"]))
        return None

    def object_expression(self, value):
        """``HeNormal(seed=1)`` for ``{"class_name": "HeNormal", "config": {"seed": 1}}``
        when that object serializes back to ``value``; None otherwise."""
        key = repr(value)
        if key not in self.objects:
            self.objects[key] = None
            for module in _OBJECT_MODULES:
                cls = module._CLASSES.get(value["class_name"])
                if not isinstance(cls, type) or not isinstance(value["config"], dict):
                    continue
                if module.serialize(module.get(value)) != value:
                    continue
                try:
                    default = module.serialize(cls())["config"]
                except TypeError:
                    default = {}
                arguments = [f"{k}={self.literal(v)}" for k, v in value["config"].items()
                             if not _same(default.get(k, _MISSING), v)]
                self.need(module.__name__, cls.__name__)
                self.objects[key] = f"{cls.__name__}({', '.join(arguments)})"
                break
        return self.objects[key]

    # -------------------------------------------------------------- imports
    def need(self, module, name):
        self.imports.setdefault(module, set()).add(name)

    def need_class(self, cls):
        """Imports ``cls`` from its package when the package exports it, else from its module."""
        if "<locals>" in cls.__qualname__:
            raise ValueError(
                f"to_python cannot import layer class {cls.__qualname__!r}: it is defined inside a function "
                f"({cls.__module__}). Define it at the top level of a module, so the source can import it."
            )
        package = cls.__module__.split(".")[0]
        exported = getattr(__import__(package), cls.__name__, None) is cls
        self.need(package if exported else cls.__module__, cls.__name__)
        return cls.__name__


def _made_config(cls, arguments, name):
    """The config of ``cls`` made from ``arguments``; empty when that fails (all is then written)."""
    try:
        if cls is GetItem:
            return cls(**arguments, name=name).get_config()
        return cls.from_config({**arguments, "name": name}).get_config()
    except (TypeError, ValueError, KeyError):
        return {}


def _nested_models(model):
    """``model`` and every model nested in it (at any depth), each once, each after those it holds."""
    order, seen = [], set()
    stack = [(model, False)]
    while stack:
        current, expanded = stack.pop()
        if expanded:
            order.append(current)
            continue
        if id(current) in seen:
            continue
        seen.add(id(current))
        stack.append((current, True))
        stack.extend((layer, False) for layer in reversed(_own_layers(current)) if functional_of(layer) is not None)
    return order


def _own_layers(model):
    return list(model._stack) if isinstance(model, Sequential) else list(model.plan.layers)


def _call_arguments(node, argument):
    parts = [argument(value) for value in node.call_args]
    parts += [f"{key}={argument(value)}" for key, value in node.call_kwargs.items()]
    return ", ".join(parts)


def _required_arguments(cls, config):
    """The config keys that ``cls.__init__`` takes without a default, in its order."""
    parameters = inspect.signature(cls.__init__).parameters.values()
    return [p.name for p in parameters if p.default is inspect.Parameter.empty and p.name in config
            and p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]


def _from_config_is_overridden(cls):
    return getattr(cls.from_config, "__func__", None) is not Layer.from_config.__func__


def _takes_layers(cls):
    """Whether ``cls`` is one of the wrappers whose config holds serialized layers
    that its ``from_config`` rebuilds before passing them to ``__init__``."""
    from layers import Bidirectional, TimeDistributed

    return issubclass(cls, (Bidirectional, TimeDistributed))


def _operator_base(layer):
    """The automatic name an operator gives ``layer`` (``add`` for ``x + y``), None for other layers."""
    if isinstance(layer, (BinaryOp, UnaryOp)):
        return layer.op
    return {Round: "round", GetItem: "get_item", ReshapeOp: "reshape", SqueezeOp: "squeeze"}.get(type(layer))


def _index(key):
    """``:, 0`` for the key ``(slice(None), 0)``."""

    def item(value):
        if value is Ellipsis:
            return "..."
        if isinstance(value, slice):
            bounds = ["" if b is None else repr(b) for b in (value.start, value.stop, value.step)]
            return ":".join(bounds[:2]) + (f":{bounds[2]}" if value.step is not None else "")
        return repr(value)

    if len(key) == 1 and key[0] is not None:
        return item(key[0])
    return ", ".join(item(value) for value in key) + ("," if len(key) == 1 else "")


def _literal(value, special=None):
    """Source that evaluates to ``value``; ``special(value)`` may give another
    expression for a value (None to keep the literal)."""
    if special is not None:
        expression = special(value)
        if expression is not None:
            return expression
    if type(value) is str:
        text = repr(value)
        return f'"{text[1:-1]}"' if text[0] == "'" and '"' not in value else text
    if value is None or type(value) in (bool, int):
        return repr(value)
    if type(value) is float:
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, slice):
        return f"slice({_literal(value.start)}, {_literal(value.stop)}, {_literal(value.step)})"
    if value is Ellipsis:
        return "..."
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v, special) for v in value) + "]"
    if isinstance(value, tuple):
        items = [_literal(v, special) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v, special)}" for k, v in value.items()) + "}"
    if isinstance(value, (np.ndarray, np.generic)):
        return f"np.array({_literal(value.tolist())}, dtype={str(value.dtype)!r})" if isinstance(
            value, np.ndarray) else f"np.{value.dtype.name}({_literal(value.item())})"
    raise ValueError(
        f"to_python cannot write the value {value!r} ({type(value).__name__}) as Python source: a layer's "
        "config should hold only JSON-like values (numbers, strings, lists, dicts, None). Make the layer's "
        "get_config() return such values."
    )


def _same(default, value):
    """Equality that also tells ``1`` from ``True`` and ``[1]`` from ``(1,)``."""
    return type(default) is type(value) and default == value


def _identifier(name):
    text = re.sub(r"\W", "_", name).lower() or "layer"
    return f"_{text}" if text[0].isdigit() else text


def _fresh(wanted, taken):
    """``wanted``, or ``wanted_2``, ``wanted_3``... : the first name not in ``taken``, which it joins."""
    name, number = wanted, 1
    while name in taken or keyword.iskeyword(name):
        number += 1
        name = f"{wanted}_{number}"
    taken.add(name)
    return name
