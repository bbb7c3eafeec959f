"""``keras.layers``: nodeweave's layer catalog, the base classes, and Keras' short aliases
(``MaxPool2D`` for ``MaxPooling2D``, ``Convolution2D`` for ``Conv2D``...)."""

from engine import Input, InputLayer, InputSpec, Layer
from layers import (ELU, GRU, LSTM, ActivityRegularization, Activation, Add, Attention, Average, AveragePooling1D,
                    AveragePooling2D, BatchNormalization, Bidirectional, CenterCrop, Concatenate, Conv1D,
                    Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D, Cropping1D, Cropping2D, Dense, DepthwiseConv2D,
                    Dot, Dropout, Embedding, Flatten, GaussianDropout, GaussianNoise, GlobalAveragePooling1D,
                    GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D, GroupNormalization, Identity,
                    Lambda, LayerNormalization, LeakyReLU, Masking, Maximum, MaxPooling1D, MaxPooling2D, Minimum,
                    MultiHeadAttention, Multiply, Normalization, Permute, PReLU, ReLU, RepeatVector, Rescaling,
                    Reshape, Resizing, SeparableConv2D, SimpleRNN, Softmax, SpatialDropout1D, SpatialDropout2D,
                    Subtract, TimeDistributed, UnitNormalization, UpSampling1D, UpSampling2D, ZeroPadding1D,
                    ZeroPadding2D, add, average, concatenate, dot, maximum, minimum, multiply, subtract)

AvgPool1D, AvgPool2D = AveragePooling1D, AveragePooling2D
MaxPool1D, MaxPool2D = MaxPooling1D, MaxPooling2D
GlobalAvgPool1D, GlobalAvgPool2D = GlobalAveragePooling1D, GlobalAveragePooling2D
GlobalMaxPool1D, GlobalMaxPool2D = GlobalMaxPooling1D, GlobalMaxPooling2D
Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution1DTranspose, Convolution2DTranspose = Conv1DTranspose, Conv2DTranspose
SeparableConvolution2D = SeparableConv2D

__all__ = [
    "ActivityRegularization", "Activation", "Add", "Attention", "Average", "AveragePooling1D", "AveragePooling2D",
    "AvgPool1D", "AvgPool2D", "BatchNormalization", "Bidirectional", "CenterCrop", "Concatenate", "Conv1D",
    "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D", "Convolution1D", "Convolution1DTranspose",
    "Convolution2D", "Convolution2DTranspose", "Convolution3D", "Cropping1D", "Cropping2D", "Dense",
    "DepthwiseConv2D", "Dot", "Dropout", "ELU", "Embedding", "Flatten", "GRU", "GaussianDropout", "GaussianNoise",
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool1D",
    "GlobalMaxPool2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GroupNormalization", "Identity", "Input",
    "InputLayer", "InputSpec", "LSTM", "Lambda", "Layer", "LayerNormalization", "LeakyReLU", "Masking", "MaxPool1D",
    "MaxPool2D", "MaxPooling1D", "MaxPooling2D", "Maximum", "Minimum", "MultiHeadAttention", "Multiply",
    "Normalization", "PReLU", "Permute", "ReLU", "RepeatVector", "Rescaling", "Reshape", "Resizing",
    "SeparableConv2D", "SeparableConvolution2D", "SimpleRNN", "Softmax", "SpatialDropout1D", "SpatialDropout2D",
    "Subtract", "TimeDistributed", "UnitNormalization", "UpSampling1D", "UpSampling2D", "ZeroPadding1D",
    "ZeroPadding2D", "add", "average", "concatenate", "dot", "maximum", "minimum", "multiply", "subtract",
]
