"""Exceptions of nodeweave's own."""

import contextlib


class ModelFormatError(ValueError):
    """A model config or model file that cannot be turned back into a model.

    Every problem found while loading (a truncated or foreign file, malformed
    JSON, an unknown layer type, a reference to a missing layer or node, a
    cycle, a weight of the wrong shape or dtype) raises this one type, with a
    message naming the problem.

    Example:
        >>> from engine import model_from_json
        >>> try:
        ...     model_from_json("{not json")
        ... except ModelFormatError as error:
        ...     print(type(error).__name__)
        ModelFormatError
    """


@contextlib.contextmanager
def as_model_format_error(what):
    """Within it, any exception other than ModelFormatError (a hostile file can
    provoke TypeError, AttributeError, MemoryError...) is raised again as
    ModelFormatError, prefixed by ``what``, with the original as its cause, so
    every load path raises one documented type."""
    try:
        yield
    except ModelFormatError:
        raise
    except Exception as error:
        raise ModelFormatError(f"{what}: {type(error).__name__}: {error}") from error
