"""Training: compile, fit, evaluate and predict, with optimizers, losses, metrics and callbacks."""
