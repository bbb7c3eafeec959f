"""Data: what fit, evaluate and predict read: arrays, generators, datasets, Dask, prefetching."""
