"""``keras.initializers``: weight initializers, by class and by Keras' snake_case names."""

from engine.network.initializers import (Constant, GlorotNormal, GlorotUniform, HeNormal, HeUniform, Initializer,
                                         LecunNormal, Ones, Orthogonal, RandomNormal, RandomUniform, VarianceScaling,
                                         Zeros, deserialize, get, serialize)

constant, ones, zeros = Constant, Ones, Zeros
glorot_normal, glorot_uniform, he_normal, he_uniform = GlorotNormal, GlorotUniform, HeNormal, HeUniform
lecun_normal, orthogonal, variance_scaling = LecunNormal, Orthogonal, VarianceScaling
random_normal, random_uniform = RandomNormal, RandomUniform

__all__ = ["Constant", "GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform", "Initializer", "LecunNormal", "Ones",
           "Orthogonal", "RandomNormal", "RandomUniform", "VarianceScaling", "Zeros", "constant", "deserialize", "get",
           "glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "lecun_normal", "ones", "orthogonal",
           "random_normal", "random_uniform", "serialize", "variance_scaling", "zeros"]
