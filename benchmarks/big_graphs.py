"""The big graphs the view benchmarks draw: a residual stack and a DenseNet-like graph.

Both are made of small Dense layers, so building them takes well under a second even at
tens of thousands of layers; what they stress is the shape of the graph, not its maths.
"""


def residual_stack(layers):
    """``Input -> Dense`` then residual blocks ``Dense -> Dense -> Add`` (the Add also reads
    the block's entry): ``layers`` layers in all, rounded down to whole blocks (4,001 gives 4,001)."""
    from engine import Input, Model
    from layers import Add, Dense

    inputs = Input(shape=(8,), name="x")
    x = Dense(8, name="stem")(inputs)
    for _ in range((layers - 2) // 3):
        h = Dense(8, activation="relu")(x)
        x = Add()([x, Dense(8)(h)])
    return Model(inputs, x, name=f"residual_{layers}")


def densenet_like(layers):
    """DenseNet's wiring on Dense layers: in each block of 8 layers, every layer reads the
    Concatenate of the block's entry and all earlier outputs of its block, and the block's
    exit is a Dense layer reading the Concatenate of them all. 17 layers and 53 edges a block
    after the Input: 1,701 layers give 100 blocks and 5,300 edges, 681 give 40 and 2,120."""
    from engine import Input, Model
    from layers import Concatenate, Dense

    inputs = Input(shape=(4,), name="x")
    x = inputs
    for _ in range((layers - 1) // 17):
        outputs = [x]
        for _ in range(8):
            read = outputs[0] if len(outputs) == 1 else Concatenate()(outputs)
            outputs.append(Dense(4)(read))
        x = Dense(4)(Concatenate()(outputs))
    return Model(inputs, x, name=f"densenet_like_{layers}")
