"""Control flow in orchestrations: launches in a pl.range loop over chunks
of a dynamic dim, a run-time if choosing between launches (a full chunk or
the tail, with a dynamic core_num), against numpy; the generated C++ keeps
the loop and the branch."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

R = pl.dynamic("R")
CHUNK = 64


@pl.program
class Chunked:
    @pl.function
    def body(
        self,
        x: pl.Tensor[[R, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[R, 16], pl.FP32]],
        base: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[R, 16], pl.FP32]:
        row = base + pl.tile.get_block_idx() * 16
        return pl.store(pl.exp(pl.load(x, [row, 0], [16, 16])), [row, 0], y)

    @pl.function
    def tail(
        self,
        x: pl.Tensor[[R, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[R, 16], pl.FP32]],
        base: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[R, 16], pl.FP32]:
        row = base + pl.tile.get_block_idx() * 16
        return pl.store(pl.neg(pl.load(x, [row, 0], [16, 16])), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[R, 16], pl.FP32], y: pl.Out[pl.Tensor[[R, 16], pl.FP32]]
    ) -> pl.Tensor[[R, 16], pl.FP32]:
        n = pl.tensor.dim(x, 0)
        for c in pl.range(0, n, CHUNK):
            if n - c >= CHUNK:
                for i in pl.spmd(CHUNK // 16):
                    y = self.body(x, y, c)
            else:
                for i in pl.spmd((n - c) // 16):
                    y = self.tail(x, y, c)
        return y


@pytest.mark.parametrize("rows", [64, 160, 16])
def test_chunks_in_a_loop_with_a_tail(rows, tmp_path):
    program = blockpipe.compile(Chunked, output_dir=tmp_path / "chunked", quiet=True)
    x = np.random.default_rng(rows).standard_normal((rows, 16)).astype(np.float32)
    y = np.zeros_like(x)
    program(x, y)
    full = rows // CHUNK * CHUNK
    expected = np.concatenate([np.exp(x[:full]), -x[full:]])
    np.testing.assert_allclose(y, expected, rtol=1e-6)
    source = (tmp_path / "chunked" / "orchestration" / "main.cpp").read_text()
    assert "for (int64_t c = 0; c < " in source and "if (" in source
