"""``graph.diff`` of two 1,000-layer models (issue 25, item 4; goal: at most 2 s).

The models are ``benchmarks/big_graphs.py`` ``residual_stack(n)`` (Dense, Dense, Add
blocks; every layer reads the layer before it and the block's entry), compared with:

- ``clone``: ``clone_model`` of it (same names): every call matched by its inputs;
- ``rebuilt``: the same stack built again, so every automatic name differs;
- ``edited``: built again with a ReLU inserted in every tenth block and every tenth
  Dense of another width: matching looks across gaps and reports 1% of layers
  added and 10% changed;
- ``numeric``: ``clone`` with data (a batch of 32): both models run, every layer's
  output compared (1,001 layers only: deeper, the stack's values overflow).
"""

from benchmarks.harness import pin_threads

pin_threads()

import sys

GOAL_SECONDS = 2.0  # for 1,000-layer models, without data


def edited_stack(layers):
    """``residual_stack(layers)`` with a ReLU after the first Dense of every tenth block and
    the first Dense of every tenth block (others) 16 wide instead of 8."""
    from engine import Input, Model
    from layers import Add, Dense, ReLU

    inputs = Input(shape=(8,), name="x")
    x = Dense(8, name="stem")(inputs)
    for block in range((layers - 2) // 3):
        h = Dense(16 if block % 10 == 5 else 8, activation="relu")(x)
        if block % 10 == 0:
            h = ReLU()(h)
        x = Add()([x, Dense(8)(h)])
    return Model(inputs, x, name=f"edited_{layers}")


def main(smoke=False):
    import numpy as np

    from benchmarks.big_graphs import residual_stack
    from benchmarks.harness import measure, save
    from engine import clone_model
    from graph import diff

    rows = []
    print(f"{'layers':>7} {'case':>8} {'seconds':>8} {'added':>6} {'changed':>8} {'goal s':>7}")
    for layers in [101] if smoke else [1001, 4001]:
        model = residual_stack(layers)
        others = {"clone": clone_model(model), "rebuilt": residual_stack(layers), "edited": edited_stack(layers)}
        data = np.random.default_rng(0).normal(size=(32, 8)).astype("float32")
        contenders = {case: (lambda other=other: diff(model, other)) for case, other in others.items()}
        if layers < 2000:  # deeper, the residual stack's values overflow
            contenders["numeric"] = lambda: diff(model, others["clone"], data=data)
        result = measure(contenders, repeats=3, warmup=1)
        for case, contender in contenders.items():
            found = contender()
            relus = len(range(0, (layers - 2) // 3, 10)) if case == "edited" else 0
            assert len(found.added) == relus and not found.removed, f"{case}: {found!r}"
            seconds = result[case]["median"]
            goal = GOAL_SECONDS if layers == 1001 and case != "numeric" else None
            print(f"{layers:>7} {case:>8} {seconds:8.3f} {len(found.added):>6} {len(found.changed):>8} "
                  f"{goal or '':>7}", flush=True)
            rows.append({"layers": layers, "case": case, "seconds": result[case], "goal_seconds": goal,
                         "added": len(found.added), "changed": len(found.changed)})
    save("model_diff", {"rows": rows})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
