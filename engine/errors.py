"""Exceptions of nodeweave's own."""


class ModelFormatError(ValueError):
    """A model config or model file that cannot be turned back into a model.

    Every problem found while loading (a truncated or foreign file, malformed
    JSON, an unknown layer type, a reference to a missing layer or node, a
    cycle, a weight of the wrong shape or dtype) raises this one type, with a
    message naming the problem.
    """
