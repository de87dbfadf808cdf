"""pypto's pl.tile.matmul_bias, gemv, gemv_acc and gemv_bias: compositions
of pl.matmul (a bias [1, N] starts the accumulator), against NumPy."""

import numpy as np
import pytest

import located
from arrays import data

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
M, K, N = 16, 64, 32
A, B = pl.Tensor[[M, K], pl.FP16], pl.Tensor[[K, N], pl.FP16]
BIAS, OUT = pl.Tensor[[1, N], pl.FP32], pl.Tensor[[M, N], pl.FP32]
X, W = pl.Tensor[[1, 2 * K], pl.INT8], pl.Tensor[[2 * K, N], pl.INT8]
ROW = pl.Tensor[[1, N], pl.INT32]


@pl.program
class Biased:
    @pl.function(type=pl.FunctionType.InCore)
    def dense(self, a: A, b: B, bias: BIAS, rows: pl.Scalar[pl.INDEX], out: pl.InOut[OUT]) -> OUT:
        ta = pl.load(a, [0, 0], [M, K], valid_shape=[rows, K], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0], [K, N], target_memory=pl.MemorySpace.Mat)
        tbias = pl.load(bias, [0, 0], [1, N], target_memory=pl.MemorySpace.Mat)
        return pl.store(pl.tile.matmul_bias(ta, tb, tbias), [0, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def vector(
        self,
        x: X,
        w: W,
        bias: ROW,
        plain: pl.Out[ROW],
        biased: pl.Out[ROW],
        chained: pl.Out[ROW],
    ) -> tuple[ROW, ROW, ROW]:
        x0 = pl.load(x, [0, 0], [1, K])
        w0 = pl.load(w, [0, 0], [K, N])
        pl.store(pl.gemv(x0, w0), [0, 0], plain)
        pl.store(pl.tile.gemv_bias(x0, w0, pl.load(bias, [0, 0], [1, N])), [0, 0], biased)
        acc = pl.tile.gemv(x0, w0, acc_phase="partial")
        x1 = pl.load(x, [0, K], [1, K])
        w1 = pl.load(w, [K, 0], [K, N])
        acc = pl.tile.gemv_acc(acc, x1, w1, acc_phase="final")
        pl.store(acc, [0, 0], chained)
        return plain, biased, chained

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: A,
        b: B,
        bias: BIAS,
        rows: pl.Scalar[pl.INDEX],
        out: pl.InOut[OUT],
        x: X,
        w: W,
        ibias: ROW,
        plain: pl.Out[ROW],
        biased: pl.Out[ROW],
        chained: pl.Out[ROW],
    ) -> tuple[OUT, ROW, ROW, ROW]:
        out = self.dense(a, b, bias, rows, out)
        plain, biased, chained = self.vector(x, w, ibias, plain, biased, chained)
        return out, plain, biased, chained


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_biased_and_vector_products_match_numpy(where):
    compiled = blockpipe.compile(Biased, quiet=True, **where)
    rng = np.random.default_rng(7)
    a, b = data((M, K), np.float16), data((K, N), np.float16)
    bias = data((1, N), np.float32)
    x = rng.integers(-4, 5, (1, 2 * K)).astype(np.int8)
    w = rng.integers(-4, 5, (2 * K, N)).astype(np.int8)
    ibias = rng.integers(-100, 100, (1, N)).astype(np.int32)
    ix, iw = x.astype(np.int32), w.astype(np.int32)
    for rows in (M, 5):
        out = np.full((M, N), -1.0, np.float32)
        plain, biased, chained = compiled(a, b, bias, rows, out, x, w, ibias)[1:]
        want = a.astype(np.float32) @ b.astype(np.float32) + bias
        np.testing.assert_allclose(out[:rows], want[:rows], rtol=1e-5, atol=1e-5)
        assert (out[rows:] == -1.0).all()  # rows outside lhs's valid shape: not stored
        np.testing.assert_array_equal(plain, ix[:, :K] @ iw[:K])
        np.testing.assert_array_equal(biased, ix[:, :K] @ iw[:K] + ibias)
        np.testing.assert_array_equal(chained, ix @ iw)


MISUSES = [
    (
        "pl.tile.gemv(pl.load(x, [0, 0], [2, 16]), pl.load(w, [0, 0], [16, 16]))",
        "pl.tile.gemv's lhs must be one row, [1, K], got [2, 16]",
    ),
    (
        "pl.gemv(pl.load(f, [0, 0], [1, 16]), pl.load(f, [0, 0], [16, 16]), acc_phase='late')",
        "pl.gemv's acc_phase must be 'unspecified', 'partial' or 'final', got 'late'",
    ),
    (
        "pl.tile.gemv(pl.load(i, [0, 0], [1, 16]), pl.load(i, [0, 0], [16, 16]))",
        "pl.tile.gemv multiplies INT8, FP16, BF16 or FP32 operands of one dtype, got INT32",
    ),
    (
        "pl.tile.matmul_bias(pl.load(x, [0, 0], [16, 16]), pl.load(w, [0, 0], [16, 16]), "
        "pl.load(f, [0, 0], [1, 16]))",
        "pl.tile.matmul_bias's bias must be a [1, 16] tile of INT32",
    ),
    (
        "pl.gemv_bias(pl.load(x, [0, 0], [1, 16]), pl.load(w, [0, 0], [16, 16]), "
        "pl.load(i, [0, 0], [2, 16]))",
        "pl.gemv_bias's bias must be a [1, 16] tile of INT32",
    ),
]


@pytest.mark.parametrize("call,message", MISUSES)
def test_misuse_is_an_error_at_its_line(tmp_path, call, message):
    source = tmp_path / "misuse.py"
    source.write_text(
        "import blockpipe.language as pl\n\n"
        "T8, F, I = pl.Tensor[[16, 16], pl.INT8], pl.Tensor[[16, 16], pl.FP32], "
        "pl.Tensor[[16, 16], pl.INT32]\n\n\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, x: T8, w: T8, f: F, i: I, y: pl.Out[I]) -> I:\n"
        f"        return pl.store({call}, [0, 0], y)\n\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def main(self, x: T8, w: T8, f: F, i: I, y: pl.Out[I]) -> I:\n"
        "        y = self.k(x, w, f, i, y)\n"
        "        return y\n"
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("misuse", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(blockpipe.CompileError, match=message.replace("[", r"\[")) as info:
        blockpipe.compile(module.P, quiet=True)
    assert (info.value.file, info.value.line) == (str(source), 10)


def test_a_gemv_outside_a_cube_function_is_an_error_at_its_line():
    def program():
        @pl.program
        class Vector:
            @pl.function(type=pl.FunctionType.AIV)
            def k(self, x: X, w: W, y: pl.Out[ROW]) -> ROW:
                # error: pl.gemv
                t = pl.gemv(pl.load(x, [0, 0], [1, K]), pl.load(w, [0, 0], [K, N]))
                return pl.store(t, [0, 0], y)

        return Vector

    located.expect_error(program, lambda p: blockpipe.compile(p, quiet=True))
