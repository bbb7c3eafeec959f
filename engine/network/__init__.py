"""The network: symbolic tensors, nodes, layers, models, and the plan that runs them."""
