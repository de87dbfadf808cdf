"""Test inputs shared by the numerical tests: the dtypes they sweep and
seeded random arrays of them."""

import numpy as np

import blockpipe.language as pl

DTYPES = [(pl.FP32, np.float32), (pl.FP16, np.float16), (pl.INT32, np.int32)]


def data(shape, np_dtype, seed=0):
    """Seeded values: integers in [-50, 50), else standard normal."""
    rng = np.random.default_rng(seed)
    if np.issubdtype(np_dtype, np.integer):
        return rng.integers(-50, 50, shape).astype(np_dtype)
    return rng.standard_normal(shape).astype(np_dtype)
