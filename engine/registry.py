"""The registry of serializable classes and functions (Caffe's layer factory):
configs name classes, and loading looks names up here and nowhere else."""

import difflib

_REGISTRY = {}
_SCOPES = []  # the custom_objects of the loads in progress, innermost last
_SAFE_MODE = []
_BUILTIN_PACKAGES = ("engine", "layers")


def register(name, obj):
    """Registers ``obj`` under ``name``; a name can be registered once."""
    if name in _REGISTRY and _REGISTRY[name] is not obj:
        raise ValueError(
            f"The name {name!r} is already registered (by {_describe(_REGISTRY[name])}); "
            "register the new object under another name or package."
        )
    _REGISTRY[name] = obj


def register_serializable(package="Custom", name=None):
    """Decorator registering a user class or function as ``"package>Name"``.

    Example:
        >>> from engine import Layer
        >>> @register_serializable(package="my_pkg")
        ... class Scale(Layer):
        ...     def call(self, inputs):
        ...         return inputs * 2.0
    """
    if not isinstance(package, str) or not package or ">" in package:
        raise ValueError(f"register_serializable expects a package name without '>', received {package!r}.")

    def decorator(obj):
        register(f"{package}>{name or obj.__name__}", obj)
        obj._registered_name = f"{package}>{name or obj.__name__}"
        return obj

    return decorator


def register_builtin(cls):
    """Called for every Layer subclass: registers those defined in nodeweave's own packages."""
    if cls.__module__.split(".")[0] in _BUILTIN_PACKAGES and not cls.__name__.startswith("_"):
        register(cls.__name__, cls)


def registered_name(obj):
    """The name ``obj`` is registered under, or None."""
    name = getattr(obj, "_registered_name", None) or getattr(obj, "__name__", None)
    if name in _REGISTRY and _REGISTRY[name] is obj:
        return name
    for key, value in _REGISTRY.items():
        if value is obj:
            return key
    return None


class custom_object_scope:
    """Within ``with custom_object_scope({"Name": obj}):``, lookups also find these objects."""

    def __init__(self, custom_objects):
        self.custom_objects = dict(custom_objects or {})

    def __enter__(self):
        _SCOPES.append(self.custom_objects)
        return self

    def __exit__(self, *exc):
        _SCOPES.pop()


class loading_options:
    """Within ``with loading_options(safe_mode=...)``, ``safe_mode()`` tells
    deserializers whether they may import code named in a file."""

    def __init__(self, safe_mode=True):
        self.safe_mode = safe_mode

    def __enter__(self):
        _SAFE_MODE.append(self.safe_mode)
        return self

    def __exit__(self, *exc):
        _SAFE_MODE.pop()


def safe_mode():
    """Whether the load in progress is in safe mode (True outside any load)."""
    return _SAFE_MODE[-1] if _SAFE_MODE else True


def lookup(name, custom_objects=None, kind="layer type"):
    """Returns the object registered, passed in ``custom_objects`` or in an
    enclosing ``custom_object_scope`` under ``name``."""
    for scope in [custom_objects or {}, *reversed(_SCOPES)]:
        if isinstance(name, str) and name in scope:
            return scope[name]
    if isinstance(name, str) and name in _REGISTRY:
        return _REGISTRY[name]
    _fill_builtins()
    if isinstance(name, str) and name in _REGISTRY:
        return _REGISTRY[name]
    known = sorted(set(_REGISTRY).union(custom_objects or {}, *_SCOPES))
    close = difflib.get_close_matches(str(name), known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"Unknown {kind}: {name!r} (known types: {', '.join(known)}).{hint}")


def _fill_builtins():
    # Importing the catalog and the operator layers registers every built-in layer.
    import engine.ops  # noqa: F401
    import layers  # noqa: F401


def _describe(obj):
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"
