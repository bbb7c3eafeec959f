from layers.attention.attention import Attention
from layers.attention.multi_head_attention import MultiHeadAttention

__all__ = ["Attention", "MultiHeadAttention"]
