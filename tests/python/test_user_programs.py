"""Small programs a user would write, run on the simulator and compared with
numpy; and mistakes a user would make, each a clean CompileError at the
user's line (or a ValueError naming the parameter)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

T32 = pl.Tensor[[32, 32], pl.FP32]


def build(program):
    return blockpipe.compile(program, quiet=True)


def expect_error(program_factory):
    return located.expect_error(program_factory, build)


def run_isolated(tmp_path, body: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs a program in a child process (a crash there must not take the
    test run with it); `body` defines and runs it, printing what it sees."""
    script = tmp_path / "prog.py"
    script.write_text(
        "import numpy as np\nimport blockpipe\nimport blockpipe.language as pl\n"
        + textwrap.dedent(body)
    )
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )


# ------------------------------------------------------------ numerics

M16, K32, N24 = 16, 32, 24
TILE_SHAPE = (M16, K32)  # module constants as a tuple and a list
ORIGIN = [0, 0]


@pl.program
class Sugar:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[M16, K32 * 2], pl.FP32],
        w: pl.Tensor[[K32 * 2, N24], pl.FP32],
        y: pl.Out[pl.Tensor[[M16, N24], pl.FP32]],
    ):
        acc: pl.Tile[[M16, N24], pl.FP32] = pl.full([M16, N24], pl.FP32, 0.0)
        for i in pl.range(2):
            a = pl.load(tensor=x, offsets=(0, i * K32), shapes=TILE_SHAPE)
            acc += pl.matmul(a, pl.load(w, [i * K32, 0], [K32, N24]))
        acc = acc * 0.5
        acc -= 1.0
        return pl.store(acc, offsets=ORIGIN, output=y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[M16, K32 * 2], pl.FP32],
        w: pl.Tensor[[K32 * 2, N24], pl.FP32],
        y: pl.Out[pl.Tensor[[M16, N24], pl.FP32]],
    ):
        y = self.k(x, w, y)
        return y


def test_keywords_operators_and_module_constant_shapes():
    # A tuple constant as shapes, or a list constant as offsets, was refused.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((M16, K32 * 2), dtype=np.float32)
    w = rng.standard_normal((K32 * 2, N24), dtype=np.float32)
    y = np.zeros((M16, N24), np.float32)
    build(Sugar)(x, w, y)
    np.testing.assert_allclose(y, (x @ w) * 0.5 - 1, rtol=1e-4, atol=1e-4)


@pl.program
class CarriedLoad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[4 * 16, 16], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        t = pl.load(a, [0, 0], [16, 16])
        p = pl.matmul(t, t)  # one load as both operands
        q = pl.load(a, [0, 0], [16, 16])
        for i in pl.range(1, n):
            q = pl.load(a, [i * 16, 0], [16, 16])  # carried: used by the matmul after the loop
        r = pl.matmul(q, t)
        if n > 2:
            u = pl.load(a, [16, 0], [16, 16])
        else:
            u = pl.load(a, [0, 0], [16, 16])
        s = pl.matmul(t, u)
        return pl.store(pl.add(pl.add(p, r), s), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[4 * 16, 16], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        y = self.k(a, n, y)
        return y


def test_matmul_operand_loaded_before_and_inside_a_loop():
    # The load in the loop body was placed in Vec memory (its uses were
    # recorded only for the load before the loop): "'q' changes type
    # inside the loop, from ...Mat to ...Vec".
    a = np.random.default_rng(0).standard_normal((64, 16), dtype=np.float32)
    compiled = build(CarriedLoad)
    blocks = [a[i * 16 : (i + 1) * 16] for i in range(4)]
    for n in (1, 3, 4):
        y = np.zeros((16, 16), np.float32)
        compiled(a, n, y)
        u = blocks[1] if n > 2 else blocks[0]
        expected = blocks[0] @ blocks[0] + blocks[max(n - 1, 0)] @ blocks[0] + blocks[0] @ u
        np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


T16 = pl.Tensor[[16, 16], pl.FP32]
T8 = pl.Tensor[[8, 8], pl.FP32]


@pl.program
class TwoGroupsOnePipeId:
    """Two explicit groups, each with its own pipe 0 carrying its own tile
    type; the pops are not annotated."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube_a(self, b: T16):
        pl.aic_initialize_pipe(dir_mask=1, slot_size=16 * 16 * 4)
        m = pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        pl.tpush_to_aiv(pl.matmul(m, m))

    @pl.function(type=pl.FunctionType.AIV)
    def vec_a(self, y: pl.Out[T16]):
        pl.aiv_initialize_pipe(dir_mask=1, slot_size=16 * 16 * 4)
        a = pl.tpop_from_aic()
        y = pl.store(a, [0, 0], y)
        pl.tfree_to_aic()
        return y

    @pl.function(type=pl.FunctionType.Group)
    def grp_a(self, b: T16, y: pl.Out[T16]):
        self.cube_a(b)
        y = self.vec_a(y)
        return y

    @pl.function(type=pl.FunctionType.AIC)
    def cube_b(self, b: T8):
        pl.aic_initialize_pipe(dir_mask=1, slot_size=8 * 8 * 4)
        m = pl.load(b, [0, 0], [8, 8], target_memory=pl.MemorySpace.Mat)
        pl.tpush_to_aiv(pl.matmul(m, m))

    @pl.function(type=pl.FunctionType.AIV)
    def vec_b(self, y: pl.Out[T8]):
        pl.aiv_initialize_pipe(dir_mask=1, slot_size=8 * 8 * 4)
        a = pl.tpop_from_aic()
        b = pl.add(a, 1.0)
        pl.tfree_to_aic()
        return pl.store(b, [0, 0], y)

    @pl.function(type=pl.FunctionType.Group)
    def grp_b(self, b: T8, y: pl.Out[T8]):
        self.cube_b(b)
        y = self.vec_b(y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, b: T16, b2: T8, y: pl.Out[T16], y2: pl.Out[T8]):
        with pl.spmd(2):
            y = self.grp_a(b, y)
        y2 = self.grp_b(b2, y2)
        return y, y2


def test_unannotated_pops_of_two_groups_sharing_a_pipe_id():
    # vec_a's pop took the type cube_b pushes (8x8, the last push of pipe 0
    # anywhere in the program): a 16x16 result read as 8x8, silently.
    rng = np.random.default_rng(1)
    b = rng.standard_normal((16, 16), dtype=np.float32)
    b2 = rng.standard_normal((8, 8), dtype=np.float32)
    y, y2 = np.zeros_like(b), np.zeros_like(b2)
    compiled = build(TwoGroupsOnePipeId)
    assert "bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>" in compiled.ir()
    compiled(b, b2, y, y2)
    np.testing.assert_allclose(y, b @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y2, b2 @ b2 + 1, rtol=1e-5, atol=1e-5)


@pl.program
class IndexDivMod:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, a: pl.Scalar[pl.INDEX], b: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]
    ):
        # Row 8 + a % b gets 1, row 8 + a // b gets 2 (rows 0..15, so both fit).
        y = pl.store(pl.full([1, 8], pl.FP32, 1.0), [8 + a % b, 0], y)
        y = pl.store(pl.full([1, 8], pl.FP32, 2.0), [8 + a // b, 0], y)
        # Literal divisors of each sign: rows 0..2 and 13..15.
        y = pl.store(pl.full([1, 8], pl.FP32, 3.0), [a % 3, 0], y)
        y = pl.store(pl.full([1, 8], pl.FP32, 4.0), [15 + a % -3, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, a: pl.Scalar[pl.INDEX], b: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]
    ):
        y = self.k(a, b, y)
        return y


@pytest.mark.parametrize("a,b", [(7, 3), (-7, 3), (7, -3), (-7, -3), (-6, 3), (-1, 5)])
def test_index_floor_division_and_modulo_follow_python(a, b):
    # `//` was floor division but `%` was C's remainder (-7 % 3 gave -1).
    y = np.zeros((16, 8), np.float32)
    build(IndexDivMod)(a, b, y)
    expected = np.zeros_like(y)
    expected[8 + a % b] = 1
    expected[8 + a // b] = 2
    expected[a % 3] = 3
    expected[15 + a % -3] = 4
    np.testing.assert_array_equal(y, expected)


def test_integer_scalars_are_checked_alike_on_every_call():
    # The first call and the later ones (which skip the Python call path)
    # take a Python int in the dtype's range, a numpy integer and an
    # integral float; anything else is refused and y kept.
    compiled = build(IndexDivMod)
    expected = np.zeros((16, 8), np.float32)
    expected[8 + 7 % 3] = 1
    expected[8 + 7 // 3] = 2
    expected[7 % 3] = 3
    expected[15 + 7 % -3] = 4
    for a in (7, 7, np.int64(7), 7.0):
        y = np.zeros((16, 8), np.float32)
        compiled(a, 3, y)
        np.testing.assert_array_equal(y, expected)
    y = np.full((16, 8), 5.0, np.float32)
    for a, message in (
        (2**63, "outside"),
        (-(2**63) - 1, "outside"),
        (True, "got bool"),
        (7.5, "got 7.5"),
    ):
        with pytest.raises(ValueError, match=message):
            compiled(a, 3, y)
        assert (y == 5.0).all()


NEG_INF = float("-inf")
NAN = float("nan")


@pl.program
class OnlineSoftmax:
    """Row softmax over column blocks with a running max that starts at
    -inf (the flash-attention recurrence); also +-inf and NaN constants of
    each float dtype."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[16, 96], pl.FP32],
        h: pl.Tensor[[16, 96], pl.FP16],
        y: pl.Out[pl.Tensor[[16, 96], pl.FP32]],
        z: pl.Out[pl.Tensor[[16, 96], pl.FP16]],
        n: pl.Out[pl.Tensor[[16, 96], pl.FP16]],
    ):
        m = pl.full([16, 1], pl.FP32, NEG_INF)
        s = pl.full([16, 1], pl.FP32, 0.0)
        for j in pl.range(3):
            t = pl.load(x, [0, j * 32], [16, 32])
            m_new = pl.maximum(m, pl.row_max(t))
            s = pl.add(pl.mul(s, pl.exp(pl.sub(m, m_new))), pl.row_sum(pl.exp(pl.sub(t, m_new))))
            m = m_new
        for j in pl.range(3):
            t = pl.load(x, [0, j * 32], [16, 32])
            y = pl.store(pl.div(pl.exp(pl.sub(t, m)), s), [0, j * 32], y)
        th = pl.minimum(pl.load(h, [0, 0], [16, 96]), -NEG_INF)
        th = pl.maximum(th, pl.full([16, 96], pl.FP16, NEG_INF))
        z = pl.store(th, [0, 0], z)
        n = pl.store(pl.add(pl.load(h, [0, 0], [16, 8]), NAN), [0, 88], n)
        return y, z, n

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 96], pl.FP32],
        h: pl.Tensor[[16, 96], pl.FP16],
        y: pl.Out[pl.Tensor[[16, 96], pl.FP32]],
        z: pl.Out[pl.Tensor[[16, 96], pl.FP16]],
        n: pl.Out[pl.Tensor[[16, 96], pl.FP16]],
    ):
        y, z, n = self.k(x, h, y, z, n)
        return y, z, n


def test_online_softmax_with_infinite_and_nan_constants():
    # -inf, +inf and NaN constants were refused ("invalid attribute
    # '-inf : f32'"; an f16 +inf was spelled with f32's bits).
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 96), dtype=np.float32) * 3
    h = rng.standard_normal((16, 96)).astype(np.float16)
    h[0, :3] = [np.inf, -np.inf, 0]
    y, z, n = np.zeros_like(x), np.zeros_like(h), np.zeros_like(h)
    build(OnlineSoftmax)(x, h, y, z, n)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(z, h)
    assert np.isnan(n[:, 88:]).all() and (n[:, :88] == 0).all()


NP_ROWS = np.int64(32)  # numpy scalars as module constants
NP_TILE = np.int32(8)
NP_SCALE = np.float32(0.5)
NP_SHAPE = [np.int64(8), 16]


@pl.program
class NumpyConstants:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[NP_ROWS, 16], pl.FP32], y: pl.Out[pl.Tensor[[NP_ROWS, 16], pl.FP32]]):
        r = pl.tile.get_block_idx() * NP_TILE
        t = pl.add(pl.load(x, [r, 0], NP_SHAPE), pl.full(NP_SHAPE, pl.FP32, NP_SCALE))
        return pl.store(pl.mul(t, NP_SCALE), [r, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[NP_ROWS, 16], pl.FP32], y: pl.Out[pl.Tensor[[NP_ROWS, 16], pl.FP32]]
    ):
        with pl.spmd(NP_ROWS // NP_TILE):
            y = self.k(x, y)
        return y


def test_numpy_scalars_as_module_constants():
    # pl.Tensor[[np.int64(32), 16], ...] was a TypeError ("must be positive
    # integers, got 32") and a numpy scalar in a kernel "not a value a kernel can use".
    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    y = np.zeros_like(x)
    build(NumpyConstants)(x, y)
    np.testing.assert_array_equal(y, (x + 0.5) * 0.5)


@pl.program
class Unicodé:
    @pl.function(type=pl.FunctionType.InCore)
    def ядро(
        self,
        α: pl.Tensor[[8, 16], pl.FP32],
        β: pl.Scalar[pl.FP32],
        résultat: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
    ):
        return pl.store(pl.add(pl.mul(pl.load(α, [0, 0], [8, 16]), β), 1.0), [0, 0], résultat)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        α: pl.Tensor[[8, 16], pl.FP32],
        β: pl.Scalar[pl.FP32],
        résultat: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
    ):
        résultat = self.ядро(α, β, résultat)
        return résultat


def test_names_beyond_ascii():
    # Launching 'ядро' was "invalid attribute '@ядро'" (an unquoted symbol).
    x = np.linspace(-1, 1, 128, dtype=np.float32).reshape(8, 16)
    y = np.zeros_like(x)
    build(Unicodé)(x, 2.0, y)
    np.testing.assert_allclose(y, x * 2 + 1, rtol=1e-6)


@pl.program
class ScalarArithmetic:
    """INT32 and INT64 scalars as offsets, bounds, counts and in conditions;
    FP32 scalar arithmetic in a kernel and in an orchestration."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[64, 16], pl.FP32],
        a: pl.Tensor[[64, 16], pl.INT32],
        nrows: pl.Scalar[pl.INT32],
        first: pl.Scalar[pl.INT64],
        f: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
        z: pl.Out[pl.Tensor[[64, 16], pl.INT32]],
    ):
        r = first + pl.tile.get_block_idx() * 8
        if r < first + nrows:
            t = pl.load(x, [r, 0], [8, 16])
            y = pl.store(pl.add(pl.mul(t, f * 2.0 - 1.0), -f / 4.0), [r, 0], y)
            ta = pl.load(a, [r, 0], [8, 16])
            z = pl.store(pl.add(ta, nrows * 2 + nrows % 5 - nrows // 3), [r, 0], z)
        for i in pl.range(nrows // 8, nrows // 8 + 1):
            y = pl.store(pl.full([1, 16], pl.FP32, 7.0), [i, 0], y)
        return y, z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[64, 16], pl.FP32],
        a: pl.Tensor[[64, 16], pl.INT32],
        nrows: pl.Scalar[pl.INT32],
        first: pl.Scalar[pl.INT64],
        f: pl.Scalar[pl.FP32],
        blocks: pl.Scalar[pl.INT64],
        y: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
        z: pl.Out[pl.Tensor[[64, 16], pl.INT32]],
    ):
        with pl.spmd(blocks):
            y, z = self.k(x, a, nrows, first, f * 0.5, y, z)
        return y, z


def test_int_scalars_in_index_arithmetic_and_float_scalar_arithmetic():
    # An INT32/INT64 scalar could not be an offset, a loop bound or a block
    # count ("expected an index value, got Scalar[INT32]"), and FP32 scalars
    # took no arithmetic ("scalar arithmetic is supported on index values").
    x = np.random.default_rng(4).standard_normal((64, 16), dtype=np.float32)
    a = np.arange(64 * 16, dtype=np.int32).reshape(64, 16)
    y, z = np.zeros_like(x), np.zeros_like(a)
    build(ScalarArithmetic)(x, a, 24, 16, 3.0, 8, y, z)
    ey, ez = np.zeros_like(x), np.zeros_like(a)
    ey[16:40] = x[16:40] * 2.0 - 1.5 / 4
    ez[16:40] = a[16:40] + 48 + 24 % 5 - 24 // 3
    ey[3] = 7
    np.testing.assert_allclose(y, ey, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(z, ez)


FACTORY_WITH_STRING_ANNOTATIONS = """
from __future__ import annotations
import blockpipe.language as pl


def make(rows):
    @pl.program
    class Scaled:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[rows, 16], pl.FP32], y: pl.Out[pl.Tensor[[rows, 16], pl.FP32]]):
            return pl.store(pl.mul(pl.load(x, [0, 0], [rows, 16]), 2.0), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[rows, 16], pl.FP32], y: pl.Out[pl.Tensor[[rows, 16], pl.FP32]]):
            y = self.k(x, y)
            return y
    return Scaled
"""


def test_factory_program_with_string_annotations(tmp_path):
    # main's annotations name the factory's `rows`, which main's body does
    # not use: "cannot evaluate annotation ...: name 'rows' is not defined".
    import importlib.util

    path = tmp_path / "factory_future.py"
    path.write_text(FACTORY_WITH_STRING_ANNOTATIONS)
    spec = importlib.util.spec_from_file_location("factory_future", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    y = np.zeros_like(x)
    build(module.make(8))(x, y)
    np.testing.assert_array_equal(y, 2 * x)


@pl.program
class Int32Wrap:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[8, 8], pl.INT32],
        y: pl.Out[pl.Tensor[[8, 8], pl.INT32]],
        z: pl.Out[pl.Tensor[[8, 8], pl.INT32]],
        w: pl.Out[pl.Tensor[[8, 1], pl.INT32]],
    ):
        t = pl.load(a, [0, 0], [8, 8])
        y = pl.store(pl.add(t, (1 << 31) - 1), [0, 0], y)
        z = pl.store(pl.mul(t, 0x3 << 16 | 1), [0, 0], z)
        w = pl.store(pl.row_sum(pl.mul(t, 1 << 28)), [0, 0], w)
        return y, z, w

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[8, 8], pl.INT32],
        y: pl.Out[pl.Tensor[[8, 8], pl.INT32]],
        z: pl.Out[pl.Tensor[[8, 8], pl.INT32]],
        w: pl.Out[pl.Tensor[[8, 1], pl.INT32]],
    ):
        y, z, w = self.k(a, y, z, w)
        return y, z, w


def test_int32_tiles_wrap_like_numpy_and_constant_bit_operators():
    # Constant '<<', '|' were "operator '<<' is not supported".
    a = np.arange(64, dtype=np.int32).reshape(8, 8) * 12345
    y, z, w = np.zeros_like(a), np.zeros_like(a), np.zeros((8, 1), np.int32)
    build(Int32Wrap)(a, y, z, w)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y, a + np.int32(2**31 - 1))
        np.testing.assert_array_equal(z, a * np.int32(0x30001))
        np.testing.assert_array_equal(
            w, (a * np.int32(1 << 28)).sum(axis=1, dtype=np.int32, keepdims=True)
        )


@pl.program
class LoopVariableReassigned:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[64, 16], pl.FP32]]):
        i = 5
        for i in pl.range(4):
            t = pl.load(x, [i * 8, 0], [8, 16])
            i = i + 4
            y = pl.store(t, [i * 8, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[64, 16], pl.FP32]]):
        y = self.k(x, y)
        return y


def test_loop_variable_reassigned_in_the_body():
    # i held a value before the loop and the body reassigned it: i was
    # carried (5, 9, 13, ...) instead of being 0, 1, 2, 3 at each iteration.
    x = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)
    y = np.zeros_like(x)
    build(LoopVariableReassigned)(x, y)
    expected = np.zeros_like(x)
    expected[32:] = x[:32]
    np.testing.assert_array_equal(y, expected)


EPS = 1e-5


@pl.program
class LayerNorm:
    """Row mean and variance as Mx1 tiles broadcast back over the rows;
    constants written with an exponent (1e-05, 2.5e+20, 1e-40)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[64, 48], pl.FP16],
        eps: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[64, 48], pl.FP16]],
    ):
        r = pl.tile.get_block_idx() * 16
        t = pl.cast(pl.load(x, [r, 0], [16, 48]), pl.FP32)
        mean = pl.mul(pl.row_sum(t), 1.0 / 48)
        d = pl.sub(t, mean)
        var = pl.mul(pl.row_sum(pl.mul(d, d)), 1.0 / 48)
        rstd = pl.div(pl.full([16, 1], pl.FP32, 1.0), pl.sqrt(pl.add(pl.add(var, EPS), eps)))
        rstd = pl.minimum(pl.maximum(rstd, 1e-40), 2.5e20)
        return pl.store(pl.cast(pl.mul(d, rstd), pl.FP16), [r, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 48], pl.FP16], y: pl.Out[pl.Tensor[[64, 48], pl.FP16]]):
        with pl.spmd(4):
            y = self.k(x, 1e-6, y)
        return y


def test_layer_norm_with_exponent_constants():
    # 1e-05 was "invalid attribute '1e-05 : f32'": MLIR's float literal
    # needs a '.', and Python's repr leaves it out.
    x = (np.random.default_rng(5).standard_normal((64, 48)) * 3 + 1).astype(np.float16)
    y = np.zeros_like(x)
    build(LayerNorm)(x, y)
    xf = x.astype(np.float32)
    expected = (xf - xf.mean(axis=1, keepdims=True)) / np.sqrt(
        xf.var(axis=1, keepdims=True) + 1e-5 + 1e-6
    )
    np.testing.assert_allclose(y.astype(np.float32), expected, rtol=5e-3, atol=5e-3)


@pl.program
class ScalarFirst:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[16, 32], pl.FP32],
        s: pl.Scalar[pl.FP32],
        a: pl.Tensor[[16, 32], pl.INT32],
        y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        z: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        w: pl.Out[pl.Tensor[[16, 32], pl.INT32]],
    ):
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(1.0 / (1.0 + pl.exp(-t)), [0, 0], y)
        z = pl.store(pl.sub(s, pl.div(s, t)) + (2 - t), [0, 0], z)
        w = pl.store(100 - pl.load(a, [0, 0], [16, 32]) * 3, [0, 0], w)
        return y, z, w

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 32], pl.FP32],
        s: pl.Scalar[pl.FP32],
        a: pl.Tensor[[16, 32], pl.INT32],
        y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        z: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        w: pl.Out[pl.Tensor[[16, 32], pl.INT32]],
    ):
        y, z, w = self.k(x, s, a, y, z, w)
        return y, z, w


def test_scalar_minus_and_over_a_tile():
    # The sigmoid 1.0 / (1.0 + pl.exp(-t)) was "a scalar on the left of '/'
    # with a tile is not supported" (pl.sub(s, t): "first operand must be a tile").
    x = np.random.default_rng(6).standard_normal((16, 32), dtype=np.float32) + 3
    a = np.arange(16 * 32, dtype=np.int32).reshape(16, 32)
    y, z, w = np.zeros_like(x), np.zeros_like(x), np.zeros_like(a)
    build(ScalarFirst)(x, 1.5, a, y, z, w)
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_allclose(z, 1.5 - 1.5 / x + (2 - x), rtol=1e-5)
    np.testing.assert_array_equal(w, 100 - a * 3)


@pl.program
class NegativeZero:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
        t = pl.load(x, [0, 0], [8, 8])
        a = pl.mul(t, 0.0)
        b = pl.mul(t, -0.0)
        return pl.store(pl.div(pl.add(pl.full([8, 8], pl.FP32, 1.0), a), b), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
        y = self.k(x, y)
        return y


def test_negative_zero_constant_is_not_positive_zero():
    # Constants were shared by value, and -0.0 == 0.0: 1 / (x * -0.0) gave +inf.
    x, y = np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32)
    build(NegativeZero)(x, y)
    assert (y == -np.inf).all()


@pl.program
class AnnotatedScalars:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[8, 8], pl.INT32],
        x: pl.Tensor[[8, 8], pl.FP32],
        h: pl.Tensor[[8, 8], pl.FP16],
        f: pl.Scalar[pl.FP32],
        n: pl.Scalar[pl.INT64],
        y: pl.Out[pl.Tensor[[8, 8], pl.INT32]],
        z: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
        w: pl.Out[pl.Tensor[[8, 8], pl.FP16]],
    ):
        b: pl.Scalar[pl.INT32] = pl.tile.get_block_idx() + 3  # index -> INT32
        fi: pl.Scalar[pl.INT32] = f  # FP32 -> INT32, toward zero
        nf: pl.Scalar[pl.FP32] = n  # INT64 -> FP32
        hf: pl.Scalar[pl.FP16] = f  # FP32 -> FP16
        row: pl.Scalar[pl.INDEX] = f  # FP32 -> index
        two: pl.Scalar[pl.FP32] = 2
        y = pl.store(pl.add(pl.add(pl.load(a, [0, 0], [8, 8]), b), fi), [0, 0], y)
        z = pl.store(pl.add(pl.mul(pl.load(x, [row, 0], [2, 8]), nf), two), [row, 0], z)
        w = pl.store(pl.mul(pl.load(h, [0, 0], [8, 8]), hf), [0, 0], w)
        return y, z, w

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[8, 8], pl.INT32],
        x: pl.Tensor[[8, 8], pl.FP32],
        h: pl.Tensor[[8, 8], pl.FP16],
        f: pl.Scalar[pl.FP32],
        n: pl.Scalar[pl.INT64],
        y: pl.Out[pl.Tensor[[8, 8], pl.INT32]],
        z: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
        w: pl.Out[pl.Tensor[[8, 8], pl.FP16]],
    ):
        y, z, w = self.k(a, x, h, f, n, y, z, w)
        return y, z, w


def test_scalar_annotation_converts():
    # The annotation was ignored: b stayed an index value, and
    # pl.add(int32 tile, b) was "pl.add's scalar is INDEX but the tile is INT32".
    a = np.arange(64, dtype=np.int32).reshape(8, 8)
    x = np.random.default_rng(7).standard_normal((8, 8), dtype=np.float32)
    h = np.linspace(-2, 2, 64, dtype=np.float16).reshape(8, 8)
    y, z, w = np.zeros_like(a), np.zeros_like(x), np.zeros_like(h)
    build(AnnotatedScalars)(a, x, h, 2.75, 5, y, z, w)
    np.testing.assert_array_equal(y, a + 3 + 2)
    expected = np.zeros_like(x)
    expected[2:4] = x[2:4] * 5 + 2
    np.testing.assert_allclose(z, expected, rtol=1e-6)
    np.testing.assert_array_equal(w, h * np.float16(2.75))


GM, GN, GK, TM, TN, TK = 72, 120, 48, 24, 40, 16


@pl.program
class TiledGemm:
    """Blocks over a 3x3 grid of 24x40 output tiles (block index split with
    // and %), a K loop accumulating in Acc, then a bias + relu epilogue in
    the vector half and an FP16 result."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[GM, GK], pl.FP16],
        b: pl.Tensor[[GK, GN], pl.FP16],
        bias: pl.Tensor[[GM, GN], pl.FP32],
        c: pl.Out[pl.Tensor[[GM, GN], pl.FP16]],
    ):
        blk = pl.tile.get_block_idx()
        bm = blk // (GN // TN)
        bn = blk % (GN // TN)
        acc = pl.matmul(pl.load(a, [bm * TM, 0], [TM, TK]), pl.load(b, [0, bn * TN], [TK, TN]))
        for kk in pl.range(1, GK // TK):
            acc = pl.matmul(
                pl.load(a, [bm * TM, kk * TK], [TM, TK]),
                pl.load(b, [kk * TK, bn * TN], [TK, TN]),
                acc=acc,
            )
        out = pl.relu(pl.add(acc, pl.load(bias, [bm * TM, bn * TN], [TM, TN])))
        return pl.store(pl.cast(out, pl.FP16), [bm * TM, bn * TN], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[GM, GK], pl.FP16],
        b: pl.Tensor[[GK, GN], pl.FP16],
        bias: pl.Tensor[[GM, GN], pl.FP32],
        c: pl.Out[pl.Tensor[[GM, GN], pl.FP16]],
    ):
        with pl.spmd((GM // TM) * (GN // TN), sync_start=True, name_hint="gemm"):
            c = self.k(a, b, bias, c)
        return c


def test_tiled_gemm_with_epilogue():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((GM, GK)).astype(np.float16)
    b = rng.standard_normal((GK, GN)).astype(np.float16)
    bias = rng.standard_normal((GM, GN), dtype=np.float32)
    c = np.zeros((GM, GN), np.float16)
    build(TiledGemm)(a, b, bias, c)
    expected = np.maximum(a.astype(np.float32) @ b.astype(np.float32) + bias, 0)
    np.testing.assert_allclose(c.astype(np.float32), expected, rtol=2e-3, atol=2e-3)


@pl.program
class Crossings:
    """Vector -> cube -> vector -> cube -> vector in one incore kernel, FP16
    operands, odd shapes (24x40 @ 40x56, then 24x56 @ 56x40)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[48, 40], pl.FP16],
        w: pl.Tensor[[40, 56], pl.FP16],
        w2: pl.Tensor[[56, 40], pl.FP16],
        y: pl.Out[pl.Tensor[[48, 40], pl.FP32]],
        z: pl.Out[pl.Tensor[[48, 56], pl.FP32]],
    ):
        row = pl.tile.get_block_idx() * 24
        xs = pl.mul(pl.load(x, [row, 0], [24, 40]), 0.5)
        xm = pl.move(xs, target_memory=pl.MemorySpace.Mat)
        a1 = pl.matmul(pl.move(xm, target_memory=pl.MemorySpace.Left), pl.load(w, [0, 0], [40, 56]))
        h = pl.cast(pl.relu(a1), pl.FP16)
        z = pl.store(a1, [row, 0], z)
        hm = pl.move(h, target_memory=pl.MemorySpace.Mat)
        a2 = pl.matmul(
            pl.move(hm, target_memory=pl.MemorySpace.Left), pl.load(w2, [0, 0], [56, 40])
        )
        y = pl.store(pl.add(a2, pl.row_max(a2)), [row, 0], y)
        return y, z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[48, 40], pl.FP16],
        w: pl.Tensor[[40, 56], pl.FP16],
        w2: pl.Tensor[[56, 40], pl.FP16],
        y: pl.Out[pl.Tensor[[48, 40], pl.FP32]],
        z: pl.Out[pl.Tensor[[48, 56], pl.FP32]],
    ):
        with pl.spmd(2):
            y, z = self.k(x, w, w2, y, z)
        return y, z


def test_mixed_kernel_crossing_both_ways_twice():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((48, 40)).astype(np.float16)
    w = (rng.standard_normal((40, 56)) * 0.3).astype(np.float16)
    w2 = (rng.standard_normal((56, 40)) * 0.3).astype(np.float16)
    y, z = np.zeros((48, 40), np.float32), np.zeros((48, 56), np.float32)
    build(Crossings)(x, w, w2, y, z)
    xs = (x.astype(np.float32) * 0.5).astype(np.float16).astype(np.float32)
    a1 = xs @ w.astype(np.float32)
    np.testing.assert_allclose(z, a1, rtol=1e-3, atol=1e-3)
    a2 = np.maximum(a1, 0).astype(np.float16).astype(np.float32) @ w2.astype(np.float32)
    np.testing.assert_allclose(y, a2 + a2.max(axis=1, keepdims=True), rtol=1e-3, atol=1e-3)


@pl.program
class Attention:
    """exp(q k^T) v / rowsum over key blocks: per iteration a matmul, vector
    work, a vector tile moved to the cube and a second matmul; loop-carried
    accumulators on the vector side."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        q: pl.Tensor[[32, 32], pl.FP32],
        kt: pl.Tensor[[32, 96], pl.FP32],
        v: pl.Tensor[[96, 32], pl.FP32],
        o: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
    ):
        row = pl.tile.get_block_idx() * 16
        qt = pl.load(q, [row, 0], [16, 32])
        acc = pl.full([16, 32], pl.FP32, 0.0)
        den = pl.full([16, 1], pl.FP32, 0.0)
        for j in pl.range(4):
            p = pl.exp(pl.mul(pl.matmul(qt, pl.load(kt, [0, j * 24], [32, 24])), 0.1))
            den = pl.add(den, pl.row_sum(p))
            pm = pl.move(p, target_memory=pl.MemorySpace.Mat)
            acc = pl.add(
                acc,
                pl.matmul(
                    pl.move(pm, target_memory=pl.MemorySpace.Left),
                    pl.load(v, [j * 24, 0], [24, 32]),
                ),
            )
        return pl.store(pl.div(acc, den), [row, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        q: pl.Tensor[[32, 32], pl.FP32],
        kt: pl.Tensor[[32, 96], pl.FP32],
        v: pl.Tensor[[96, 32], pl.FP32],
        o: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
    ):
        for b in pl.spmd(2):
            o = self.k(q, kt, v, o)
        return o


def test_attention_loop_with_crossings_in_both_directions():
    rng = np.random.default_rng(10)
    q = rng.standard_normal((32, 32), dtype=np.float32)
    kt = rng.standard_normal((32, 96), dtype=np.float32)
    v = rng.standard_normal((96, 32), dtype=np.float32)
    o = np.zeros((32, 32), np.float32)
    build(Attention)(q, kt, v, o)
    p = np.exp((q @ kt) * 0.1)
    np.testing.assert_allclose(o, (p @ v) / p.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-4)


@pl.program
class ExplicitLoopPipes:
    """An explicit group: the vector side sends a 40x56 weight tile per
    iteration, the cube side multiplies and sends the 24x56 product back."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[72, 40], pl.FP32], n: pl.Scalar[pl.INDEX]):
        pl.aic_initialize_pipe(dir_mask=3, slot_size=40 * 56 * 4)
        a = pl.load(
            x, [pl.tile.get_block_idx() * 24, 0], [24, 40], target_memory=pl.MemorySpace.Mat
        )
        for i in pl.range(n):
            w = pl.tpop_from_aiv()
            acc = pl.matmul(a, w)
            pl.tfree_to_aiv()
            pl.tpush_to_aiv(acc)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(
        self,
        wt: pl.Tensor[[40, 56], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        scale: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[72, 56], pl.FP32]],
    ):
        pl.aiv_initialize_pipe(dir_mask=3, slot_size=40 * 56 * 4)
        w = pl.load(wt, [0, 0], [40, 56])
        s = pl.full([24, 56], pl.FP32, 0.0)
        for i in pl.range(n):
            pl.tpush_to_aic(w)
            s = pl.add(s, pl.tpop_from_aic())
            pl.tfree_to_aic()
            w = pl.mul(w, scale)
        return pl.store(s, [pl.tile.get_block_idx() * 24, 0], y)

    @pl.function(type=pl.FunctionType.Group)
    def grp(
        self,
        x: pl.Tensor[[72, 40], pl.FP32],
        wt: pl.Tensor[[40, 56], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        scale: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[72, 56], pl.FP32]],
    ):
        self.cube(x, n)
        y = self.vec(wt, n, scale, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[72, 40], pl.FP32],
        wt: pl.Tensor[[40, 56], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        scale: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[72, 56], pl.FP32]],
    ):
        with pl.spmd(3):
            y = self.grp(x, wt, n, scale, y)
        return y


def test_explicit_group_exchanging_tiles_in_a_loop():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((72, 40), dtype=np.float32)
    wt = rng.standard_normal((40, 56), dtype=np.float32)
    y = np.zeros((72, 56), np.float32)
    build(ExplicitLoopPipes)(x, wt, 3, 0.5, y)
    np.testing.assert_allclose(y, x @ (wt * 1.75), rtol=1e-4, atol=1e-4)


@pl.program
class DynamicChain:
    """core_num from a dynamic dim; an intermediate tensor of dynamic size;
    an InOut accumulated by two launches."""

    @pl.function(type=pl.FunctionType.InCore)
    def exp_k(
        self,
        x: pl.Tensor[[pl.dynamic, 32], pl.FP32],
        h: pl.Out[pl.Tensor[[pl.dynamic, 32], pl.FP32]],
    ):
        r = pl.tile.get_block_idx() * 8
        return pl.store(pl.exp(pl.load(x, [r, 0], [8, 32])), [r, 0], h)

    @pl.function(type=pl.FunctionType.InCore)
    def norm_k(
        self,
        h: pl.Tensor[[pl.dynamic, 32], pl.FP32],
        y: pl.InOut[pl.Tensor[[pl.dynamic, 32], pl.FP32]],
    ):
        r = pl.tile.get_block_idx() * 8
        t = pl.load(h, [r, 0], [8, 32])
        return pl.store(pl.add(pl.load(y, [r, 0], [8, 32]), pl.div(t, pl.row_sum(t))), [r, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[pl.dynamic, 32], pl.FP32],
        y: pl.InOut[pl.Tensor[[pl.dynamic, 32], pl.FP32]],
    ):
        n = pl.tensor.dim(x, 0)
        h = pl.create_tensor([n, 32], dtype=pl.FP32)
        with pl.spmd(n // 8):
            h = self.exp_k(x, h)
        with pl.spmd(n // 8):
            y = self.norm_k(h, y)
        for b in pl.spmd(pl.tensor.dim(y, 0) // 8):
            y = self.norm_k(h, y)
        return y


@pytest.mark.parametrize("rows", [8, 40, 96])
def test_dynamic_rows_chain_of_launches(rows):
    x = np.random.default_rng(rows).standard_normal((rows, 32), dtype=np.float32)
    y = np.ones((rows, 32), np.float32)
    build(DynamicChain)(x, y)
    e = np.exp(x)
    np.testing.assert_allclose(y, 1 + 2 * e / e.sum(axis=1, keepdims=True), rtol=1e-5)


# --------------------------------------------------------------- errors


def test_callee_signature_error_is_reported_not_a_keyerror():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, y):  # error: parameter 'y' of 'k' needs a type annotation
                return pl.store(pl.load(x, [0, 0], [32, 32]), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, y: pl.Out[T32]):
                y = self.k(x, y)
                return y

        return P

    expect_error(make)


def test_callee_return_annotation_error_is_reported():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, y: pl.Out[T32]) -> tuple:  # error: unsupported return annotation
                return pl.store(pl.load(x, [0, 0], [32, 32]), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, y: pl.Out[T32]):
                y = self.k(x, y)
                return y

        return P

    expect_error(make)


def test_store_into_an_input_tensor():
    # The store was dropped: an In tensor is never copied back.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, y: pl.Out[T32]):
                t = pl.load(x, [0, 0], [32, 32])
                # error: pl.store into 'x', an input of 'k'; declare it pl.Out
                x = pl.store(pl.add(t, 1.0), [0, 0], x)
                return pl.store(t, [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, y: pl.Out[T32]):
                y = self.k(x, y)
                return y

        return P

    expect_error(make)


def test_orchestration_input_given_to_a_kernel_output():
    # main's y is In: the kernel's writes never reached the caller's array.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, y: pl.Out[T32]):
                return pl.store(pl.load(x, [0, 0], [32, 32]), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, y: T32):
                # error: 'k' writes its Out parameter 'y', given 'y', an input of 'main'
                self.k(x, y)

        return P

    expect_error(make)


def test_integer_tile_divided_by_literal_zero():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[8, 8], pl.INT32], y: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
                t = pl.load(x, [0, 0], [8, 8])
                return pl.store(t / 0, [0, 0], y)  # error: integer division by zero

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[8, 8], pl.INT32], y: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
                y = self.k(x, y)
                return y

        return P

    expect_error(make)


INT_DIV = """
@pl.program
class IntDiv:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 8], pl.INT32], b: pl.Tensor[[8, 8], pl.INT32], s: pl.Scalar[pl.INT32],
          y: pl.Out[pl.Tensor[[8, 8], pl.INT32]], z: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
        ta = pl.load(a, [0, 0], [8, 8])
        y = pl.store(pl.div(ta, pl.load(b, [0, 0], [8, 8])), [0, 0], y)
        z = pl.store(pl.div(ta, s), [0, 0], z)
        return y, z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 8], pl.INT32], b: pl.Tensor[[8, 8], pl.INT32], s: pl.Scalar[pl.INT32],
             y: pl.Out[pl.Tensor[[8, 8], pl.INT32]], z: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
        y, z = self.k(a, b, s, y, z)
        return y, z

compiled = blockpipe.compile(IntDiv, quiet=True)
a = np.arange(-32, 32, dtype=np.int32).reshape(8, 8)
b = np.full((8, 8), 3, np.int32)
y, z = np.zeros_like(a), np.zeros_like(a)
"""


def test_integer_tile_division_truncates(tmp_path):
    proc = run_isolated(
        tmp_path,
        INT_DIV
        + """
compiled(a, b, -5, y, z)
assert (y == np.trunc(a / b)).all() and (z == np.trunc(a / -5)).all()
print("OK")
""",
    )
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "case", ["b[2, 3] = 0; s = 1", "s = 0", "a[0, 0] = -2**31; b[0, 0] = -1; s = 1"]
)
def test_integer_tile_division_by_zero_fails_the_launch(tmp_path, case):
    proc = run_isolated(
        tmp_path,
        INT_DIV
        + case
        + """
try:
    compiled(a, b, s, y, z)
    print("no error")
except RuntimeError as e:
    print("RuntimeError", e)
""",
    )
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    assert "RuntimeError" in proc.stdout and "prog.py:" in proc.stdout, proc.stdout


def test_float_constant_beyond_the_dtype():
    # Was "invalid attribute '1e+39 : f32'" for FP32, and silently inf for FP16.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[8, 8], pl.FP16], y: pl.Out[pl.Tensor[[8, 8], pl.FP16]]):
                t = pl.load(x, [0, 0], [8, 8])
                # error: -1000000000.0 is out of range for FP16
                return pl.store(pl.maximum(t, -1e9), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[8, 8], pl.FP16], y: pl.Out[pl.Tensor[[8, 8], pl.FP16]]):
                y = self.k(x, y)
                return y

        return P

    expect_error(make)


def test_integer_constant_beyond_the_dtype():
    # Was "invalid attribute '2147483648 : i32'" (and '**' was refused).
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[8, 8], pl.INT32], y: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
                t = pl.full([2**3, 8], pl.INT32, 2**31 - 1)
                # error: 2147483648 is out of range for INT32
                t = pl.add(t, pl.full([8, 8], pl.INT32, 2**31))
                return pl.store(t, [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[8, 8], pl.INT32], y: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
                y = self.k(x, y)
                return y

        return P

    expect_error(make)


def test_compile_time_float_reassigned_in_a_loop():
    # s was not carried: every iteration multiplied by 1.0 and so did the
    # code after the loop (3 * x instead of 0.21875 * x), silently.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, y: pl.Out[T32]):
                t = pl.load(x, [0, 0], [32, 32])
                acc = pl.full([32, 32], pl.FP32, 0.0)
                s = 1.0
                for i in pl.range(3):
                    acc = pl.add(acc, pl.mul(t, s))
                    # error: 's' holds the compile-time number 1.0 and the loop body reassigns it
                    s = s * 0.5
                return pl.store(pl.mul(acc, s), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, y: pl.Out[T32]):
                y = self.k(x, y)
                return y

        return P

    expect_error(make)


def test_compile_time_float_assigned_in_a_run_time_branch():
    # Was "a float constant needs a tile or scalar to give it a type".
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, y: pl.Out[T32]):
                s = 1.0
                if pl.tile.get_block_idx() == 0:
                    # error: 's' is a float known at compile time that differs between the branches
                    s = 0.5
                return pl.store(pl.mul(pl.load(x, [0, 0], [32, 32]), s), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, y: pl.Out[T32]):
                y = self.k(x, y)
                return y

        return P

    expect_error(make)


def test_three_dimensional_tile():
    # Was "invalid type '!bp.tile<1x8x16xf32, vec>'". A [1, 8, 16] window is
    # now an [8, 16] tile (test_tile_windows.py), and a [2, 8, 16] window a
    # 3-D tile (test_nd_tiles.py), whose batch axis a transpose does not swap.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self, x: pl.Tensor[[4, 8, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 8, 16], pl.FP32]]
            ):
                b = pl.tile.get_block_idx()
                t = pl.load(x, [b, 0, 0], [2, 8, 16])
                # error: pl.transpose of a 3-D tile swaps its last two axes (1 and 2)
                return pl.store(pl.transpose(t, 0, 1), [b, 0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self, x: pl.Tensor[[4, 8, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 8, 16], pl.FP32]]
            ):
                with pl.spmd(4):
                    y = self.k(x, y)
                return y

        return P

    expect_error(make)


def test_tile_of_index_elements():
    # Was "invalid type '!bp.tile<8x8xindex, vec>'".
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[8, 8], pl.INDEX], y: pl.Out[pl.Tensor[[8, 8], pl.INDEX]]):
                # error: tiles cannot hold INDEX elements; use pl.INT64
                t = pl.load(x, [0, 0], [8, 8])
                return pl.store(t, [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[8, 8], pl.INDEX], y: pl.Out[pl.Tensor[[8, 8], pl.INDEX]]):
                y = self.k(x, y)
                return y

        return P

    expect_error(make)


def test_float_scalar_in_index_arithmetic():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, f: pl.Scalar[pl.FP32], y: pl.Out[T32]):
                # error: cannot combine Scalar[INDEX] and Scalar[FP32] with '*'
                r = pl.tile.get_block_idx() * f
                return pl.store(pl.load(x, [r, 0], [8, 32]), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, f: pl.Scalar[pl.FP32], y: pl.Out[T32]):
                y = self.k(x, f, y)
                return y

        return P

    expect_error(make)


def test_tpop_annotated_with_another_type_than_pushed():
    # Same bytes, other shape: the 16x16 product was read as 8x32, silently.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def cube(self, b: T16):
                pl.aic_initialize_pipe(dir_mask=1, slot_size=16 * 16 * 4)
                m = pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
                pl.tpush_to_aiv(pl.matmul(m, m))

            @pl.function(type=pl.FunctionType.AIV)
            def vec(self, y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
                pl.aiv_initialize_pipe(dir_mask=1, slot_size=16 * 16 * 4)
                # error: pops 8x32xf32 tiles, but pipe 0 (c2v) carries 16x16xf32 from the other half of the group
                a: pl.Tile[[8, 32], pl.FP32] = pl.tpop_from_aic()
                y = pl.store(a, [0, 0], y)
                pl.tfree_to_aic()
                return y

            @pl.function(type=pl.FunctionType.Group)
            def grp(self, b: T16, y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
                self.cube(b)
                y = self.vec(y)
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, b: T16, y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
                y = self.grp(b, y)
                return y

        return P

    expect_error(make)


def test_loop_variable_used_after_the_loop():
    # It silently kept the value from before the loop (Python: the last one).
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, n: pl.Scalar[pl.INDEX], y: pl.Out[T32]):
                i = 0
                for i in pl.range(n):
                    y = pl.store(pl.load(x, [i, 0], [1, 32]), [i, 0], y)
                # error: 'i' is the variable of the loop at line
                return pl.store(pl.load(x, [i, 0], [1, 32]), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, n: pl.Scalar[pl.INDEX], y: pl.Out[T32]):
                y = self.k(x, n, y)
                return y

        return P

    expect_error(make)


def test_spmd_name_hint_of_the_wrong_type():
    # Was "name_hint must be a compile-time (<class 'str'>, <class 'NoneType'>)".
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, y: pl.Out[T32]):
                return pl.store(pl.load(x, [0, 0], [8, 32]), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, y: pl.Out[T32]):
                # error: name_hint must be a compile-time str or None, got 3
                with pl.spmd(4, sync_start=True, name_hint=3):
                    y = self.k(x, y)
                return y

        return P

    expect_error(make)


def test_spmd_loop_variable_used_in_the_orchestration():
    # Was "'i' is only defined inside the block at line N", at a use inside it.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, b: pl.Scalar[pl.INDEX], y: pl.Out[T32]):
                return pl.store(pl.load(x, [b * 8, 0], [8, 32]), [b * 8, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, y: pl.Out[T32]):
                for i in pl.spmd(4):
                    # error: 'i', the variable of pl.spmd, has no value in an orchestration function
                    y = self.k(x, i, y)
                return y

        return P

    expect_error(make)


# ------------------------------------------------------ call arguments


@pl.program
class AddScalars:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[8, 16], pl.INT32],
        n: pl.Scalar[pl.INT32],
        b: pl.Tensor[[8, 16], pl.INT64],
        m: pl.Scalar[pl.INT64],
        base: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[8, 16], pl.INT32]],
        z: pl.Out[pl.Tensor[[8, 16], pl.INT64]],
    ):
        y = pl.store(pl.add(pl.load(a, [base, 0], [8, 16]), n), [base, 0], y)
        z = pl.store(pl.mul(pl.load(b, [base, 0], [8, 16]), m), [base, 0], z)
        return y, z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[8, 16], pl.INT32],
        n: pl.Scalar[pl.INT32],
        b: pl.Tensor[[8, 16], pl.INT64],
        m: pl.Scalar[pl.INT64],
        base: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[8, 16], pl.INT32]],
        z: pl.Out[pl.Tensor[[8, 16], pl.INT64]],
    ):
        y, z = self.k(a, n, b, m, base, y, z)
        return y, z


def test_integer_scalars_of_each_width():
    rng = np.random.default_rng(0)
    a = rng.integers(-1000, 1000, (8, 16)).astype(np.int32)
    b = rng.integers(-1000, 1000, (8, 16)).astype(np.int64)
    y, z = np.zeros_like(a), np.zeros_like(b)
    build(AddScalars)(a, np.int32(-(2**31) + 1000), b, 3 * 10**9, 0, y, z)
    np.testing.assert_array_equal(y, a + np.int32(-(2**31) + 1000))
    np.testing.assert_array_equal(z, b * 3 * 10**9)


def test_integral_floats_for_integer_scalars():
    # 3.0 passed validation, then failed in pybind11 ("Unable to cast").
    a = np.arange(128, dtype=np.int32).reshape(8, 16)
    b = np.arange(128, dtype=np.int64).reshape(8, 16)
    y, z = np.zeros_like(a), np.zeros_like(b)
    build(AddScalars)(a, np.float64(3.0), b, 2.0, np.float32(0.0), y, z)
    np.testing.assert_array_equal(y, a + 3)
    np.testing.assert_array_equal(z, b * 2)


@pytest.mark.parametrize(
    "n,m,base,name",
    [
        (2**31, 1, 0, "n"),
        (-(2**31) - 1, 1, 0, "n"),
        (1, 2**63, 0, "m"),
        (1, -(2**63) - 1, 0, "m"),
        (1, 1, 2**64, "base"),
    ],
)
def test_integer_scalar_out_of_range_is_a_value_error(n, m, base, name):
    a, b = np.zeros((8, 16), np.int32), np.zeros((8, 16), np.int64)
    with pytest.raises(ValueError, match=f"parameter '{name}' is .*outside"):
        build(AddScalars)(a, n, b, m, base, np.zeros_like(a), np.zeros_like(b))


@pl.program
class HalfScalar:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        h: pl.Tensor[[8, 16], pl.FP16],
        s: pl.Scalar[pl.FP16],
        w: pl.Out[pl.Tensor[[8, 16], pl.FP16]],
    ):
        return pl.store(pl.mul(pl.load(h, [0, 0], [8, 16]), s), [0, 0], w)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        h: pl.Tensor[[8, 16], pl.FP16],
        s: pl.Scalar[pl.FP16],
        w: pl.Out[pl.Tensor[[8, 16], pl.FP16]],
    ):
        w = self.k(h, s, w)
        return w


def test_fp16_scalar_parameter():
    h = np.linspace(-4, 4, 128, dtype=np.float16).reshape(8, 16)
    w = np.zeros_like(h)
    build(HalfScalar)(h, 0.5, w)
    np.testing.assert_array_equal(w, h * np.float16(0.5))


# ------------------------------------------- run time: loops, names, NaN


RANGE_STEP = """
@pl.program
class RangeStep:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 32], pl.FP32], lo: pl.Scalar[pl.INDEX], hi: pl.Scalar[pl.INDEX],
          st: pl.Scalar[pl.INDEX], y: pl.InOut[pl.Tensor[[64, 32], pl.FP32]]):
        for i in pl.range(lo, hi, st):
            r = i * 8
            y = pl.store(pl.add(pl.load(y, [r, 0], [8, 32]), pl.load(x, [r, 0], [8, 32])), [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32], lo: pl.Scalar[pl.INDEX], hi: pl.Scalar[pl.INDEX],
             st: pl.Scalar[pl.INDEX], y: pl.InOut[pl.Tensor[[64, 32], pl.FP32]]):
        y = self.k(x, lo, hi, st, y)
        return y

compiled = blockpipe.compile(RangeStep, quiet=True)
x = np.arange(64, dtype=np.float32).repeat(32).reshape(64, 32)
"""


def test_range_with_run_time_bounds_and_step(tmp_path):
    proc = run_isolated(
        tmp_path,
        RANGE_STEP
        + """
for lo, hi, st in [(0, 8, 3), (2, 8, 2), (5, 2, 1), (7, 8, 5)]:
    y = np.zeros_like(x)
    compiled(x, lo, hi, st, y)
    rows = [r for r in range(8) if r in range(lo, hi, st)]
    expected = np.zeros_like(x)
    for r in rows:
        expected[r * 8:(r + 1) * 8] = x[r * 8:(r + 1) * 8]
    assert (y == expected).all(), (lo, hi, st)
print("OK")
""",
    )
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr


def test_range_with_a_zero_run_time_step_fails_instead_of_hanging(tmp_path):
    try:
        proc = run_isolated(
            tmp_path,
            RANGE_STEP
            + """
try:
    compiled(x, 0, 8, 0, np.zeros_like(x))
    print("no error")
except RuntimeError as e:
    print("RuntimeError", e)
""",
            timeout=8,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("pl.range(0, 8, 0) ran forever")
    # prog.py line 10 is the pl.range loop (after three import lines).
    assert proc.returncode == 0 and "RuntimeError" in proc.stdout, proc.stdout + proc.stderr
    assert "loop at prog.py:10: the step is 0; a loop's step must be positive" in proc.stdout, (
        proc.stdout
    )


def _add_one_program(name):
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            return pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            y = self.k(x, y)
            return y

    P.__name__ = P.__qualname__ = name
    return pl.program(P)


@pytest.mark.parametrize(
    "name",
    [
        "Std",
        "Tile",
        "Blockpipe",
        "Rt",
    ],
)
def test_program_named_like_a_namespace_of_the_generated_code(name):
    x, y = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    build(_add_one_program(name))(x, y)
    np.testing.assert_array_equal(y, x + 1)


@pl.program
class NanOrder:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[4, 8], pl.FP32],
        b: pl.Tensor[[4, 8], pl.FP32],
        mx: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
        mn: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
        r: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
        rm: pl.Out[pl.Tensor[[4, 1], pl.FP32]],
    ):
        ta = pl.load(a, [0, 0], [4, 8])
        tb = pl.load(b, [0, 0], [4, 8])
        mx = pl.store(pl.maximum(ta, tb), [0, 0], mx)
        mn = pl.store(pl.minimum(ta, tb), [0, 0], mn)
        r = pl.store(pl.relu(ta), [0, 0], r)
        rm = pl.store(pl.row_max(ta), [0, 0], rm)
        return mx, mn, r, rm

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[4, 8], pl.FP32],
        b: pl.Tensor[[4, 8], pl.FP32],
        mx: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
        mn: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
        r: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
        rm: pl.Out[pl.Tensor[[4, 1], pl.FP32]],
    ):
        mx, mn, r, rm = self.k(a, b, mx, mn, r, rm)
        return mx, mn, r, rm


def test_nan_in_maximum_minimum_relu_and_row_max_propagates_as_in_numpy():
    a = np.ones((4, 8), np.float32)
    b = np.ones((4, 8), np.float32)
    a[0, 0] = np.nan
    b[1, 0] = np.nan
    a[2, 5] = np.nan
    mx, mn, r = (np.zeros((4, 8), np.float32) for _ in range(3))
    rm = np.zeros((4, 1), np.float32)
    build(NanOrder)(a, b, mx, mn, r, rm)
    np.testing.assert_array_equal(mx, np.maximum(a, b))
    np.testing.assert_array_equal(mn, np.minimum(a, b))
    np.testing.assert_array_equal(r, np.maximum(a, 0))
    np.testing.assert_array_equal(rm, a.max(axis=1, keepdims=True))
