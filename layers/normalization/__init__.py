from layers.normalization.batch_normalization import BatchNormalization
from layers.normalization.group_normalization import GroupNormalization
from layers.normalization.layer_normalization import LayerNormalization
from layers.normalization.unit_normalization import UnitNormalization

__all__ = ["BatchNormalization", "GroupNormalization", "LayerNormalization", "UnitNormalization"]
