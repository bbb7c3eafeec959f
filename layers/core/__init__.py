from layers.core.activation import Activation
from layers.core.dense import Dense
from layers.core.dropout import Dropout
from layers.core.identity import Identity
from layers.core.lambda_layer import Lambda
from layers.core.masking import Masking

__all__ = ["Activation", "Dense", "Dropout", "Identity", "Lambda", "Masking"]
