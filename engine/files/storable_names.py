"""The names a model file stores and gives back: layer names and weight names.

A layer's name is one part of its weights' paths (``dense/kernel``), which are
member names in a ``.nw`` or ``.keras`` zip archive; the rules here keep every
name a file can hold, and refuse the others when the layer or weight is made,
not when the model is saved.
"""

import re

_NAME_RULE = ("1 to 255 characters, any but '/', '\\', control characters (such as '\\x00' or '\\n') and "
              "lone surrogates")


# Control characters (Unicode category Cc) and lone surrogates (Cs) spelled out,
# so that checking a name is one regular-expression match.
_NAME_PART = r"[^\x00-\x1f\x7f-\x9f/\\\ud800-\udfff]"
_STORABLE_NAME = re.compile(_NAME_PART + "{1,255}")
# Weight names may have parts, as in "query/kernel" (the length is checked apart).
_STORABLE_WEIGHT_NAME = re.compile(_NAME_PART + "+(?:/" + _NAME_PART + "+)*")


def is_storable_name(name) -> bool:
    """Whether a model file holds ``name`` and gives it back: ``/`` separates the
    parts of weight paths, and the zip archive cuts names at NUL, cannot store
    lone surrogates (not UTF-8), reads ``\\`` as ``/`` on Windows and limits a
    member name to 65535 bytes (nested models add their names to the paths)."""
    return isinstance(name, str) and _STORABLE_NAME.fullmatch(name) is not None


def check_layer_name(cls: type, name) -> None:
    """Raises unless ``name`` (None: a name will be made) is a storable layer name.

    Raises:
        ValueError: naming the class, the rule and the name received.

    Example:
        >>> check_layer_name(object, "dense_1")
        >>> check_layer_name(object, "a/b")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: object expects name to be a string of 1 to 255 characters, ...
    """
    if name is not None and not is_storable_name(name):
        raise ValueError(
            f"{cls.__name__} expects name to be a string of {_NAME_RULE}, so that models holding the "
            f"layer can be saved and loaded. Received: name={name!r}"
        )


def check_weight_name(layer, name) -> None:
    """Raises unless ``name`` (empty: a name will be made) is a storable weight name of ``layer``.

    Raises:
        ValueError: naming the layer, the rule and the name received.
    """
    if name and not (isinstance(name, str) and len(name) <= 255 and _STORABLE_WEIGHT_NAME.fullmatch(name)):
        raise ValueError(
            f"Layer {layer.name!r} ({type(layer).__name__}) expects weight names of {_NAME_RULE}; '/' may only "
            f"separate non-empty parts, as in 'query/kernel'. Received: name={name!r}"
        )


def positional_weight_args(layer, args: tuple, shape, initializer, dtype) -> tuple:
    """``add_weight``'s positional ``(shape, initializer, dtype)``, as Keras 3
    takes them; a name first (Keras 2's style) is a ValueError saying what to write."""
    where = f"Layer {layer.name!r} ({type(layer).__name__}): "
    if len(args) > 3:
        raise TypeError(f"{where}add_weight() takes at most 3 positional arguments (shape, initializer, dtype) "
                        f"but {len(args)} were given.")
    if args and isinstance(args[0], str):
        raise ValueError(
            f"{where}`name` must be passed as a keyword argument. Received: add_weight({args[0]!r}, ...). "
            f"Use: add_weight(shape=..., name={args[0]!r})."
        )
    keywords = {"shape": shape, "initializer": initializer, "dtype": dtype}
    for key, value in zip(keywords, args):
        if keywords[key] is not None:
            raise ValueError(f"{where}`{key}` was passed both positionally and as a keyword argument.")
        keywords[key] = value
    return keywords["shape"], keywords["initializer"], keywords["dtype"]
