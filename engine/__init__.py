"""nodeweave's graph engine: symbolic tensors, Nodes, layers, models, training and saving."""

from engine import allocator  # noqa: F401  (primes glibc's malloc for large temporaries, once)
from engine import optimizers  # noqa: F401  (engine.optimizers.Adam, as keras.optimizers.Adam after `import keras`)
from engine.argument_gradients import ArgumentGradients
from engine.autodiff import GradientTape
from engine.blas_threads import num_threads, set_num_threads
from engine.cloning import clone_model
from engine.errors import ModelFormatError
from engine.functional import Functional
from engine.gradient_check import gradient_check
from engine.input_layer import Input, InputLayer
from engine.input_spec import InputSpec
from engine.keras_tensor import KerasHistory, KerasTensor
from engine.layer import Layer
from engine.load_limits import LoadLimits
from engine.model import Model
from engine.module import Module
from engine.node import Node
from engine.py_dataset import PyDataset
from engine.registry import register_serializable
from engine.saving import load_model, model_from_json
from engine.sequential import Sequential
from engine import qualified_names  # layer_paths, find_layer, find_node, find_tensor, path_of
from engine.variable import Variable
from engine import ops, pickling, requested_outputs  # noqa: F401  (they lend the modules below them their parts)

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
