"""nodeweave's graph engine: symbolic tensors, Nodes, layers, models, training and saving."""

import sys

from engine import allocator  # noqa: F401  (primes glibc's malloc for large temporaries, once)
from engine.autodiff import GradientTape
from engine.blas_threads import num_threads, set_num_threads
from engine.data.py_dataset import PyDataset
from engine.errors import ModelFormatError
from engine.files.load_limits import LoadLimits
from engine.files.registry import register_serializable
from engine.files.saving import load_model, model_from_json
from engine.network import qualified_names  # layer_paths, find_layer, find_node, find_tensor, path_of
from engine.network.argument_gradients import ArgumentGradients
from engine.network.cloning import clone_model
from engine.network.functional import Functional
from engine.network.gradient_check import gradient_check
from engine.network.input_layer import Input, InputLayer
from engine.network.input_spec import InputSpec
from engine.network.keras_tensor import KerasHistory, KerasTensor
from engine.network.layer import Layer
from engine.network.model import Model
from engine.network.module import Module
from engine.network.node import Node
from engine.network.sequential import Sequential
from engine.network.variable import Variable

# Keras' namespaces, as keras.optimizers.Adam: attributes after `import engine` (engine.optimizers.Adam), and
# importable by the paths they had before the engine had rooms (`from engine.optimizers import Adam`).
from engine.network import initializers
from engine.training import callbacks, constraints, losses, metrics, optimizers, regularizers

for _namespace in (initializers, callbacks, constraints, losses, metrics, optimizers, regularizers):
    sys.modules.setdefault(f"engine.{_namespace.__name__.rpartition('.')[2]}", _namespace)
del _namespace

# They lend the modules below them their parts (engine/extensions.py): imported here so that they have.
from engine import pickling  # noqa: F401
from engine.network import ops, requested_outputs  # noqa: F401

__all__ = [
    "ArgumentGradients",
    "Functional",
    "GradientTape",
    "Input",
    "InputLayer",
    "InputSpec",
    "KerasHistory",
    "KerasTensor",
    "Layer",
    "LoadLimits",
    "Model",
    "ModelFormatError",
    "Module",
    "Node",
    "PyDataset",
    "Sequential",
    "Variable",
    "clone_model",
    "gradient_check",
    "load_model",
    "model_from_json",
    "num_threads",
    "qualified_names",
    "register_serializable",
    "set_num_threads",
]
