"""A layer's weights: creating them (``add_weight``), listing them by trainability, reading and setting them.

``LayerWeights`` is a part of ``engine.network.layer.Layer``, which inherits it; it
holds no state of its own beyond the layer's Variables (``Module`` finds them
among the attributes).
"""

import math

import numpy as np

from engine.training import constraints, regularizers
from engine.network import initializers
from engine.files.load_limits import charge_weight
from engine.files.storable_names import check_weight_name, positional_weight_args
from engine.network.tracking import refuse_new_state, seed_states
from engine.network.dtype_names import DTYPE_NAMES, dtype_names
from engine.network.variable import Variable
from engine.network.weight_draws import drawn_later

_AGGREGATIONS = {None, "none", "mean", "sum", "only_first_replica"}
#: Weight names already found storable ("kernel", "bias"...): checked once, not at every weight.
_CHECKED_NAMES = set()
_MAX_CHECKED_NAMES = 4096
#: ``{shape as given, a tuple: the tuple of ints}``, filled as shapes are met (at most _MAX_CHECKED_NAMES).
_INT_SHAPES = {}


def _int_shape(shape):
    """``shape`` as a tuple of ints (``()`` for a scalar), looked up once per distinct shape: ``tuple(map(int,
    shape))`` costs more than the rest of ``add_weight``'s checks together.

    Example:
        >>> import numpy as np
        >>> _int_shape([np.int64(3), 2]), _int_shape(None)
        ((3, 2), ())
    """
    try:
        return _INT_SHAPES[shape]
    except (KeyError, TypeError):  # TypeError: a list, unhashable
        checked = tuple(map(int, shape)) if shape else ()
        if type(shape) is tuple and len(_INT_SHAPES) < _MAX_CHECKED_NAMES:
            _INT_SHAPES[shape] = checked  # equal shapes (8 and 8.0, np.int64(8)) have the same ints
        return checked


class LayerWeights:
    """The weights part of ``Layer``: ``add_weight``, the weight lists, ``get_weights``/``set_weights``."""

    def add_weight(self, *args, shape=None, initializer=None, dtype=None, trainable=True, autocast=True,
                   regularizer=None, constraint=None, aggregation="none", name=None):
        """Creates a weight of this layer, tracked as ``<layer name>/<name>``.

        Keras 3's signature: ``shape``, ``initializer`` and ``dtype`` may be
        given by position, everything else by keyword. ``initializer`` is a
        name (``"glorot_uniform"``), an Initializer or a callable ``(shape,
        dtype) -> array``; it defaults to ``glorot_uniform`` for floating
        weights and ``zeros`` otherwise. ``autocast`` and ``aggregation`` are
        accepted for Keras scripts and change nothing here (one precision, one
        replica).

        Args:
            *args: ``shape``, ``initializer`` and ``dtype``, by position.
            shape: the weight's shape (``()`` for a scalar).
            initializer: how to fill it (see above).
            dtype: its dtype (default: the layer's).
            trainable: whether training updates it.
            autocast: accepted, no effect.
            regularizer: a penalty on the weight, added to the training loss.
            constraint: a projection applied after each optimizer update.
            aggregation: accepted (``"none"``, ``"mean"``, ``"sum"``,
                ``"only_first_replica"``), no effect.
            name: the weight's name, unique in the layer (default ``variable_<i>``).

        Returns:
            The new ``Variable``.

        Raises:
            ValueError: a name used twice or not storable in a model file, an
                unknown aggregation, or an initializer that returned another shape.

        Example:
            >>> from engine.network.layer import Layer
            >>> layer = Layer(name="scale")
            >>> layer.add_weight(shape=(3,), initializer="ones", name="gamma").path
            'scale/gamma'
        """
        if args:
            shape, initializer, dtype = positional_weight_args(self, args, shape, initializer, dtype)
        if aggregation not in _AGGREGATIONS:
            raise ValueError(
                f"Layer {self.name!r} expects aggregation in {sorted(_AGGREGATIONS, key=str)}, "
                f"received {aggregation!r}."
            )
        if name is not None and (type(name) is not str or name not in _CHECKED_NAMES):
            check_weight_name(self, name)
            if len(_CHECKED_NAMES) < _MAX_CHECKED_NAMES:
                _CHECKED_NAMES.add(name)
        try:  # the lookups of _int_shape and dtype_names, without their calls in the common case
            shape, (dtype, np_dtype) = _INT_SHAPES[shape], DTYPE_NAMES[dtype or self.dtype]
        except (KeyError, TypeError):
            shape, (dtype, np_dtype) = _int_shape(shape), dtype_names(dtype or self.dtype)
        if initializer is None:
            initializer = "glorot_uniform" if np_dtype.kind == "f" else "zeros"
        if not callable(initializer):  # a name or a config; an Initializer or a function is kept as it is
            initializer = initializers.get(initializer)
        if charge_weight(self.name, name, shape, dtype, initializer):
            initializer = initializers.get("zeros")  # a load assigns it from the file: no initial values to draw
        later, place = drawn_later(initializer)
        if not later:
            value = np.asarray(initializer(shape, dtype=dtype), dtype=dtype)
            if value.shape != shape:
                raise ValueError(f"Initializer of weight {name!r} of layer {self.name!r} returned shape {value.shape}, "
                                 f"expected {shape}.")
        variables = self._variables  # a tuple, the class's, until the first weight
        name = name or f"variable_{len(variables)}"
        if self._state_locked:
            refuse_new_state(self, f"weight {name!r}")
        for variable in variables:
            if variable.name == name:
                raise ValueError(
                    f"Layer {self.name!r} ({type(self).__name__}) already has a weight named {name!r}: a model file "
                    "keeps weights by name, so give each weight of a layer its own name."
                )
        if regularizer is not None:
            regularizer = regularizers.get(regularizer)
        if constraint is not None:
            constraint = constraints.get(constraint)
        path = f"{self.name}/{name}"
        if later:
            variable = Variable.drawn_on_first_use(initializer, shape, np_dtype, place, name, path, trainable,
                                                   regularizer, constraint)
        else:
            variable = Variable(value, name=name, path=path, trainable=trainable, regularizer=regularizer,
                                constraint=constraint)
        if type(variables) is list:
            variables.append(variable)
        else:
            self._variables = [variable]
        return variable

    @property
    def trainable(self):
        """Whether training updates this layer's weights; setting it sets its sub-layers' too (freezing)."""
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        for layer in self._flatten_layers():
            layer._trainable = bool(value)
            for variable in layer._own_variables():  # as in Keras, the weights made trainable follow
                if variable._made_trainable:
                    variable.trainable = bool(value)

    def _weights_with_trainability(self):
        """(variable, trainable) for own weights (trainable first), then those of
        tracked sub-layers; a variable is trainable when it was created so and
        the layer that owns it is not frozen."""
        own = self._own_variables()
        found = [(v, v.trainable and self.trainable) for v in own if v._made_trainable]
        found += [(v, False) for v in own if not v._made_trainable]
        seen = {id(v) for v, _ in found}
        for module in self._submodules():
            frozen = isinstance(module, LayerWeights) and not module.trainable
            for variable in module._own_variables():
                if id(variable) not in seen:
                    seen.add(id(variable))
                    found.append((variable, variable.trainable and not frozen and self.trainable))
        return found

    @property
    def weights(self):
        """Own weights (trainable first), then those of tracked sub-layers."""
        return [v for v, _ in self._weights_with_trainability()]

    @property
    def trainable_weights(self):
        """The weights training updates: not created non-trainable, not in a frozen layer."""
        return [v for v, trainable in self._weights_with_trainability() if trainable]

    @property
    def non_trainable_weights(self):
        """The weights training leaves alone: created non-trainable (moving statistics) or in a frozen layer."""
        return [v for v, trainable in self._weights_with_trainability() if not trainable]

    @property
    def variables(self):
        """``weights``, then the states of the seed generators held (``engine.network.tracking``), as Keras 3 lists them."""
        return self.weights + seed_states(self)

    @property
    def trainable_variables(self):
        """Keras 3's name for ``trainable_weights``."""
        return self.trainable_weights

    @property
    def non_trainable_variables(self):
        """``non_trainable_weights``, then the states of the seed generators held, as in Keras 3."""
        return self.non_trainable_weights + seed_states(self)

    @property
    def _trainable_variables(self):
        """The layer's own weights created trainable, frozen or not (Keras' list)."""
        return [v for v in self._own_variables() if v._made_trainable]

    @property
    def _non_trainable_variables(self):
        """The layer's own weights created non-trainable (Keras' list)."""
        return [v for v in self._own_variables() if not v._made_trainable]

    def get_weights(self):
        """Returns copies of the weight values, in ``weights`` order.

        Raises:
            ValueError: the layer is not built yet (it has no weights).

        Example:
            >>> import numpy as np
            >>> from layers import Dense
            >>> layer = Dense(2)
            >>> _ = layer(np.ones((1, 3)))
            >>> [w.shape for w in layer.get_weights()]
            [(3, 2), (2,)]
        """
        self._require_built("get_weights")
        return [v.value.copy() for v in self.weights]

    def set_weights(self, weights):
        """Sets the weight values from a list of arrays, in ``weights`` order.

        Args:
            weights: one array per weight, each of that weight's shape.

        Raises:
            ValueError: the layer is not built, or the count or a shape differs.

        Example:
            >>> import numpy as np
            >>> from layers import Dense
            >>> layer = Dense(2)
            >>> _ = layer(np.ones((1, 3)))
            >>> layer.set_weights([np.ones((3, 2)), np.zeros(2)])
            >>> layer(np.ones((1, 3)))
            array([[3., 3.]], dtype=float32)
        """
        self._require_built("set_weights")
        variables = self.weights
        if len(weights) != len(variables):
            raise ValueError(
                f'You called set_weights(weights) on layer "{self.name}" with a weight list '
                f"of length {len(weights)}, but the layer was expecting {len(variables)} weights."
            )
        arrays = [np.asarray(w) for w in weights]
        for variable, array in zip(variables, arrays):
            if array.shape != variable.shape:
                raise ValueError(
                    f"Layer {self.name} weight shape {variable.shape} is not compatible with "
                    f"provided weight shape {array.shape} (weight {variable.path!r})."
                )
        for variable, array in zip(variables, arrays):
            variable.assign(array)

    def count_params(self):
        """Number of scalars in all weights.

        Raises:
            ValueError: the layer is not built yet.

        Example:
            >>> import numpy as np
            >>> from layers import Dense
            >>> layer = Dense(2)
            >>> _ = layer(np.ones((1, 3)))
            >>> layer.count_params()
            8
        """
        self._require_built("count_params")
        return sum(math.prod(v.shape) for v in self.weights)

    def _require_built(self, what):
        if not self.built:
            raise ValueError(
                f"You tried to call {what} on layer {self.name!r}, but the layer isn't built, "
                "so it has no weights yet. Call the layer on an input (or call "
                "layer.build(input_shape)) first."
            )
