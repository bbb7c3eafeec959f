"""The registry of serializable classes and functions (Caffe's layer factory):
configs name classes, and loading looks names up here and nowhere else.

What a load in progress may use (its ``custom_objects`` and whether it is in
safe mode) lives in context variables, not in process-global state: each
thread (and each asyncio task) sees only the scopes it entered itself, so a
trusted load with ``safe_mode=False`` in one thread never lowers the guard of
a load running in another.
"""

import contextlib
import contextvars
import difflib
import importlib

from engine import extensions

_REGISTRY = {}
# The custom_objects of the loads in progress in this context, innermost last.
_SCOPES = contextvars.ContextVar("nodeweave_custom_object_scopes", default=())
# Whether the load in progress in this context may import code named by a file.
_SAFE_MODE = contextvars.ContextVar("nodeweave_safe_mode", default=True)
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

    Registered classes load from model files and configs without
    ``custom_objects=`` (``load_model``, ``model_from_json``, ``from_config``).

    Args:
        package: a name for the group of objects (no ``>``).
        name: the name to register under (default: the object's ``__name__``).

    Returns:
        The decorator, which returns the object unchanged.

    Raises:
        ValueError: an empty package name, or one holding ``>``.

    Example:
        >>> from engine import Layer
        >>> @register_serializable(package="my_pkg")
        ... class Scale(Layer):
        ...     def call(self, inputs):
        ...         return inputs * 2.0
        >>> Scale._registered_name
        'my_pkg>Scale'
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


@contextlib.contextmanager
def custom_object_scope(custom_objects):
    """Within ``with custom_object_scope({"Name": obj}):``, lookups in this
    thread also find these objects.

    Example:
        >>> from engine import Layer
        >>> class Local(Layer):
        ...     pass
        >>> with custom_object_scope({"Local": Local}):
        ...     lookup("Local") is Local
        True
    """
    token = _SCOPES.set(_SCOPES.get() + (dict(custom_objects or {}),))
    try:
        yield
    finally:
        _SCOPES.reset(token)


@contextlib.contextmanager
def loading_options(safe_mode=None):
    """Within ``with loading_options(safe_mode=...)``, ``safe_mode()`` tells the
    deserializers of this thread whether they may import code named in a file.

    Args:
        safe_mode: True refuses to import code; False allows it; None keeps the
            setting of the enclosing load (safe outside any load), so a nested
            model's ``from_config`` inherits its caller's choice.
    """
    if safe_mode is None:
        yield
        return
    if not isinstance(safe_mode, bool):
        raise TypeError(f"safe_mode must be True, False or None, received {safe_mode!r}.")
    token = _SAFE_MODE.set(safe_mode)
    try:
        yield
    finally:
        _SAFE_MODE.reset(token)


@contextlib.contextmanager
def loading_scope(custom_objects=None, safe_mode=None):
    """``custom_object_scope`` and ``loading_options`` together: what one load call uses."""
    with custom_object_scope(custom_objects), loading_options(safe_mode):
        yield


def safe_mode():
    """Whether the load in progress in this thread is in safe mode (True outside any load)."""
    return _SAFE_MODE.get()


def lookup(name, custom_objects=None, kind="layer type"):
    """Returns the object registered, passed in ``custom_objects`` or in an
    enclosing ``custom_object_scope`` under ``name``."""
    scopes = _SCOPES.get()
    for scope in [custom_objects or {}, *reversed(scopes)]:
        if isinstance(name, str) and name in scope:
            return scope[name]
    if isinstance(name, str) and name in _REGISTRY:
        return _REGISTRY[name]
    _fill_builtins()
    if isinstance(name, str) and name in _REGISTRY:
        return _REGISTRY[name]
    known = sorted(set(_REGISTRY).union(custom_objects or {}, *scopes))
    close = difflib.get_close_matches(str(name), known, n=1)
    short = str(name).rsplit(">", 1)[-1]
    raise ValueError(
        f"Unknown {kind}: {name!r}. If it is yours, pass it to the call that loads it, as "
        f"custom_objects={{{name!r}: {short}}}, or register it once with @engine.register_serializable()."
        + (f" Did you mean {close[0]!r}?" if close else f" ({len(known)} {kind}s are known.)")
    )


def function_name(function):
    """How a config names a user function: its registered name, else ``module:qualname``."""
    registered = registered_name(function)
    if registered is not None:
        return registered
    name = getattr(function, "__name__", type(function).__name__)
    return f"{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', name)}"


def resolve_function(name, owner):
    """The function a config names: registered or in ``custom_objects``; only
    when the load in progress said ``safe_mode=False``, also imported from
    ``module:qualname`` (which runs that module's code). ``owner`` names what
    uses it (``"Lambda layer 'sq'"``) in the errors."""
    try:
        return lookup(name, kind="function")
    except ValueError:
        pass
    if safe_mode():
        raise ValueError(
            f"{owner} uses the function {name!r}, which is not registered, and safe mode loads "
            "no code named by a file. Register the function with @engine.register_serializable(package='my_pkg') "
            f"or pass custom_objects={{{name!r}: fn}}; or, if you trust the file, load it with safe_mode=False "
            "to import the function from its module."
        )
    module_name, _, qualname = name.partition(":")
    if not qualname or "<" in qualname:
        raise ValueError(
            f"{owner} uses the function {name!r}, which cannot be imported (a lambda or a "
            "nested function). Register it with @engine.register_serializable or pass it in custom_objects."
        )
    target = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _fill_builtins():
    # Importing the catalog (lent from above, engine/extensions.py) registers every built-in layer; the operator
    # layers registered themselves when engine/__init__ imported engine.network.ops.
    extensions.load("layers")


def _describe(obj):
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"
