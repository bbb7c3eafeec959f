"""Module: tracks the variables and sub-modules assigned to it as attributes."""

from engine.variable import Variable


class Module:
    """A container that finds its weights by what is assigned to its attributes.

    Assigning a Variable, a Module, or a list or tuple of Modules to an
    attribute tracks it, so ``self.w = self.add_weight(...)`` or
    ``self.block = Dense(4)`` needs no registration call.
    """

    def __setattr__(self, name, value):
        if not isinstance(value, _TRACKABLE):
            object.__setattr__(self, name, value)
            return
        if isinstance(value, Variable):
            _append_once(self._tracked("_variables"), value)
        elif isinstance(value, Module):
            _append_once(self._tracked("_modules"), value)
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, Module) for v in value):
            for module in value:
                _append_once(self._tracked("_modules"), module)
        object.__setattr__(self, name, value)

    def _tracked(self, field):
        if field not in self.__dict__:
            object.__setattr__(self, field, [])
        return self.__dict__[field]

    def _submodules(self):
        """Every module below this one, depth first, each once (no recursion)."""
        found, seen = [], {id(self)}
        stack = list(reversed(self._tracked("_modules")))
        while stack:
            module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            found.append(module)
            stack.extend(reversed(module._tracked("_modules")))
        return found


_TRACKABLE = (Variable, Module, list, tuple)


def _append_once(items, value):
    if not any(item is value for item in items):
        items.append(value)
