"""Automatic, unique layer names: ``dense``, ``dense_1``, ``dense_2``, ..."""

import functools
import re
import threading

_counts = {}
_lock = threading.Lock()  # graphs may be built from several threads at once


@functools.lru_cache(maxsize=None)
def to_snake_case(name: str) -> str:
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def unique_name(base: str) -> str:
    """Returns ``base`` the first time, then ``base_1``, ``base_2``, ...; thread-safe."""
    with _lock:
        count = _counts.get(base, 0)
        _counts[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


def reset_names() -> None:
    """Forgets every name handed out, so automatic names start again at ``dense``."""
    with _lock:
        _counts.clear()
