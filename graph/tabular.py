"""print_tabular: one line per call of a model's layers, as torch.fx prints a graph."""

from graph._format import shapes_text, tensor_ref
from graph._table import format_table
from graph._walk import walk


def print_tabular(model, print_fn=print) -> None:
    """Prints one row per Node (layer call) of ``model``, in execution order.

    Columns: ``layer`` (the call, as ``dense[1]``: layer name and node index),
    ``class``, ``inputs`` (each tensor read, as ``layer[node_index][tensor_index]``)
    and ``output shapes``.

    Args:
        model: a functional model (``Model(inputs, outputs)`` or a built Sequential).
        print_fn: called with each line.

    Example:
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> print_tabular(Model(x, Dense(2, name="d")(x)))
        layer  class       inputs   output shapes
        -----  ----------  -------  -------------
        x[0]   InputLayer  -        (None, 3)
        d[0]   Dense       x[0][0]  (None, 2)
    """
    rows = [
        [call.call_name, type(call.layer).__name__, ", ".join(tensor_ref(t) for t in call.reads) or "-",
         shapes_text(call.outputs)]
        for call in walk(model).calls
    ]
    for line in format_table(["layer", "class", "inputs", "output shapes"], rows):
        print_fn(line)
