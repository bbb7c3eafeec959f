"""How the public builders are written: their docstrings, which describe the arguments most
of them share in the same words (``documented``), and the builders of an architecture's
variants, one line each (``variant``)."""

import inspect
import textwrap
from collections.abc import Callable


# The usual words of the builders' common arguments, for ``documented``.
_ARGUMENTS = {
    "include_top": "whether to end with the pooled ``predictions`` classifier.",
    "weights": "None (random weights) or the path of a weights file (``.weights.h5``, ``.keras``, ``.npz``); "
               "``\"imagenet\"``, Keras' default, raises a ValueError saying how to get those weights from Keras.",
    "input_tensor": "a KerasTensor to build on instead of a new ``Input``.",
    "input_shape": "``(height, width, channels)``, at least {min_size}x{min_size}; by default ({default_size}, "
                   "{default_size}, 3) with the classifier and (None, None, 3) without.",
    "pooling": "without the classifier: None, ``\"avg\"`` or ``\"max\"``.",
    "classes": "the classifier's number of classes.",
    "classifier_activation": "the classifier's activation.",
    "name": "the model's name.",
}


def documented(example: str, notes: str = "", min_size: int = 32, default_size: int = 224,
               **arguments: str) -> Callable[[Callable], Callable]:
    """A decorator that writes an architecture builder's docstring: what it builds, ``notes``, an ``Args``
    section describing every parameter in the signature's order, and ``example``.

    Args:
        example: the ``Example`` section's doctest (``>>>`` lines and what they print), indented or not.
        notes: a paragraph after the first line (the variant's sizes, what its inputs should hold).
        min_size: the smallest input height and width, in the words of ``input_shape``.
        default_size: the input height and width with the classifier by default, in the words of ``input_shape``.
        **arguments: the words of the parameters that are not common ones or mean more here than usual.

    Example:
        >>> @documented(">>> Net().name", alpha="the width multiplier.")
        ... def Net(alpha=1.0, name="net"):
        ...     pass
        >>> print(Net.__doc__.split("Example:")[0].strip())
        Net as ``keras.applications.Net`` builds it (weights from a file, never downloaded).
        <BLANKLINE>
        Args:
            alpha: the width multiplier.
            name: the model's name.
    """
    def write(builder):
        parameters = list(inspect.signature(builder).parameters)
        unknown = sorted(set(arguments) - set(parameters))
        undescribed = [name for name in parameters if name not in arguments and name not in _ARGUMENTS]
        if unknown or undescribed:
            raise TypeError(f"documented({builder.__name__}): every parameter needs words and every word a "
                            f"parameter; received words for {unknown} that {builder.__name__} does not take and "
                            f"none for {undescribed}. Name each of {parameters} once, as a keyword argument.")
        lines = [f"{builder.__name__} as ``keras.applications.{builder.__name__}`` builds it (weights from a "
                 "file, never downloaded).", ""]
        if notes:
            lines += textwrap.wrap(notes, 110) + [""]
        lines.append("Args:")
        for name in parameters:
            text = arguments.get(name) or _ARGUMENTS[name].format(min_size=min_size, default_size=default_size)
            lines += textwrap.wrap(f"{name}: {text}", 110, initial_indent="    ", subsequent_indent="        ")
        lines += ["", "Example:", textwrap.indent(textwrap.dedent(example).strip("\n"), "    ")]
        builder.__doc__ = "\n".join(lines)
        return builder
    return write


def shapes_example(builder: str, default_size: int) -> str:
    """The doctest of a builder's docstring that shows its default input and output shapes.

    Args:
        builder: the builder's name.
        default_size: its default input height and width.

    Example:
        >>> shapes_example("EfficientNetB1", 240).splitlines()[-1]
        '((None, 240, 240, 3), (None, 1000))'
    """
    return (f">>> model = {builder}(weights=None)\n>>> model.input.shape, model.output.shape\n"
            f"((None, {default_size}, {default_size}, 3), (None, 1000))")


def variant(builder: str, architecture: Callable, *settings, default_size: int = 224, notes: str = "",
            **words: str) -> Callable:
    """The public builder ``builder`` of one variant of ``architecture``, with Keras' usual arguments.

    It calls ``architecture(builder, *settings, include_top, weights, input_tensor, input_shape, pooling,
    classes, classifier_activation, name)``; its model is named ``builder.lower()`` by default; it belongs to
    ``architecture``'s module (where its docstring's example runs) and is ``documented`` with
    ``shapes_example``.

    Args:
        builder: the builder's name, as Keras spells it.
        architecture: the function that builds every variant of the architecture.
        *settings: what sets this variant apart, as ``architecture`` takes it after ``builder``.
        default_size: the variant's input height and width with the classifier by default.
        notes: ``documented``'s paragraph about the variant.
        **words: ``documented``'s words of arguments that mean more here than usual.

    Example:
        >>> import inspect
        >>> from layers.applications.densenet import _densenet
        >>> DenseNet169 = variant("DenseNet169", _densenet, (6, 12, 32, 32))
        >>> DenseNet169.__module__, inspect.signature(DenseNet169).parameters["name"].default
        ('layers.applications.densenet', 'densenet169')
    """
    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
              classes=1000, classifier_activation="softmax", name=builder.lower()):
        return architecture(builder, *settings, include_top, weights, input_tensor, input_shape, pooling, classes,
                            classifier_activation, name)
    build.__name__ = build.__qualname__ = builder
    build.__module__ = architecture.__module__
    return documented(shapes_example(builder, default_size), notes, default_size=default_size, **words)(build)
