"""Keras 3 files: reading and writing `.keras` archives, their JSON configs and
`model.weights.h5`, by the shared table in `catalog.py`."""
