"""Module: finds the variables and sub-modules held in its attributes."""

from engine import extensions
from engine.network.variable import Variable


class Module:
    """A container that finds its weights among its attributes, as ``tf.Module`` does.

    A Variable, a Module, or a list or tuple holding Modules, kept in an
    attribute is tracked, so ``self.w = self.add_weight(...)`` or
    ``self.block = Dense(4)`` needs no registration call. The attributes are
    read when weights are asked for, so assigning one costs nothing extra.

    ``pickle``, ``copy.copy`` and ``copy.deepcopy`` go through the ``.nw``
    bytes of the layer or model (see ``engine.pickling``): the copy is rebuilt
    from its config, weights and compile state, never from pickled internals.

    Example:
        >>> import copy
        >>> import numpy as np
        >>> from layers import Dense
        >>> layer = Dense(2)
        >>> _ = layer(np.ones((1, 3)))
        >>> twin = copy.deepcopy(layer)
        >>> bool(np.all(twin.kernel.numpy() == layer.kernel.numpy())), twin.kernel is layer.kernel
        (True, False)
    """

    #: The Variables made by ``add_weight``, in creation order: a list made by the first one.
    _variables = ()

    def __reduce__(self):
        return extensions.provided("reduce_layer")(self)  # engine.pickling, which imports this module

    def _tracked(self, field):
        """The explicit list ``field`` (``_variables`` from add_weight, ``_modules`` of a model)."""
        if field not in self.__dict__:
            self.__dict__[field] = []
        return self.__dict__[field]

    def _own_variables(self):
        """Variables made by add_weight, in creation order, then any other held in an attribute."""
        found = list(self._tracked("_variables"))
        seen = {id(v) for v in found}
        for value in list(self.__dict__.values()):  # a copy: another thread may be setting attributes (a first call)
            if isinstance(value, Variable) and id(value) not in seen:
                seen.add(id(value))
                found.append(value)
        return found

    def _child_modules(self):
        """The explicit ``_modules``, then the Modules held in attributes (alone, or in lists, tuples and dicts), each once."""
        children = list(self._tracked("_modules"))
        for name, value in list(self.__dict__.items()):  # copies: another thread may be setting attributes
            if isinstance(value, Module):
                children.append(value)
            elif isinstance(value, (list, tuple)) and name != "_modules":
                children.extend(v for v in value if isinstance(v, Module))
            elif isinstance(value, dict):
                children.extend(v for v in list(value.values()) if isinstance(v, Module))
        return list({id(child): child for child in children}.values())

    def _submodules(self):
        """Every module below this one, depth first, each once (no recursion)."""
        found, seen = [], {id(self)}
        stack = list(reversed(self._child_modules()))
        while stack:
            module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            found.append(module)
            stack.extend(reversed(module._child_modules()))
        return found
