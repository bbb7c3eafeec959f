"""Sequential: a functional model that is a plain stack of layers."""

from engine.functional import Functional
from engine.input_layer import Input, InputLayer
from engine.keras_tensor import KerasTensor
from engine.layer import BUILD_LOCK, Layer
from engine.naming import unique_name


class Sequential(Functional):
    """A stack of layers, each fed the output of the one before.

    It becomes a functional model as soon as its input shape is known: from an
    ``Input`` added first, from ``input_shape=`` on the first layer, or from
    the first call (or ``build``).

    Example:
        >>> from layers import Dense
        >>> model = Sequential()
        >>> model.add(Dense(input_shape=(10,), units=10, activation="relu"))
        >>> model.add(Dense(units=1))
        >>> model.output_shape
        (None, 1)
    """

    def __init__(self, layers=None, trainable=True, name=None):
        super(Functional, self).__init__(trainable=trainable, name=name or unique_name("sequential"))
        self._stack = []
        self._graph_plan = None
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        """Appends a layer (or an ``Input`` tensor, first only) to the stack."""
        if isinstance(layer, KerasTensor) and isinstance(layer._keras_history.layer, InputLayer):
            layer = layer._keras_history.layer
        if not isinstance(layer, Layer):
            raise TypeError(
                f"Only instances of Layer can be added to Sequential model {self.name!r}. "
                f"Received: {layer!r} (of type {type(layer).__name__})."
            )
        if isinstance(layer, InputLayer) and self._stack:
            raise ValueError(
                f"An InputLayer can only be the first layer of Sequential model {self.name!r}, "
                f"which already has layers {[l.name for l in self._stack]}."
            )
        self._stack.append(layer)
        self._invalidate_graph()

    def pop(self):
        """Removes and returns the last layer."""
        layers = self.layers
        if not layers:
            raise ValueError(f"There are no layers in Sequential model {self.name!r} to pop.")
        layer = self._stack.pop()
        self._invalidate_graph()
        return layer

    def _invalidate_graph(self):
        # Until the graph is rebuilt, the layers are found through the `_stack` attribute.
        self._graph_plan = None
        self._modules = []
        self.built = False

    @property
    def layers(self):
        return [layer for layer in self._stack if not isinstance(layer, InputLayer)]

    def build(self, input_shape=None):
        """Builds the graph for inputs of ``input_shape`` (batch axis included)."""
        if input_shape is None:
            input_shape = self._known_input_shape()
            if input_shape is None:
                raise ValueError(
                    f"Sequential model {self.name!r} cannot be built without an input shape: "
                    "add an Input first, pass input_shape= to the first layer, or call build(input_shape)."
                )
        if self._stack and isinstance(self._stack[0], InputLayer):
            inputs = self._stack[0].output
        else:
            inputs = Input(batch_shape=tuple(input_shape))
        outputs = inputs
        for layer in self.layers:
            outputs = layer(outputs)
        self._init_graph(inputs, outputs)

    def _known_input_shape(self):
        if not self._stack:
            return None
        first = self._stack[0]
        if isinstance(first, InputLayer):
            return first.batch_shape
        return first._batch_input_shape

    @property
    def plan(self):
        if self._graph_plan is None:
            self.build()
        return self._graph_plan

    def _maybe_build(self, inputs):
        if self._graph_plan is not None:
            return
        with BUILD_LOCK:
            if self._graph_plan is None:  # another thread may have built it while this one waited
                shape = tuple(inputs.shape) if not isinstance(inputs, (list, tuple)) else tuple(inputs[0].shape)
                self.build(self._known_input_shape() or (None,) + shape[1:])

    def _build_if_shape_known(self):
        if self._graph_plan is None and self._known_input_shape() is not None:
            self.build()

    @property
    def weights(self):
        self._build_if_shape_known()
        return super().weights

    def _require_built(self, what):
        self._build_if_shape_known()
        super()._require_built(what)

    def get_config(self):
        from engine.functional_config import serialize_layer

        config = {"name": self.name, "trainable": self.trainable,
                  "layers": [serialize_layer(layer) for layer in self._stack]}
        if self._graph_plan is not None:
            config["build_input_shape"] = list(self._graph_plan.inputs[0].shape)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """Rebuilds the model from ``get_config()``'s output; the arguments are
        those of ``Functional.from_config``."""
        from engine.errors import as_model_format_error
        from engine.registry import loading_scope

        with as_model_format_error("Cannot rebuild the Sequential model from its config"), \
                loading_scope(custom_objects, safe_mode):
            return cls._from_config(config)

    @classmethod
    def _from_config(cls, config):
        from engine.functional_config import _expect, deserialize_layer

        _expect(isinstance(config, dict) and isinstance(config.get("layers"), list),
                "a Sequential config must be a dict with a list of layers")
        model = cls([deserialize_layer(entry) for entry in config["layers"]],
                    trainable=config.get("trainable", True), name=config.get("name"))
        shape = config.get("build_input_shape")
        if shape is not None:
            _expect(isinstance(shape, list), f"build_input_shape must be a list, received {shape!r}")
            model.build(tuple(shape))
        return model
