"""The main job: build a multi-input, multi-output functional model, run it,
and show its layers and the Node links between them."""

import numpy as np


def run_demo(print_fn=print):
    from engine import Input, Model
    from engine.utils import set_random_seed
    from layers import Dense

    set_random_seed(0)
    title = Input(shape=(16,), name="title")
    body = Input(shape=(32,), name="body")
    shared = Dense(8, activation="relu", name="shared_encoder")
    title_code = shared(Dense(32, name="title_proj")(title))
    body_code = shared(body)
    merged = title_code + body_code * 0.5
    priority = Dense(1, activation="sigmoid", name="priority")(merged)
    department = Dense(4, activation="softmax", name="department")(merged)
    model = Model(inputs=[title, body], outputs=[priority, department], name="ticket_router")

    rng = np.random.default_rng(0)
    p, d = model([rng.normal(size=(5, 16)), rng.normal(size=(5, 32))])
    print_fn(f"Model {model.name!r}: {len(model.layers)} layers, {model.count_params()} parameters")
    print_fn(f"priority output {p.shape}, department output {d.shape}; "
             f"department rows sum to {np.round(d.sum(axis=1), 5).tolist()}")
    print_fn("")
    print_fn("Execution plan (one line per layer call, inputs as layer[node_index][tensor_index]):")
    for step in model.plan.steps:
        node = step.node
        inbound = ", ".join(
            f"{layer.name}[{n}][{t}]" for layer, n, t in
            zip(node.inbound_layers, node.node_indices, node.tensor_indices)
        )
        shapes = ", ".join(str(t.shape) for t in node.output_tensors)
        call = step.layer.inbound_nodes.index(node)
        print_fn(f"  {step.layer.name}[{call}] ({type(step.layer).__name__}) <- {inbound} -> {shapes}")
    print_fn("")
    print_fn(f"Layer {shared.name!r} is shared: {len(shared.inbound_nodes)} inbound nodes, fed by "
             f"{[n.inbound_layers[0].name for n in shared.inbound_nodes]}")
    return model
