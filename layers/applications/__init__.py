"""Keras' ``keras.applications`` architectures, built with nodeweave's functional API
(without downloaded weights), and the two layers those architectures define for
themselves (ConvNeXt's ``LayerScale``, InceptionResNetV2's ``CustomScaleLayer``)."""

from layers.applications.convnext import (ConvNeXtBase, ConvNeXtLarge, ConvNeXtSmall, ConvNeXtTiny,
                                          ConvNeXtXLarge)
from layers.applications.densenet import DenseNet121, DenseNet169, DenseNet201
from layers.applications.efficientnet import (EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3,
                                              EfficientNetB4, EfficientNetB5, EfficientNetB6, EfficientNetB7)
from layers.applications.efficientnet_v2 import (EfficientNetV2B0, EfficientNetV2B1, EfficientNetV2B2,
                                                 EfficientNetV2B3, EfficientNetV2L, EfficientNetV2M, EfficientNetV2S)
from layers.applications.inception_resnet_v2 import InceptionResNetV2
from layers.applications.inception_v3 import InceptionV3
from layers.applications.mobilenet import MobileNet
from layers.applications.mobilenet_v2 import MobileNetV2
from layers.applications.mobilenet_v3 import MobileNetV3Large, MobileNetV3Small
from layers.applications.nasnet import NASNetLarge, NASNetMobile
from layers.applications.resnet import ResNet50, ResNet50V2, ResNet101, ResNet101V2, ResNet152, ResNet152V2
from layers.applications.scale_layers import CustomScaleLayer, LayerScale
from layers.applications.vgg import VGG16, VGG19
from layers.applications.xception import Xception

__all__ = ["CustomScaleLayer", "DenseNet121", "DenseNet169", "DenseNet201", "LayerScale", "MobileNet", "MobileNetV2", "VGG16", "VGG19", "Xception", "ResNet50", "ResNet50V2", "ResNet101", "ResNet101V2", "ResNet152",
           "ResNet152V2",
           "EfficientNetB0", "EfficientNetB1", "EfficientNetB2", "EfficientNetB3", "EfficientNetB4", "EfficientNetB5",
           "EfficientNetB6", "EfficientNetB7", "EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2",
           "EfficientNetV2B3", "EfficientNetV2L", "EfficientNetV2M", "EfficientNetV2S", "MobileNetV3Large",
           "MobileNetV3Small",
           "ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtSmall", "ConvNeXtTiny", "ConvNeXtXLarge", "InceptionResNetV2",
           "InceptionV3", "NASNetLarge", "NASNetMobile"]
