"""``keras.applications``: the architectures' builders, from nodeweave's own code, without downloaded
weights (``weights=None``, or a weights file; ``"imagenet"`` says how to bring Keras' weights). As in
Keras, each family also has its module: ``applications.mobilenet.MobileNet``, ``applications.resnet50``..."""

from nodeweave.applications import (convnext, densenet, efficientnet, efficientnet_v2, inception_resnet_v2,
                                   inception_v3, mobilenet, mobilenet_v2, mobilenet_v3, nasnet, resnet, resnet50,
                                   resnet_v2, vgg16, vgg19, xception)
from layers.applications import (VGG16, VGG19, DenseNet121, DenseNet169, DenseNet201, MobileNet, MobileNetV2,
                                 ResNet50, ResNet50V2, ResNet101, ResNet101V2, ResNet152, ResNet152V2, Xception)
from layers.applications import (EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3, EfficientNetB4,
                                 EfficientNetB5, EfficientNetB6, EfficientNetB7, EfficientNetV2B0, EfficientNetV2B1,
                                 EfficientNetV2B2, EfficientNetV2B3, EfficientNetV2L, EfficientNetV2M, EfficientNetV2S,
                                 MobileNetV3Large, MobileNetV3Small)
from layers.applications import (ConvNeXtBase, ConvNeXtLarge, ConvNeXtSmall, ConvNeXtTiny, ConvNeXtXLarge,
                                 InceptionResNetV2, InceptionV3, NASNetLarge, NASNetMobile)

__all__ = ["convnext", "densenet", "efficientnet", "efficientnet_v2", "inception_resnet_v2", "inception_v3",
           "mobilenet", "mobilenet_v2", "mobilenet_v3", "nasnet", "resnet", "resnet50", "resnet_v2", "vgg16", "vgg19",
           "xception",
           "DenseNet121", "DenseNet169", "DenseNet201", "MobileNet", "MobileNetV2", "ResNet101", "ResNet101V2",
           "ResNet152", "ResNet152V2", "ResNet50", "ResNet50V2", "VGG16", "VGG19", "Xception",
           "EfficientNetB0", "EfficientNetB1", "EfficientNetB2", "EfficientNetB3", "EfficientNetB4", "EfficientNetB5",
           "EfficientNetB6", "EfficientNetB7", "EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2",
           "EfficientNetV2B3", "EfficientNetV2L", "EfficientNetV2M", "EfficientNetV2S", "MobileNetV3Large",
           "MobileNetV3Small",
           "ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtSmall", "ConvNeXtTiny", "ConvNeXtXLarge", "InceptionResNetV2",
           "InceptionV3", "NASNetLarge", "NASNetMobile"]
