"""A plain (unregistered) function that trusted model files name by module, so
loading them needs safe_mode=False."""


def double(x):
    return x * 2.0
