from layers.regularization.activity_regularization import ActivityRegularization
from layers.regularization.gaussian_dropout import GaussianDropout
from layers.regularization.gaussian_noise import GaussianNoise
from layers.regularization.spatial_dropout import SpatialDropout1D, SpatialDropout2D

__all__ = ["ActivityRegularization", "GaussianDropout", "GaussianNoise", "SpatialDropout1D", "SpatialDropout2D"]
