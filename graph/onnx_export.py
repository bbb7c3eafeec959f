"""Export to ONNX: a model's execution plan written as an ONNX graph.

``to_onnx(model)`` walks the model's plan with the walker inference uses
(``plan.replay``), carrying ONNX value names instead of arrays. Each layer
call is turned into ONNX nodes by its converter, looked up in the table
``layers._onnx.CONVERTERS`` (its class's own, else its nearest base class's);
``graph.register_onnx_converter`` adds one for a user's layer. A nested model
is inlined, its node names prefixed by its path (``outer/inner/conv/Conv``,
which netron and Model Explorer show as groups); a shared layer's weights are
stored once however often it is called.

What maps: core layers (Dense, Activation, Identity...), every activation,
the merging layers, Embedding, the operator layers (``x + 1``, ``x[:, 0]``...),
and, from their own family modules, convolution, pooling, normalization,
reshaping, preprocessing, recurrent and attention layers. Keras lays images
out channels-last and ONNX channels-first: converters wrap their operator in
transposes, and a clean-up pass cancels the pairs that meet and moves the rest
through elementwise operators, so a stack of convolutions has transposes only
at its borders.

What does not: masks and ``training=True`` behaviour. The graph computes
what ``model.predict`` computes: an inference call without masks (an
``Embedding(mask_zero=True)`` or ``Masking`` layer exports, and the outputs are
those of an unmasked call); Dropout, GaussianNoise and the other
training-only layers are identities. A ``Lambda`` layer (arbitrary Python)
cannot be exported and raises ``OnnxExportError``.

The graph's inputs and outputs are named after the model's
(``model.input_names``, ``model.output_names``), with a dynamic batch axis
(``dim_param="batch"``). The default opset is 18 (LayerNormalization needs 17;
ONNX's GroupNormalization changed meaning in 21, so it is composed of
ReduceMean and friends at any opset); opsets from 18 to the installed
``onnx``'s newest are accepted, and from 20 gelu is ONNX's own Gelu. The
weights are stored in the file (ModelProto's 2 GB limit applies).
"""

import numpy as np

from engine import tree
from engine.files.atomic_file import atomic_write
from engine.network.functional import functional_of
from graph._onnx_layout import _Node, clean_transposes
from engine.network.call_keywords import call_parameters
from layers._onnx import converter_for

DEFAULT_OPSET = 18
_MIN_OPSET = 18
_INSTALL = 'pip install "nodeweave[onnx]"'


class OnnxExportError(ValueError):
    """A model (or one of its layers) that cannot be written as ONNX.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Lambda
        >>> x = Input(shape=(3,), name="x")
        >>> try:
        ...     to_onnx(Model(x, Lambda(lambda t: t * 2, name="twice")(x)))
        ... except OnnxExportError as error:
        ...     print(str(error).split(":")[0])
        Cannot export layer 'twice' (Lambda) to ONNX
    """


class _Name(str):
    """The name of an ONNX value: what the walk carries in place of a tensor
    (told apart from a string argument such as ``padding="same"``)."""


class _Graph:
    """The nodes, initializers and names of the graph being written."""

    def __init__(self, onnx, opset):
        self.onnx_dtype = lambda dtype: onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        self.opset = opset
        self.nodes = []
        self.initializers = {}  # name -> array
        self._weights = {}  # (id(variable), key) -> name
        self._constants = {}  # (dtype, shape, bytes) -> name
        self._taken = set()

    def unique(self, name):
        """``name``, or ``name_1``, ``name_2``... the first not taken, now taken."""
        candidate, count = name, 0
        while candidate in self._taken:
            count += 1
            candidate = f"{name}_{count}"
        self._taken.add(candidate)
        return candidate

    def add_node(self, op_type, inputs, outputs, prefix, domain="", **attributes):
        name = self.unique(f"{prefix}/{op_type}" if prefix else op_type)
        if outputs == 1:
            names = [_Name(name)]
        else:
            names = [_Name(self.unique(f"{name}:{index}")) for index in range(outputs)]
        attributes = {key: value for key, value in attributes.items() if value is not None}
        self.nodes.append(_Node(op_type, inputs, names, name, domain, attributes))
        return names[0] if outputs == 1 else names

    def weight(self, variable, transform, key):
        key = key or (transform.__qualname__ if transform is not None else None)
        found = self._weights.get((id(variable), key))
        if found is None:
            value = np.asarray(getattr(variable, "value", variable))
            if transform is not None:
                value = np.asarray(transform(value))
            path = getattr(variable, "path", None) or "weight"
            found = self._weights[(id(variable), key)] = self.store(path if key is None else f"{path}:{key}", value)
        return found

    def constant(self, value, dtype, name):
        array = np.asarray(value, dtype=dtype)
        if dtype is None and array.dtype == np.float64:
            array = array.astype(np.float32)
        elif dtype is None and array.dtype.kind in "iu":
            array = array.astype(np.int64)
        key = (array.dtype.str, array.shape, array.tobytes())
        found = self._constants.get(key)
        if found is None:
            found = self._constants[key] = self.store(name, array)
        return found

    def store(self, name, array):
        name = _Name(self.unique(name))
        self.initializers[name] = array
        return name


class OnnxCall:
    """One call of a layer as its converter sees it: the ONNX names of its
    arguments, their static shapes and dtypes, and the means to add nodes,
    weights and constants to the graph.

    Attributes:
        input: the name of the call's first argument when it is one tensor.
        inputs: the names of the first argument's tensors, flat (``[x]`` for one).
        extra_args, kwargs: the other arguments as the layer's ``call`` got
            them, tensors replaced by their names; ``training`` and masks are
            left out.
        input_shapes, output_shapes: the static shapes (tuples, None for an
            unknown size, batch first) of the call's flat input and output tensors.
        input_dtypes, output_dtypes: their dtype names (``"float32"``).
        layer_path: the layer's qualified name (``outer/inner/conv``).
        opset: the opset being written (converters may branch on it).

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> seen = {}
        >>> class Spy(Dense):
        ...     pass
        >>> def spy(layer, call):
        ...     seen.update(path=call.layer_path, shapes=call.input_shapes)
        ...     return call.op("MatMul", [call.input, call.weight(layer.kernel)])
        >>> from graph import register_onnx_converter
        >>> register_onnx_converter(Spy, spy)
        >>> proto = to_onnx(Model(x, Spy(2, use_bias=False, name="spy")(x)))
        >>> seen
        {'path': 'spy', 'shapes': [(None, 3)]}
    """

    def __init__(self, graph, step, path, inputs, extra_args, kwargs):
        self._graph = graph
        self._layer = step.layer
        self._first = inputs
        self.inputs = [name for name in tree.flatten(inputs) if isinstance(name, _Name)]
        self.extra_args = tuple(extra_args)
        # Masks are not exported: ``mask`` and an argument's mask (MultiHeadAttention's ``query_mask``) are
        # left out; other arguments named so (``attention_mask``, ``use_causal_mask``) stay.
        parameters = call_parameters(type(step.layer))
        self.kwargs = {key: value for key, value in kwargs.items() if key not in ("training", "mask")
                       and not (key.endswith("_mask") and key.removesuffix("_mask") in parameters)}
        node = step.node
        self.input_shapes = [t.shape for t in node.input_tensors]
        self.output_shapes = [t.shape for t in node.output_tensors]
        self.input_dtypes = [t.dtype for t in node.input_tensors]
        self.output_dtypes = [t.dtype for t in node.output_tensors]
        self.layer_path = path
        self.opset = graph.opset

    @property
    def input(self):
        """The name of the first argument, which must be one tensor."""
        if not isinstance(self._first, _Name):
            self.unsupported(f"its converter expects one input tensor, but it was called on {len(self.inputs)}")
        return self._first

    def op(self, op_type, inputs, outputs=1, domain="", **attributes):
        """Adds one node; returns its output's name (a list when ``outputs > 1``).

        Args:
            op_type: the ONNX operator (``"MatMul"``).
            inputs: the input names ("" for an omitted optional input).
            outputs: how many outputs the node has.
            domain: the operator's domain ("" for ONNX's own).
            **attributes: the node's attributes (None ones are left out).
        """
        return self._graph.add_node(op_type, inputs, outputs, self.layer_path, domain, **attributes)

    def weight(self, variable, transform=None, key=None):
        """The name of an initializer holding ``variable``'s value, stored once
        per (variable, key) for the whole model.

        Args:
            variable: a Variable (``layer.kernel``).
            transform: ``fn(array) -> array`` applied to the value (a layout change).
            key: names the transform; by default its qualified name (give one
                when a converter applies two lambdas to one variable).
        """
        return self._graph.weight(variable, transform, key)

    def constant(self, value, dtype=None, name=None):
        """An initializer for a small derived constant (a shape, axes, epsilon).

        Python floats become float32 and integers int64 unless ``dtype`` is given;
        equal constants are stored once.

        Args:
            value: an array-like.
            dtype: its dtype.
            name: the initializer's name (by default ``<layer path>/const``).
        """
        return self._graph.constant(value, dtype, name or f"{self.layer_path}/const")

    def cast(self, name, dtype):
        """``name`` cast to ``dtype`` (a NumPy dtype or its name: ``"int64"``, ``"bool"``)."""
        return self.op("Cast", [name], to=self._graph.onnx_dtype(dtype))

    def to_channels_first(self, name, rank):
        """``name`` (channels-last, of ``rank`` axes) transposed to channels-first."""
        return self.op("Transpose", [name], perm=[0, rank - 1, *range(1, rank - 1)])

    def to_channels_last(self, name, rank):
        """``name`` (channels-first, of ``rank`` axes) transposed to channels-last."""
        return self.op("Transpose", [name], perm=[0, *range(2, rank), 1])

    def unsupported(self, reason):
        """Raises ``OnnxExportError`` naming the layer, its class and ``reason``."""
        raise OnnxExportError(
            f"Cannot export layer {self.layer_path!r} ({type(self._layer).__name__}) to ONNX: {reason}."
        )


def _check_opset(opset, newest):
    if opset is None:
        return DEFAULT_OPSET
    if isinstance(opset, bool) or not isinstance(opset, (int, np.integer)) or not _MIN_OPSET <= opset <= newest:
        raise ValueError(f"Expected opset to be an integer from {_MIN_OPSET} to {newest} (the newest the installed "
                         f"onnx knows), received opset={opset!r}. Leave it None for {DEFAULT_OPSET}.")
    return int(opset)


def _import_onnx():
    try:
        import onnx
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"Exporting to ONNX needs the `onnx` package, which is not installed. Install it with: {_INSTALL}"
        ) from error
    return onnx


def _walk(graph, plan, names, prefix):
    """Writes the nodes of ``plan`` fed with value ``names``; returns its output names."""

    def action(step, inputs, extra_args, kwargs):
        layer = step.layer
        path = prefix + layer.name
        if functional_of(layer) is not None:
            fed = [name for name in tree.flatten((inputs, extra_args, kwargs)) if isinstance(name, _Name)]
            by_tensor = dict(zip(map(id, step.node.input_tensors), fed))
            return _walk(graph, layer.plan, [by_tensor[id(t)] for t in step.node.fed_inputs], path + "/")
        converter = converter_for(layer)
        if converter is None:
            raise OnnxExportError(
                f"Layer {path!r} ({type(layer).__name__}) has no ONNX converter, so the model cannot be exported "
                f"to ONNX. Register one with graph.register_onnx_converter({type(layer).__name__}, function), "
                "where function(layer, call) adds the layer's ONNX nodes with call.op(...) and returns the name "
                "of its output (see help(graph.register_onnx_converter))."
            )
        outputs = converter(layer, OnnxCall(graph, step, path, inputs, extra_args, kwargs))
        outputs = [outputs] if isinstance(outputs, str) else list(outputs)
        if len(outputs) != len(step.out_slots) or not all(isinstance(o, str) for o in outputs):
            raise OnnxExportError(
                f"The ONNX converter of layer {path!r} ({type(layer).__name__}) returned {outputs!r}; expected "
                f"{len(step.out_slots)} output name(s), one per output tensor of the call."
            )
        return [_Name(o) for o in outputs]

    return plan.replay(names, action)


def to_onnx(model, opset=None):
    """The ONNX ModelProto of a functional (or Sequential) model, for inference.

    Args:
        model: a built functional or Sequential model.
        opset: the ONNX opset (default 18).

    Returns:
        An ``onnx.ModelProto`` whose inputs and outputs are named after the
        model's, with a dynamic batch axis.

    Raises:
        ModuleNotFoundError: ``onnx`` is not installed (``pip install "nodeweave[onnx]"``).
        OnnxExportError: a layer without a converter, or an option no ONNX
            operator covers (a Lambda layer).
        ValueError: an opset out of range, or a model without a graph.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="features")
        >>> proto = to_onnx(Model(x, Dense(2, activation="relu", name="scores")(x)))
        >>> [i.name for i in proto.graph.input], [o.name for o in proto.graph.output]
        (['features'], ['scores'])
        >>> [n.op_type for n in proto.graph.node]
        ['MatMul', 'Add', 'Relu']
    """
    onnx = _import_onnx()
    opset = _check_opset(opset, onnx.defs.onnx_opset_version())
    if functional_of(model) is None:
        raise ValueError(
            f"to_onnx expects a functional or Sequential model with a graph, received {type(model).__name__} "
            f"{getattr(model, 'name', '')!r}. A subclassed model has no graph to export: build it with the "
            "functional API (Model(inputs, outputs))."
        )
    plan = model.plan
    graph = _Graph(onnx, opset)
    input_names = [_Name(graph.unique(name)) for name in model.input_names]
    output_names = [graph.unique(name) for name in model.output_names]
    outputs = clean_transposes(graph, _walk(graph, plan, input_names, ""))
    _name_outputs(graph, outputs, output_names, set(input_names))
    return _assemble(onnx, model, graph, input_names, output_names)


def _name_outputs(graph, values, names, inputs):
    """Renames the values the model outputs after its outputs: their producer's
    output where it is a node's and first used here, else through an Identity."""
    produced = {output: node for node in graph.nodes for output in node.outputs}
    renamed = {}
    for value, name in zip(values, names):
        node = produced.get(value)
        if node is None or value in renamed:
            graph.nodes.append(_Node("Identity", [renamed.get(value, value)], [name], graph.unique(f"{name}/Identity"),
                                     "", {}))
            continue
        renamed[value] = name
        node.outputs = [name if o == value else o for o in node.outputs]
    for node in graph.nodes:
        node.inputs = [renamed.get(i, i) for i in node.inputs]


def _value_info(onnx, name, tensor):
    shape = ["batch" if axis == 0 else d for axis, d in enumerate(tensor.shape)]
    return onnx.helper.make_tensor_value_info(name, onnx.helper.np_dtype_to_tensor_dtype(np.dtype(tensor.dtype)),
                                              shape)


def _assemble(onnx, model, graph, input_names, output_names):
    """The ModelProto, filled in place: the weights' bytes are copied once (make_graph and
    make_model would copy them twice more, a third of ResNet50's export), and each array,
    often a transposed copy of a kernel, is let go of once its bytes are in the proto."""
    helper = onnx.helper
    opsets = [helper.make_opsetid("", graph.opset)]
    opsets += [helper.make_opsetid(domain, 1) for domain in sorted({n.domain for n in graph.nodes if n.domain})]
    proto = onnx.ModelProto(ir_version=helper.find_min_ir_version_for(opsets), producer_name="nodeweave")
    proto.opset_import.extend(opsets)
    body = proto.graph
    body.name = model.name
    body.node.extend(helper.make_node(n.op_type, n.inputs, n.outputs, name=n.name, domain=n.domain or None,
                                      **n.attributes) for n in graph.nodes)
    for name in list(graph.initializers):
        array = graph.initializers.pop(name)
        tensor = body.initializer.add()
        tensor.name = name
        tensor.data_type = graph.onnx_dtype(array.dtype)
        tensor.dims.extend(array.shape)
        tensor.raw_data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    body.input.extend(_value_info(onnx, name, t) for name, t in zip(input_names, model.plan.inputs))
    body.output.extend(_value_info(onnx, name, t) for name, t in zip(output_names, model.plan.outputs))
    return proto


def save_onnx(model, path, opset=None):
    """Writes ``to_onnx(model, opset)`` to ``path`` (a ``.onnx`` file),
    atomically as every save is: a failed or interrupted export leaves any
    previous file as it was.

    Args:
        model: a functional or Sequential model.
        path: the file to write.
        opset: the ONNX opset (default 18).

    Example:
        >>> import os, tempfile
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> path = os.path.join(tempfile.mkdtemp(), "model.onnx")
        >>> save_onnx(Model(x, Dense(2)(x)), path)
        >>> os.path.getsize(path) > 0
        True
    """
    content = to_onnx(model, opset).SerializeToString()
    atomic_write(path, lambda handle: handle.write(content))
