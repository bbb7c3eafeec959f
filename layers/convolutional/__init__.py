"""Convolution layers: im2col and one matmul forward, col2im backward."""

from layers.convolutional.conv import Conv1D, Conv2D, Conv3D
from layers.convolutional.conv_transpose import Conv1DTranspose, Conv2DTranspose
from layers.convolutional.depthwise_conv2d import DepthwiseConv2D
from layers.convolutional.separable_conv2d import SeparableConv2D

__all__ = [
    "Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D", "DepthwiseConv2D", "SeparableConv2D",
]
