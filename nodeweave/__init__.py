"""nodeweave in Keras 3's shape: ``import nodeweave as keras`` runs a Keras script on NumPy.

The package only maps Keras' names onto nodeweave's code, which lives in
``engine`` (graph, training, saving), ``layers`` (the layer catalog) and ``graph``
(pictures and views). Importing it loads no optional package (ONNX, Dask,
Matplotlib): those load when a function that needs them runs.

Example:
    >>> import numpy as np
    >>> import nodeweave as keras
    >>> inputs = keras.Input(shape=(3,))
    >>> model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    >>> model.compile(optimizer="adam", loss="mse")
    >>> model.predict(np.ones((4, 3)), verbose=0).shape
    (4, 2)
"""

from engine import Input, InputSpec, KerasTensor, Layer, Model, Sequential, Variable
from engine.network.initializers import Initializer
from engine.training.losses import Loss
from engine.training.metrics import Metric
from engine.training.optimizers import Optimizer
from engine.training.regularizers import Regularizer
from nodeweave import (activations, applications, backend, callbacks, constraints, initializers, layers, losses,
                       metrics, models, ops, optimizers, preprocessing, random, regularizers, saving, utils)

__all__ = [
    "Initializer", "Input", "InputSpec", "KerasTensor", "Layer", "Loss", "Metric", "Model", "Optimizer",
    "Regularizer", "Sequential", "Variable", "activations", "applications", "backend", "callbacks", "constraints",
    "initializers", "layers", "losses", "metrics", "models", "ops", "optimizers", "preprocessing", "random",
    "regularizers", "saving", "utils",
]
