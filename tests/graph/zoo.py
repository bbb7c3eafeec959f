"""Models the graph tests share."""

from engine import Input, Model
from layers import Dense


def nested_three_deep():
    """``level1`` holds ``level2``, which holds ``level3``: 8 features in, 8 out."""
    x3 = Input(shape=(8,), name="x3")
    level3 = Model(x3, Dense(8, name="d3")(x3), name="level3")
    x2 = Input(shape=(8,), name="x2")
    level2 = Model(x2, Dense(8, name="d2")(level3(x2)), name="level2")
    x1 = Input(shape=(8,), name="x1")
    return Model(x1, level2(x1) * 2.0, name="level1")


def zoo():
    """Two inputs, two outputs, a shared layer called twice, operator layers
    (add, multiply, get_item) and a model nested three deep."""
    level1 = nested_three_deep()
    a = Input(shape=(16,), name="a")
    b = Input(shape=(8,), name="b")
    shared = Dense(8, activation="relu", name="shared")
    from_a = shared(Dense(8, name="proj")(a))
    from_b = shared(b)
    nested = level1(from_a + from_b)
    score = Dense(1, activation="sigmoid", name="score")(nested)
    part = (nested * from_b)[:, :4]
    return Model([a, b], [score, part], name="zoo")
