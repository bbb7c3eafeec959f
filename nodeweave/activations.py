"""``keras.activations``: activation functions by name, each with its gradient."""

from layers.activations import (elu, gelu, get, hard_sigmoid, hard_silu, hard_swish, leaky_relu, linear,
                                log_softmax, relu, selu, serialize, sigmoid, silu, softmax, softplus, softsign,
                                swish, tanh)

__all__ = ["elu", "gelu", "get", "hard_sigmoid", "hard_silu", "hard_swish", "leaky_relu", "linear", "log_softmax",
           "relu", "selu", "serialize", "sigmoid", "silu", "softmax", "softplus", "softsign", "swish", "tanh"]
