"""Model: a layer made of layers. ``Model(inputs, outputs)`` builds a Functional."""

import inspect

import numpy as np

from engine import extensions, tree
from engine.files import saving
from engine.network import state_tree
from engine.files.keras_format import weights_file
from engine.network.keras_tensor import KerasTensor
from engine.network.layer import Layer
from engine.training.trainer import Trainer


class Model(Trainer, Layer):
    """A layer that groups layers, with the model-level API.

    ``Model(inputs=..., outputs=...)`` returns a functional model (see
    ``Functional``); subclassing ``Model`` and defining ``call`` makes a model
    whose sub-layers are found from its attributes. Training (``compile``,
    ``fit``, ``evaluate``, ``predict``...) comes from ``engine.training.trainer.Trainer``.

    Args:
        inputs: the model's ``Input`` tensors (one, a list or a dict), for a
            functional model.
        outputs: the tensors computed from them (one, a list or a dict).
        name: the model's name (default: an automatic ``functional``,
            ``functional_1``..., or the subclass's name in snake case).
        trainable: whether ``fit`` updates the model's weights.

    Example:
        >>> import numpy as np
        >>> from engine import Input
        >>> from layers import Dense
        >>> x = Input(shape=(4,))
        >>> model = Model(inputs=x, outputs=Dense(2)(x))
        >>> model(np.ones((3, 4))).shape
        (3, 2)

        A subclassed model:

        >>> class TwoLayers(Model):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.hidden, self.out = Dense(8, activation="relu"), Dense(1)
        ...     def call(self, inputs):
        ...         return self.out(self.hidden(inputs))
        >>> TwoLayers()(np.ones((3, 4))).shape
        (3, 1)
    """

    _masks_eager_outputs = False  # a model's compute_mask runs its graph again: model(x) stays one run

    def __new__(cls, *args, **kwargs):
        if cls is Model and (args or "inputs" in kwargs or "outputs" in kwargs):
            Functional = _functional().Functional
            return Functional.__new__(Functional)
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        # A subclass called (or calling super().__init__) with inputs and outputs is a functional model, as in
        # Keras: the instance becomes one of the subclass's functional variant (see functional_subclass).
        if _functional_arguments(args, kwargs):
            functional = _functional()
            if not isinstance(self, functional.Functional):
                self.__class__ = functional.functional_subclass(type(self))
            functional.Functional.__init__(self, *args, **kwargs)
        else:
            Layer.__init__(self, *args, **kwargs)

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """Rebuilds a functional model from its ``get_config()``, with fresh weights.

        ``Model.from_config(config)`` builds a ``Functional`` as ``Model(inputs,
        outputs)`` does; on a subclass it calls ``cls(**config)``.

        Args:
            config: the dict ``get_config()`` returned.
            custom_objects: ``{"Name": class_or_function}`` for the user's own
                layers and functions named in the config.
            safe_mode: None or True never imports code named by the config;
                False allows it (``Lambda`` layers), for configs you trust.

        Returns:
            The new model.

        Example:
            >>> import numpy as np
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,), name="x")
            >>> model = Model(x, Dense(2, name="dense")(x), name="tiny")
            >>> clone = Model.from_config(model.get_config())
            >>> clone.name, [layer.name for layer in clone.layers]
            ('tiny', ['x', 'dense'])
        """
        Functional, functional_subclass = _functional().Functional, _functional().functional_subclass
        if cls is Model:
            return Functional.from_config(config, custom_objects=custom_objects, safe_mode=safe_mode)
        if _is_functional_config(config) and _takes_functional_arguments(cls):
            return Functional.from_config.__func__(functional_subclass(cls), config, custom_objects, safe_mode)
        return super().from_config(config)

    def save(self, path):
        """Writes the model to a ``.nw`` file: architecture, weights and compile state.

        ``engine.load_model`` reads it back. A path ending in ``.keras`` gets a
        Keras 3 archive instead, which ``keras.saving.load_model`` reads
        (see ``engine.files.keras_format.writer``). The file is written whole or not
        at all (through a temporary file), with the permissions the umask gives.

        Args:
            path: the file's path; it must end in ``.nw`` or ``.keras``.

        Raises:
            ValueError: the path ends in neither; for ``.keras``, a layer Keras
                cannot load (a ``Lambda``), named in the message.
            NotImplementedError: a subclassed model (its architecture is Python
                code): save its weights with ``save_weights`` instead.

        Example:
            >>> import os, tempfile
            >>> from engine import load_model
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,), name="x")
            >>> model = Model(x, Dense(2, name="dense")(x), name="tiny")
            >>> with tempfile.TemporaryDirectory() as folder:
            ...     model.save(os.path.join(folder, "tiny.nw"))
            ...     load_model(os.path.join(folder, "tiny.nw")).name
            'tiny'
        """
        saving.save_model(self, path)

    def export(self, filepath, format="onnx", opset=None):
        """Writes the model for inference in another runtime: ONNX (Keras 3's
        ``export`` signature). See ``graph.onnx_export`` for what maps to what;
        masks and ``training=True`` behaviour are not exported.

        Args:
            filepath: the file to write (``model.onnx``).
            format: ``"onnx"``, the one supported format.
            opset: the ONNX opset (default 18).

        Raises:
            ValueError: another format; a layer without an ONNX converter
                (``graph.OnnxExportError``, which names it and how to register one).
            ModuleNotFoundError: ``onnx`` is not installed (``pip install "nodeweave[onnx]"``).

        Example:
            >>> import os, tempfile
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,), name="x")
            >>> path = os.path.join(tempfile.mkdtemp(), "tiny.onnx")
            >>> Model(x, Dense(2)(x)).export(path)
            >>> os.path.exists(path)
            True
        """
        if format != "onnx":
            raise ValueError(f"Unrecognized format={format!r}: Model.export supports format='onnx'. For a Keras or "
                             "nodeweave file use model.save(path).")
        extensions.provided("onnx_export")(self, filepath, opset=opset)

    def save_weights(self, path):
        """Writes the weights to a ``.weights.h5`` file, as Keras 3 does, or to an ``.npz`` file.

        A ``.weights.h5`` file is Keras 3's own (``keras.Model.load_weights``
        reads it), holding a compiled model's optimizer state as Keras' does
        (see ``engine.files.keras_format.weights_file``); an ``.npz`` file holds
        the weights keyed by weight path (``dense/kernel``). Either is written
        whole or not at all.

        Args:
            path: the file's path; it must end in ``.weights.h5`` or ``.npz``.

        Raises:
            ValueError: the path ends in neither.

        Example:
            >>> import os, tempfile
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,), name="x")
            >>> model = Model(x, Dense(2, name="dense")(x), name="tiny")
            >>> with tempfile.TemporaryDirectory() as folder:
            ...     model.save_weights(os.path.join(folder, "tiny.weights.h5"))
            ...     model.save_weights(os.path.join(folder, "tiny.npz"))
            ...     sorted(np.load(os.path.join(folder, "tiny.npz")))
            ['dense/bias', 'dense/kernel']
        """
        weights_file.check_suffix(path, weights_file.SAVE_SUFFIXES, "save_weights")
        if str(path).endswith(".weights.h5"):
            weights_file.save_weights_h5(self, path)
        else:
            saving.save_weights(self, path)

    def load_weights(self, path, skip_mismatch=False):
        """Reads weights written by ``save_weights``, or by Keras 3, into this model.

        A ``.weights.h5`` file (Keras 3's, or ours) and the weights of a
        ``.keras`` archive match by structure, as Keras matches them: by the
        layers' classes and order, never their names (a compiled model's
        optimizer also gets the state the file holds). An ``.npz`` file
        matches by path, or by structure (same count, order and final names);
        see ``engine.files.saving.load_weights``. So a second instance of an
        architecture loads the weights of the first. Nothing is assigned
        unless everything fits.

        Args:
            path: a ``.weights.h5``, ``.keras`` or ``.npz`` file.
            skip_mismatch: skip the weights (for Keras' files, the layers)
                that do not fit instead of raising.

        Returns:
            A message for each weight or layer skipped (empty when all loaded).

        Raises:
            ValueError: the path ends in none of those suffixes.
            engine.ModelFormatError: weights that do not fit (without
                ``skip_mismatch``; the message names them), or a damaged file.

        Example:
            >>> import os, tempfile
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,), name="x")
            >>> model = Model(x, Dense(2, name="dense")(x), name="tiny")
            >>> copy = Model(x, Dense(2)(x))
            >>> with tempfile.TemporaryDirectory() as folder:
            ...     model.save_weights(os.path.join(folder, "tiny.weights.h5"))
            ...     copy.load_weights(os.path.join(folder, "tiny.weights.h5"))
            []
            >>> bool(np.all(copy.layers[1].kernel.numpy() == model.layers[1].kernel.numpy()))
            True
        """
        weights_file.check_suffix(path, weights_file.LOAD_SUFFIXES, "load_weights")
        if str(path).endswith(".npz"):
            return saving.load_weights(self, path, skip_mismatch=skip_mismatch)
        return weights_file.load_keras_weights(self, path, skip_mismatch=skip_mismatch)

    def to_json(self, **kwargs):
        """The architecture (no weights) as a JSON string; ``engine.model_from_json`` rebuilds it.

        Args:
            **kwargs: passed to ``json.dumps`` (``indent=2``...).

        Returns:
            The JSON text.

        Example:
            >>> from engine import model_from_json
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,), name="x")
            >>> model = Model(x, Dense(2, name="dense")(x), name="tiny")
            >>> model_from_json(model.to_json()).name
            'tiny'
        """
        return saving.to_json(self, **kwargs)

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                collapse_repeats=False):
        """Prints the Keras-style table of layers, output shapes, parameters and connections.

        Args:
            line_length: total width of the table (default 88 for a chain of
                layers, 108 otherwise).
            positions: where each column ends, as fractions of ``line_length``
                or as character positions; one per column.
            print_fn: called with each line of the table, instead of ``print``.
            expand_nested: list the layers of nested models under them, indented.
            show_trainable: add a "Trainable" column.
            collapse_repeats: list each run of identical blocks by its first
                block and one row for the others (``⋮ ×12 in all``).

        Example:
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,), name="x")
            >>> model = Model(x, Dense(2, name="dense")(x), name="tiny")
            >>> lines = []
            >>> model.summary(print_fn=lines.append)
            >>> lines[0], lines[-3]
            ('Model: "tiny"', ' Total params: 8 (32.00 B)')
        """
        extensions.provided("model_summary")(
            self, line_length=line_length, positions=positions, print_fn=print_fn, expand_nested=expand_nested,
            show_trainable=show_trainable, collapse_repeats=collapse_repeats)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Notebook display: the graph as SVG, or the text summary when there is no graph or no graphviz."""
        return extensions.provided("model_display")(self)

    # ------------------------------------------------ running on flat batches
    # A subclassed model takes whatever structure of arrays its call() takes: the
    # trainer batches the flat list of arrays and these methods pack each batch
    # back into that structure. Functional overrides them with its plan.
    def _standardize_inputs(self, inputs):
        """The flat arrays of ``inputs`` (an array, or lists, tuples and dicts of
        them), checked as model inputs; their structure is kept for ``_run_flat``."""
        from engine.data.data_adapter import cast_input

        self._input_structure = tree.map_structure(lambda _: ..., inputs)
        arrays = []
        for index, value in enumerate(tree.flatten(inputs)):
            value = np.asarray(value)
            # Integers stay integers (indices for an Embedding); anything else becomes the model's dtype.
            dtype = value.dtype if value.dtype.kind in "iu" else self.dtype
            arrays.append(cast_input(value, dtype, f"Input {index} of model {self.name!r}"))
        return arrays

    def _pack_inputs(self, arrays):
        return tree.pack_as(self._input_structure, arrays)

    def _run_flat(self, arrays, training=False):
        """Flat outputs of the model called on flat input arrays."""
        return self._flatten_outputs(self(self._pack_inputs(arrays), training=training))

    def _forward_flat(self, arrays):
        """Training forward on flat arrays: (flat outputs, cache for ``_backward_flat``)."""
        outputs, cache = self.forward(self._pack_inputs(arrays), training=True)
        return self._flatten_outputs(outputs), cache

    def _backward_flat(self, cache, grad_outputs):
        """``{Variable: gradient}`` given the gradients of the flat outputs."""
        _, weight_grads = self.backward(cache, self._pack_outputs(grad_outputs))
        return weight_grads

    def _flatten_outputs(self, outputs):
        if getattr(self, "_output_structure", None) is None:
            self._output_structure = tree.map_structure(lambda _: ..., outputs)
            self._output_specs = [KerasTensor((None, *np.shape(a)[1:]), np.asarray(a).dtype)
                                  for a in tree.flatten(outputs)]
        return tree.flatten(outputs)

    def _pack_outputs(self, flat):
        return tree.pack_as(self._output_structure, flat)

    def _outputs_known(self):
        return getattr(self, "_output_structure", None) is not None

    def _build_on(self, x):
        """Calls a model whose outputs are not known yet on the first sample of ``x``,
        as Keras builds a subclassed model on the first batch of fit/evaluate."""
        if not self._outputs_known():
            self._run_flat([a[:1] for a in self._standardize_inputs(x)])

    def _graph_model(self):
        """The Functional holding this model's graph of layer calls (see
        ``engine.network.functional.functional_of``); None: a subclassed model's
        ``call`` is Python code."""
        return None

    @property
    def compiled(self) -> bool:
        """Whether ``compile()`` has run on this model (Keras' flag)."""
        return getattr(self, "_compile_args", None) is not None

    @property
    def metrics_variables(self) -> list:
        """The compiled metrics' state as Variables named ``metric/state`` (``loss/total``): copies, read now.
        Write it with ``set_state_tree({"metrics_variables": ...})``."""
        return state_tree.metrics_variables(self)

    def get_state_tree(self, value_format="backend_tensor") -> dict:
        """Every variable's value in a nested dict: ``tree[family][layer]...[name]`` (see ``engine.network.state_tree``).

        Args:
            value_format: ``"backend_tensor"`` (the arrays) or ``"numpy_array"`` (copies).

        Example:
            >>> from engine import Input
            >>> from layers import Dense
            >>> x = Input(shape=(3,))
            >>> model = Model(x, Dense(1, name="out")(x))
            >>> model.compile(optimizer="adam", loss="mse")
            >>> sorted(model.get_state_tree()["trainable_variables"]["out"])
            ['bias', 'kernel']
        """
        return state_tree.get_state_tree(self, value_format)

    def set_state_tree(self, state_tree_values: dict) -> None:
        """Assigns the values of a (partial) state tree, as ``get_state_tree`` returns it, to the variables.

        Args:
            state_tree_values: ``{family: nested dict of values}``.

        Example:
            >>> from engine import Input
            >>> from layers import Dense
            >>> x = Input(shape=(2,))
            >>> model = Model(x, Dense(1, name="out")(x))
            >>> model.set_state_tree({"trainable_variables": {"out": {"kernel": [[1.0], [2.0]]}}})
            >>> model.get_layer("out").kernel.value.ravel()
            array([1., 2.], dtype=float32)
        """
        state_tree.set_state_tree(self, state_tree_values)

    @property
    def outputs(self):
        """Symbolic stand-ins (shape and dtype) of the outputs, once the model has run."""
        self._require_outputs("outputs")
        return list(self._output_specs)

    @property
    def output_names(self):
        """The outputs' names: the keys of a dict output, else ``output_0``, ``output_1``..."""
        self._require_outputs("output_names")
        if isinstance(self._output_structure, dict):
            return sorted(self._output_structure)
        return [f"output_{index}" for index in range(len(self._output_specs))]

    def _require_outputs(self, what):
        if not self._outputs_known():
            raise ValueError(
                f"Model {self.name!r} has not run yet, so its {what} are not known. Call it on a batch of data "
                "first (fit, evaluate and predict do so on their first batch)."
            )

    @property
    def layers(self):
        """The layers this model is made of, in order."""
        layers = []
        for module in self._child_modules():
            if isinstance(module, Layer) and not any(module is layer for layer in layers):
                layers.append(module)
        return layers

    @layers.setter
    def layers(self, _):
        raise AttributeError(
            f"`Model.layers` attribute is reserved and should not be set (model {self.name!r}): it lists the layers the "
            "model finds in its attributes. Please use another name, such as self.blocks = [...]."
        )

    def get_layer(self, name=None, index=None):
        """Returns a layer by its name, its qualified path or its index in ``layers``.

        Args:
            name: the layer's name, or its path through nested models,
                outermost first, without this model's name (``"block/inner/conv"``).
            index: its position in ``layers`` (negative counts from the end).

        Returns:
            The layer.

        Raises:
            ValueError: neither or both of ``name`` and ``index`` given, or no
                such layer (the message lists the existing names, or the
                closest paths for a path).

        Example:
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,), name="x")
            >>> inner = Model(x, Dense(2, name="dense")(x), name="inner")
            >>> z = Input(shape=(3,), name="z")
            >>> model = Model(z, inner(z), name="outer")
            >>> model.get_layer("inner").name, model.get_layer("inner/dense").units, model.get_layer(index=0).name
            ('inner', 2, 'z')
        """
        if (name is None) == (index is None):
            raise ValueError(
                "Provide either a layer name or a layer index to get_layer(), "
                f"received name={name!r} and index={index!r}."
            )
        layers = self.layers
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise ValueError(
                    f"Was asked to retrieve layer at index {index} but model {self.name!r} "
                    f"only has {len(layers)} layers."
                )
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        qualified_names = _qualified_names()
        if isinstance(name, str) and "/" in name:
            return qualified_names.find_layer(self, name)
        nested = [path for path in qualified_names.layer_paths(self) if path.endswith(f"/{name}")]
        raise ValueError(
            f"No such layer: {name!r} in model {self.name!r}. Existing layers are: "
            f"{[layer.name for layer in layers]}."
            + (f" Nested models hold {name!r} at: {', '.join(map(repr, nested))} (pass that path)." if nested else "")
        )

    def get_node(self, path: str):
        """Returns a call (Node) of a layer of this model, at any depth.

        Args:
            path: ``"<layer path>[k]"``, k the call's index in the layer's
                ``inbound_nodes``: ``"shared[1]"``, ``"block/conv[0]"``.

        Returns:
            The Node.

        Raises:
            ValueError: no such call (the message names the closest paths).

        Example:
            >>> from engine import Input, Model
            >>> from layers import Dense, add
            >>> a, b = Input(shape=(3,), name="a"), Input(shape=(3,), name="b")
            >>> shared = Dense(2, name="shared")
            >>> model = Model([a, b], add([shared(a), shared(b)]))
            >>> model.get_node("shared[1]").input_tensors[0] is b
            True
        """
        return _qualified_names().find_node(self, path)

    def get_tensor(self, path: str):
        """Returns a symbolic tensor of this model, at any depth.

        Args:
            path: ``"<call path>[i]"``, output i of a call (``"shared[1][0]"``,
                ``"block/conv[0][0]"``), or the name of an input.

        Returns:
            The KerasTensor.

        Raises:
            ValueError: no such tensor (the message names the closest paths).

        Example:
            >>> from engine import Input, Model
            >>> from layers import Dense
            >>> x = Input(shape=(3,), name="x")
            >>> y = Dense(2, name="d")(x)
            >>> model = Model(x, y)
            >>> model.get_tensor("d[0][0]") is y
            True
        """
        return _qualified_names().find_tensor(self, path)


def _functional_arguments(args, kwargs):
    """Whether a model's constructor arguments are ``(inputs, outputs)``, as Keras tells them apart."""
    return len(args) == 2 or (len(args) == 1 and "outputs" in kwargs) or ("inputs" in kwargs and "outputs" in kwargs)


def _is_functional_config(config):
    return isinstance(config, dict) and all(key in config for key in ("layers", "input_layers", "output_layers"))


def _takes_functional_arguments(cls):
    """Whether ``cls(inputs, outputs, name=..., trainable=...)`` rebuilds a model of ``cls`` from a functional
    config: its ``__init__`` is Model's, Functional's, or takes ``*args, **kwargs``."""
    if cls.__init__ in (Model.__init__, _functional().Functional.__init__):
        return True
    spec = inspect.getfullargspec(cls.__init__)
    return spec.varargs is not None and spec.varkw is not None


def _functional():
    """``engine.network.functional``: Functional subclasses Model, so it lends itself to Model from above."""
    return extensions.provided("functional")


def _qualified_names():
    """``engine.network.qualified_names``, which imports the models, lent from above."""
    return extensions.provided("qualified_names")


extensions.provide("model", Model)  # engine.files.saving, below the models, asks whether a layer is a model
