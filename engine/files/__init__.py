"""Files: ``.nw`` and ``.keras`` models, weight files, configs, the registry and load limits."""
