from layers.activation.elu import ELU
from layers.activation.leaky_relu import LeakyReLU
from layers.activation.prelu import PReLU
from layers.activation.relu import ReLU
from layers.activation.softmax import Softmax

__all__ = ["ELU", "LeakyReLU", "PReLU", "ReLU", "Softmax"]
