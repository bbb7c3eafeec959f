"""nodeweave's layer catalog; every layer has a forward and a backward pass."""

from layers import activations, applications
from layers.activation import ELU, LeakyReLU, PReLU, ReLU, Softmax
from layers.attention import Attention, MultiHeadAttention
from layers.convolutional import (Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D, DepthwiseConv2D,
                                  SeparableConv2D)
from layers.core import Activation, Dense, Dropout, Identity, Lambda, Masking
from layers.embedding import Embedding
from layers.merging import (Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add, average,
                            concatenate, dot, maximum, minimum, multiply, subtract)
from layers.pooling import (AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D, GlobalAveragePooling2D,
                            GlobalMaxPooling1D, GlobalMaxPooling2D, MaxPooling1D, MaxPooling2D)
from layers.normalization import BatchNormalization, GroupNormalization, LayerNormalization, UnitNormalization
from layers.preprocessing import CenterCrop, Normalization, Rescaling, Resizing
from layers.recurrent import GRU, LSTM, Bidirectional, SimpleRNN, TimeDistributed
from layers.regularization import (ActivityRegularization, GaussianDropout, GaussianNoise, SpatialDropout1D,
                                   SpatialDropout2D)
from layers.reshaping import (Cropping1D, Cropping2D, Flatten, Permute, RepeatVector, Reshape, UpSampling1D,
                              UpSampling2D, ZeroPadding1D, ZeroPadding2D)

__all__ = [
    "Attention", "AveragePooling1D", "AveragePooling2D", "Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose",
    "Conv3D", "DepthwiseConv2D", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
    "GlobalMaxPooling2D", "MaxPooling1D", "MaxPooling2D", "MultiHeadAttention", "SeparableConv2D",
    "Bidirectional", "GRU", "LSTM", "SimpleRNN", "TimeDistributed",
    "CenterCrop", "Normalization", "Rescaling", "Resizing",
    "ActivityRegularization", "Activation", "Add", "Average", "BatchNormalization", "Concatenate", "Cropping1D",
    "Cropping2D", "Dense", "Dot", "Dropout", "ELU", "Embedding", "Flatten", "GaussianDropout", "GaussianNoise",
    "GroupNormalization", "Identity", "Lambda", "LayerNormalization", "LeakyReLU", "Masking", "Maximum", "Minimum",
    "Multiply", "PReLU", "Permute", "ReLU", "RepeatVector", "Reshape", "Softmax", "SpatialDropout1D",
    "SpatialDropout2D", "Subtract", "UnitNormalization", "UpSampling1D", "UpSampling2D", "ZeroPadding1D",
    "ZeroPadding2D", "activations", "applications", "add", "average", "concatenate", "dot", "maximum", "minimum",
    "multiply", "subtract",
]
