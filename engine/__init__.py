"""nodeweave's graph engine: symbolic tensors, Nodes, layers and models."""

from engine.functional import Functional
from engine.input_layer import Input, InputLayer
from engine.input_spec import InputSpec
from engine.keras_tensor import KerasHistory, KerasTensor
from engine.layer import Layer
from engine.model import Model
from engine.module import Module
from engine.node import Node
from engine.sequential import Sequential
from engine.variable import Variable

__all__ = [
    "Functional",
    "Input",
    "InputLayer",
    "InputSpec",
    "KerasHistory",
    "KerasTensor",
    "Layer",
    "Model",
    "Module",
    "Node",
    "Sequential",
    "Variable",
]
