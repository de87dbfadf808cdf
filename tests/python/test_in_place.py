"""Outputs written in place. A program whose call can fail only before its
one launch writes anything (every window proven in bounds for the launch's
block count, pipes matched by construction) has its Out tensors marked
in_place: a call on cpu-sim writes them where the caller holds them, with
nothing staged in GM and nothing copied back. An output whose bytes overlap
another argument's is staged all the same, and so is every output of a
program that can fail midway, which leaves it untouched."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl
from blockpipe import _core

ROWS, COLS = 64, 32


@pl.program
class Residual:
    """y = x @ w + res over 4 blocks of 16 rows: a cube half, a vector
    half and the pipe between them."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        w: pl.Tensor[[COLS, COLS], pl.FP32],
        res: pl.Tensor[[ROWS, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        acc = pl.matmul(pl.load(x, [row, 0], [16, COLS]), pl.load(w, [0, 0], [COLS, COLS]))
        return pl.store(pl.add(acc, pl.load(res, [row, 0], [16, COLS])), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        w: pl.Tensor[[COLS, COLS], pl.FP32],
        res: pl.Tensor[[ROWS, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.spmd(4):
            y = self.kernel(x, w, res, y)
        return y


@pl.program
class Shifted:
    """Each block reads one row further down: the last block's window ends
    past x, so the launch can fail midway."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.exp(pl.load(x, [row + 1, 0], [16, COLS])), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.spmd(4):
            y = self.kernel(x, y)
        return y


def in_place_flags(output_dir):
    manifest = _core.parse_manifest((output_dir / "kernel_config.json").read_text())
    (main,) = manifest.orchestrations
    return {p.name: p.in_place for p in main.signature}


def residual_inputs(seed):
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(shape, dtype=np.float32)
        for shape in ((ROWS, COLS), (COLS, COLS), (ROWS, COLS))
    ]


def test_an_output_the_call_cannot_fail_midway_is_written_in_place(tmp_path):
    in_place = blockpipe.compile(Residual, output_dir=tmp_path / "residual", quiet=True)
    assert in_place_flags(tmp_path / "residual") == {
        "x": False,
        "w": False,
        "res": False,
        "y": True,
    }
    x, w, res = residual_inputs(0)
    y = np.full((ROWS, COLS), 7.0, dtype=np.float32)
    in_place(x, w, res, y)
    np.testing.assert_allclose(y, x @ w + res, rtol=1e-5, atol=1e-5)
    # The same program on a device of its own, y overlapping res: staged,
    # GM's peak is y's bytes higher.
    staged = blockpipe.compile(Residual, output_dir=tmp_path / "residual", quiet=True)
    both = res.copy()
    staged(x, w, both, both)
    np.testing.assert_allclose(both, x @ w + res, rtol=1e-5, atol=1e-5)
    assert staged._device is not in_place._device
    assert staged._device.gm_peak_bytes - in_place._device.gm_peak_bytes >= y.nbytes, (
        staged._device.gm_peak_bytes,
        in_place._device.gm_peak_bytes,
    )


def test_an_output_overlapping_another_argument_is_staged(tmp_path, monkeypatch):
    # One block at a time, in order: block b runs before block b + 1.
    monkeypatch.setenv("BLOCKPIPE_PARALLELISM", "1")
    program = blockpipe.compile(Residual, output_dir=tmp_path / "residual", quiet=True)
    x, w, res = residual_inputs(1)
    want = x @ w + res
    # y lies 16 rows below x in one buffer: written in place, block b's
    # rows of y would be block b + 1's rows of x before block b + 1 reads
    # them.
    shared = np.zeros((ROWS + 16, COLS), dtype=np.float32)
    shared[:ROWS] = x
    program(shared[:ROWS], w, res, shared[16:])
    np.testing.assert_allclose(shared[16:], want, rtol=1e-5, atol=1e-5)
    # Adjacent is not overlapping: x right before y stays as it was.
    tall = np.concatenate([x, np.zeros_like(x)])
    program(tall[:ROWS], w, res, tall[ROWS:])
    np.testing.assert_allclose(tall[ROWS:], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(tall[:ROWS], x)


def test_an_output_of_a_call_that_can_fail_midway_is_staged_and_left_untouched(tmp_path):
    program = blockpipe.compile(Shifted, output_dir=tmp_path / "shifted", quiet=True)
    assert not in_place_flags(tmp_path / "shifted")["y"]
    x = np.ones((ROWS, COLS), dtype=np.float32)
    y = np.full((ROWS, COLS), 7.0, dtype=np.float32)
    with pytest.raises(RuntimeError, match=r"block 3: load from 'x' at test_in_place.py:\d+"):
        program(x, y)
    assert (y == 7.0).all()
