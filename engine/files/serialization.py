"""Turning small configurable objects (initializers, regularizers, constraints)
into JSON-friendly configs and back, by registered name only."""

import difflib


def serialize(obj):
    """``{"class_name": ..., "config": ...}`` for an object with ``get_config``.

    Args:
        obj: an optimizer, initializer, regularizer, constraint or schedule.

    Returns:
        The dict, which the package's ``get`` turns back into an equal object.

    Example:
        >>> from engine.training.optimizers import SGD
        >>> serialize(SGD(learning_rate=0.5))["config"]["learning_rate"]
        0.5
    """
    return {"class_name": type(obj).__name__, "config": obj.get_config()}


def deserialize(kind, identifier, classes, aliases=None):
    """Returns an object of ``kind`` from a name, a ``{"class_name", "config"}``
    dict, or the object itself.

    ``classes`` maps class names (``"GlorotUniform"``) to classes and
    ``aliases`` maps short names (``"glorot_uniform"``) to class names.
    """
    aliases = aliases or {}
    if isinstance(identifier, str):
        class_name, config = aliases.get(identifier, identifier), {}
    elif isinstance(identifier, dict) and "class_name" in identifier:
        class_name, config = identifier["class_name"], identifier.get("config") or {}
        class_name = aliases.get(class_name, class_name)
    else:
        raise TypeError(
            f"Could not interpret {kind} identifier {identifier!r}: expected a name, a "
            "{'class_name': ..., 'config': ...} dict or an object."
        )
    if class_name not in classes:
        known = sorted(set(classes) | set(aliases))
        close = difflib.get_close_matches(str(class_name), known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"Unknown {kind}: {class_name!r} (known: {', '.join(known)}).{hint}")
    if not isinstance(config, dict):
        raise ValueError(f"The config of {kind} {class_name!r} must be a dict, received {config!r}.")
    cls = classes[class_name]
    return cls.from_config(config) if hasattr(cls, "from_config") else cls(**config)
