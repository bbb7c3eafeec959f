"""Whole models built from the catalog: gradients end to end."""

import numpy as np

from engine import Input, Model
from engine.network.gradient_check import gradient_check
from layers import (Activation, BatchNormalization, Concatenate, Dense, Dropout, Embedding, Flatten, LayerNormalization,
                    Multiply, Reshape, add)


def test_shared_layers_fan_out_merges_and_nesting_have_correct_gradients():
    inner_in = Input(shape=(6,), name="inner_in")
    inner = Model(inner_in, LayerNormalization(name="inner_norm")(Dense(6, activation="tanh", name="inner_dense")(inner_in)),
                  name="inner")
    a = Input(shape=(4,), name="a")
    b = Input(shape=(4,), name="b")
    shared = Dense(6, activation="sigmoid", name="shared")
    sa, sb = shared(a), shared(b)                      # one layer, two calls
    fan = inner(sa)                                    # sa feeds the nested model and the merge below
    merged = add([fan, sa, sb])
    gated = Multiply(name="gate")([merged, Activation("softmax", name="soft")(sb)])
    joined = Concatenate(name="join")([gated, Reshape((6,), name="reshape")(sa)])
    out = Dense(3, name="head")(BatchNormalization(name="bn")(Dropout(0.3, name="drop")(joined)))
    model = Model([a, b], [out, fan])
    rng = np.random.default_rng(0)
    report = gradient_check(model, [rng.normal(size=(5, 4)), rng.normal(size=(5, 4))])
    assert {"input 0", "input 1", "shared/kernel", "inner_dense/kernel",
            "bn/gamma", "head/kernel"} <= set(report.errors)
    assert report.max_error < 1e-6, str(report)


def test_embedding_to_dense_through_flatten_trains_the_table():
    ids = Input(shape=(3,), dtype="int32")
    model = Model(ids, Dense(2)(Flatten()(Embedding(7, 4, name="emb")(ids))))
    report = gradient_check(model, np.array([[1, 2, 2], [6, 0, 3]], "int32"))
    assert set(report.errors) >= {"emb/embeddings"} and "input 0" not in report.errors
    assert report.max_error < 1e-6, str(report)
