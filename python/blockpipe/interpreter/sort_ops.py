"""pypto's sorts on NumPy, as blockpipe states them (language/ops/sort.py):
(value, index) pairs in float rows, runs sorted by value, larger first, NaN
first, equal values in their order."""

from __future__ import annotations

import numpy as np

from blockpipe.interpreter.gather_ops import tensor_gather
from blockpipe.interpreter.kernel_ops import implements
from blockpipe.interpreter.state import as_tile, failure


def _sorted_runs(pairs: np.ndarray, run: int) -> np.ndarray:
    """Rows of (value, index) pairs ([R, 2N] float32) with each run of
    `run` pairs sorted."""
    out = np.array(pairs, dtype=np.float32, copy=True)
    rows, cols = out.shape
    for r in range(rows):
        row = out[r].reshape(-1, 2)
        for begin in range(0, cols // 2, run):
            part = row[begin : begin + run]
            values = part[:, 0]
            # Larger first, NaN before every number; a stable sort keeps
            # equal values in order.
            key = np.where(np.isnan(values), -np.inf, -values)
            nan_first = np.where(np.isnan(values), 0, 1)
            order = np.lexsort((key, nan_first))
            row[begin : begin + run] = part[order]
    return out


@implements("sort32", "tile.sort32", "tensor.sort32")
def sort32(src, idx):
    values = np.asarray(src, dtype=np.float32)
    bits = np.ascontiguousarray(np.asarray(idx)).view(np.float32)
    pairs = np.stack([values, bits], axis=-1).reshape(values.shape[0], -1)
    return as_tile(_sorted_runs(pairs, 32))


@implements("mrgsort", "tile.mrgsort", "tensor.mrgsort")
def mrgsort(src0, src1=None, src2=None, src3=None, tmp=None, exhausted=False, block_len=None):
    if block_len is not None:
        if int(block_len) <= 0:
            raise failure(f"mrgsort: block_len must be positive, got {int(block_len)}")
        return as_tile(_sorted_runs(np.asarray(src0), 2 * int(block_len)))
    tiles = [np.asarray(t) for t in (src0, src1, src2, src3) if t is not None]
    whole = np.concatenate(tiles, axis=1)
    return as_tile(_sorted_runs(whole, whole.shape[1] // 2))


@implements("tile.gather_mask")
def gather_mask(src, mask_pattern, output_dtype=None):
    return tensor_gather(src, mask_pattern=mask_pattern, output_dtype=output_dtype)
