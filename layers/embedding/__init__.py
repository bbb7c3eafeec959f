from layers.embedding.embedding import Embedding

__all__ = ["Embedding"]
