"""if/elif/else in kernel functions: the scf.if they lower to, and programs
that branch, compiled and run against numpy."""

import inspect
import re

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl
from blockpipe import CompileError, _core
from blockpipe.language.lowering import lower_program, program_ir

T, KT, BLOCKS = 16, 4, 4
ROWS, K = BLOCKS * T, KT * T
FIRST_TILE = 100.0


# ------------------------------------------------------------------ the IR


@pl.program
class Accumulate:
    """The first K tile starts the sum; later ones add to it."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self, x: pl.Tensor[[ROWS, K], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, T], pl.FP32]]
    ) -> pl.Tensor[[ROWS, T], pl.FP32]:
        blk = pl.tile.get_block_idx()
        row = blk * T
        # Replaced on the first iteration: a sum that kept it would be off.
        acc = pl.full([T, T], pl.FP32, FIRST_TILE)
        for k in pl.range(KT):
            t = pl.load(x, [row, k * T], [T, T])
            if k == 0:
                acc = t
            else:
                acc = pl.add(acc, t)
        if blk % 2 == 1:
            acc = pl.relu(acc)
        return pl.store(acc, [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[ROWS, K], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, T], pl.FP32]]
    ) -> pl.Tensor[[ROWS, T], pl.FP32]:
        with pl.spmd(BLOCKS):
            y = self.kernel(x, y)
        return y


def test_if_else_lowers_to_scf_if_yielding_the_assigned_tile():
    ir = program_ir(Accumulate)
    assert re.search(r"%\w+ = arith.cmpi eq, %arg2, %c0 : index", ir), ir
    # Both branches yield acc: the then branch the loaded tile, the else
    # branch the sum; the loop carries the if's result.
    match = re.search(
        r"(%\w+) = scf.if %\w+ -> \(!bp.tile<16x16xf32, vec>\) \{\n"
        r"\s+scf.yield (%\w+) : !bp.tile<16x16xf32, vec>\n"
        r"\s+\} else \{\n"
        r"\s+(%\w+) = bp.add %arg3, \2 : .*\n"
        r"\s+scf.yield \3 : !bp.tile<16x16xf32, vec>\n"
        r"\s+\}\n"
        r"\s+scf.yield \1 : !bp.tile<16x16xf32, vec>",
        ir,
    )
    assert match, ir
    # An if without else that assigns acc yields the value from before it.
    match = re.search(
        r"(%\w+) = scf.if %\w+ -> \(!bp.tile<16x16xf32, vec>\) \{\n"
        r"\s+(%\w+) = bp.relu (%\w+) : .*\n"
        r"\s+scf.yield \2 : .*\n"
        r"\s+\} else \{\n"
        r"\s+scf.yield \3 : .*\n"
        r"\s+\}\n"
        r"\s+%\w+ = bp.store \1, %arg1",
        ir,
    )
    assert match, ir


def test_if_ops_carry_the_users_lines():
    text = lower_program(Accumulate, _core).text(True)
    lines, first = inspect.getsourcelines(Accumulate.cls)
    at = {
        key: first + next(i for i, line in enumerate(lines) if key in line)
        for key in ("if k == 0:", "acc = pl.add(acc, t)", "if blk % 2 == 1:")
    }
    file = re.escape(__file__)
    # The condition and the if (named after the variable it yields).
    assert re.search(rf'arith.cmpi eq, .* loc\("{file}":{at["if k == 0:"]}:16\)', text), text
    assert re.search(
        rf'scf.if .*\n(.*\n)*?.*\}} loc\("acc"\("{file}":{at["if k == 0:"]}:13\)\)', text
    ), text
    assert re.search(
        rf'bp.add .* loc\("acc"\("{file}":{at["acc = pl.add(acc, t)"]}:\d+\)\)', text
    ), text
    assert re.search(rf'arith.remsi .* loc\("{file}":{at["if blk % 2 == 1:"]}:12\)', text), text


def test_compile_time_condition_lowers_only_the_branch_taken():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[T, T], pl.FP32], y: pl.Out[pl.Tensor[[T, T], pl.FP32]]):
            t = pl.load(x, [0, 0], [T, T])
            if T > 8 and not BLOCKS == 0:
                t = pl.exp(t)
            else:
                t = pl.undefined_op(t)  # never lowered, as Python would never run it
            return pl.store(t, [0, 0], y)

    ir = program_ir(P)
    assert "scf.if" not in ir and "bp.exp" in ir


def test_compile_time_condition_in_orchestration():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[T, T], pl.FP32], y: pl.Out[pl.Tensor[[T, T], pl.FP32]]):
            return pl.store(pl.load(x, [0, 0], [T, T]), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[T, T], pl.FP32], y: pl.Out[pl.Tensor[[T, T], pl.FP32]]):
            if BLOCKS > 2:
                with pl.spmd(BLOCKS):
                    y = self.k(x, y)
            else:
                y = self.k(x, y)
            return y

    assert re.search(r"bp.launch @k\(%arg0, %arg1\) core_num\(4\)", program_ir(P))


def test_conditions_and_or_not_elif_and_numbers_merged_from_branches():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[ROWS, 2 * T], pl.FP32],
            s: pl.Scalar[pl.FP32],
            y: pl.Out[pl.Tensor[[ROWS, 2 * T], pl.FP32]],
        ):
            blk = pl.tile.get_block_idx()
            col = 0
            if blk == 1 or not blk < 3 and s >= 0.5:
                col = T
            elif blk:
                col = blk
            t = pl.load(x, [blk * T, col], [T, T])
            return pl.store(t, [blk * T, col], y)

    ir = program_ir(P)
    for op in (
        "arith.cmpi eq",
        "arith.cmpi slt",
        "arith.xori",
        "arith.cmpf oge",
        "arith.andi",
        "arith.ori",
        "arith.cmpi ne",
    ):
        assert op in ir, (op, ir)
    # The number each branch assigns becomes a constant yielded there; the
    # elif nests an scf.if in the else branch.
    assert re.search(
        r"scf.if %\w+ -> \(index\) \{\n(\s+%c16\w* = .*\n)?\s+scf.yield %c16\w* : index\n\s+\} else \{\n"
        r"(\s+%c0\w* = .*\n)?\s+%\w+ = arith.cmpi ne, %0, %c0\w* : index\n\s+%\w+ = scf.if",
        ir,
    ), ir


def test_stores_in_branches_keep_the_tensor_and_aiv_functions_branch_too():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def k(
            self,
            x: pl.Tensor[[T, T], pl.FP32],
            n: pl.Scalar[pl.INDEX],
            y: pl.Out[pl.Tensor[[T, T], pl.FP32]],
        ) -> pl.Tensor[[T, T], pl.FP32]:
            t = pl.load(x, [0, 0], [T, T])
            if n > 0:
                y = pl.store(pl.exp(t), [0, 0], y)
            else:
                y = pl.store(t, [0, 0], y)
            return y

    ir = program_ir(P)
    # The tensor both branches store into is a result of the if, yielded by
    # each branch's store, and the function returns that result (which
    # bp-normalize-return-order traces back to the Out parameter).
    assert re.search(
        r"%\w+ = arith.cmpi sgt, %arg1, %c0 : index\n"
        r"\s+(%\w+) = scf.if %\w+ -> \(!bp.tensor<16x16xf32>\) \{",
        ir,
    ), ir
    assert ir.count("bp.store") == 2 and ir.count("scf.yield %") == 2, ir
    result = re.search(r"(%\w+) = scf.if", ir).group(1)
    assert re.search(rf"return {result} : !bp.tensor<16x16xf32>", ir), ir


def test_integer_changed_in_a_branch_of_a_loop_is_carried_by_the_loop():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[K, T], pl.FP32], y: pl.Out[pl.Tensor[[K, T], pl.FP32]]):
            row = 0
            for k in pl.range(KT):
                if k % 2 == 1:
                    row = row + T
            t = pl.load(x, [row, 0], [T, T])
            return pl.store(t, [row, 0], y)

    ir = program_ir(P)
    # The row the loop ends with, not the 0 it started from.
    match = re.search(
        r"(%\w+) = scf.for %\w+ = %c0 to %c4 step %c1 iter_args\((%\w+) = %c0\) -> \(index\)", ir
    )
    assert match, ir
    assert re.search(rf"bp.load %arg0\[{match.group(1)}, %c0\]", ir), ir


# ----------------------------------------------------------------- running


def run_accumulate(x):
    y = np.zeros((ROWS, T), np.float32)
    blockpipe.compile(Accumulate, quiet=True)(x, y)
    return y


def test_vector_kernel_with_if_in_a_loop_matches_numpy():
    x = np.random.default_rng(3).standard_normal((ROWS, K), dtype=np.float32)
    y = run_accumulate(x)
    expected = x.reshape(ROWS, KT, T).sum(axis=1)
    odd = np.repeat(np.arange(BLOCKS) % 2 == 1, T)
    expected[odd] = np.maximum(expected[odd], 0)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


@pl.program
class Branches:
    """Each block takes one branch of an elif chain; a scalar parameter
    decides a further scaling."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[ROWS, T], pl.FP32],
        s: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, 2 * T], pl.FP32]],
    ) -> pl.Tensor[[ROWS, 2 * T], pl.FP32]:
        blk = pl.tile.get_block_idx()
        row = blk * T
        t = pl.load(x, [row, 0], [T, T])
        col = 0
        if blk == 0:
            out = pl.relu(t)
        elif blk == 1 or blk == 3:
            out = pl.exp(t)
            col = T
        elif not blk < 2:
            out = pl.mul(t, 2.0)
        else:
            out = pl.neg(t)
        if s > 1.0:
            out = pl.mul(out, s)
        return pl.store(out, [row, col], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[ROWS, T], pl.FP32],
        s: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, 2 * T], pl.FP32]],
    ) -> pl.Tensor[[ROWS, 2 * T], pl.FP32]:
        with pl.spmd(BLOCKS):
            y = self.kernel(x, s, y)
        return y


@pytest.mark.parametrize("s", [0.5, 3.0])
def test_elif_chain_and_scalar_condition_match_numpy(s):
    x = np.random.default_rng(4).standard_normal((ROWS, T), dtype=np.float32)
    y = np.zeros((ROWS, 2 * T), np.float32)
    blockpipe.compile(Branches, quiet=True)(x, s, y)
    expected = np.zeros_like(y)
    for blk, (f, col) in enumerate(
        [(lambda t: np.maximum(t, 0), 0), (np.exp, T), (lambda t: t * 2, 0), (np.exp, T)]
    ):
        out = f(x[blk * T : (blk + 1) * T])
        expected[blk * T : (blk + 1) * T, col : col + T] = out * s if s > 1.0 else out
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


@pl.program
class RestartK:
    """Block b drops the K tiles before tile b: the first matmul it keeps has
    no accumulator. The epilogue depends on the block's parity."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[ROWS, K], pl.FP32],
        w: pl.Tensor[[K, T], pl.FP32],
        r: pl.Tensor[[ROWS, T], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, T], pl.FP32]],
    ) -> pl.Tensor[[ROWS, T], pl.FP32]:
        blk = pl.tile.get_block_idx()
        row = blk * T
        acc = pl.matmul(pl.load(x, [row, 0], [T, T]), pl.load(w, [0, 0], [T, T]))
        for k in pl.range(1, KT):
            a = pl.load(x, [row, k * T], [T, T])
            b = pl.load(w, [k * T, 0], [T, T])
            if k == blk:
                acc = pl.matmul(a, b)
            else:
                acc = pl.matmul(a, b, acc=acc)
        if blk % 2 == 0:
            out = pl.add(acc, pl.load(r, [row, 0], [T, T]))
        else:
            out = pl.relu(acc)
        return pl.store(out, [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[ROWS, K], pl.FP32],
        w: pl.Tensor[[K, T], pl.FP32],
        r: pl.Tensor[[ROWS, T], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, T], pl.FP32]],
    ) -> pl.Tensor[[ROWS, T], pl.FP32]:
        with pl.spmd(BLOCKS):
            y = self.kernel(x, w, r, y)
        return y


def test_mixed_kernel_with_if_in_the_k_loop_matches_numpy():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((ROWS, K), dtype=np.float32)
    w = rng.standard_normal((K, T), dtype=np.float32)
    r = rng.standard_normal((ROWS, T), dtype=np.float32)
    y = np.zeros((ROWS, T), np.float32)
    compiled = blockpipe.compile(RestartK, quiet=True)
    compiled(x, w, r, y)
    expected = np.zeros_like(y)
    for blk in range(BLOCKS):
        rows = slice(blk * T, (blk + 1) * T)
        first = blk if 1 <= blk < KT else 0
        acc = x[rows, first * T :] @ w[first * T :]
        expected[rows] = acc + r[rows] if blk % 2 == 0 else np.maximum(acc, 0)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-4)
    # The aic half keeps the if that picks the matmul; the aiv half the
    # epilogue's if.
    split = compiled.ir("bp-expand-mixed-kernel")
    aic = split[split.index("@kernel_aic") : split.index("@kernel_aiv")]
    aiv = split[split.index("@kernel_aiv") : split.index("func.func @kernel(")]
    assert "scf.if" in aic and "bp.matmul" in aic and "bp.relu" not in aic
    assert "scf.if" in aiv and "bp.relu" in aiv and "bp.matmul" not in aiv


@pl.program
class CrossInBranches:
    """Odd blocks: relu(x @ w), the product crossing to the vector unit
    inside the branch. Even blocks: exp(x) @ w, exp's tile crossing to the
    cube unit inside the other branch."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[ROWS, T], pl.FP32],
        w: pl.Tensor[[T, T], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, T], pl.FP32]],
    ) -> pl.Tensor[[ROWS, T], pl.FP32]:
        blk = pl.tile.get_block_idx()
        row = blk * T
        b = pl.load(w, [0, 0], [T, T])
        if blk % 2 == 1:
            y = pl.store(pl.relu(pl.matmul(pl.load(x, [row, 0], [T, T]), b)), [row, 0], y)
        else:
            e = pl.exp(pl.load(x, [row, 0], [T, T]))
            y = pl.store(pl.matmul(pl.move(e, target_memory=pl.MemorySpace.Mat), b), [row, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[ROWS, T], pl.FP32],
        w: pl.Tensor[[T, T], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, T], pl.FP32]],
    ) -> pl.Tensor[[ROWS, T], pl.FP32]:
        with pl.spmd(BLOCKS):
            y = self.kernel(x, w, y)
        return y


def test_mixed_kernel_crossing_inside_branches_matches_numpy():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((ROWS, T), dtype=np.float32)
    w = rng.standard_normal((T, T), dtype=np.float32)
    y = np.zeros((ROWS, T), np.float32)
    compiled = blockpipe.compile(CrossInBranches, quiet=True)
    compiled(x, w, y)
    odd = np.repeat(np.arange(BLOCKS) % 2 == 1, T)
    expected = np.where(odd[:, None], np.maximum(x @ w, 0), np.exp(x) @ w)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-4)
    # Both rings are used, each only inside its branch.
    split = compiled.ir("bp-expand-mixed-kernel")
    assert split.count("bp.initialize_pipe id(0) dir_mask(c2v|v2c)") == 2
    aiv = split[split.index("@kernel_aiv") : split.index("func.func @kernel(")]
    then_branch, else_branch = aiv[aiv.index("scf.if") :].split("} else {")[:2]
    assert "bp.tpop c2v" in then_branch and "bp.tfree c2v" in then_branch
    assert "bp.tpush v2c" in else_branch and "bp.tpop" not in else_branch


def test_tile_popped_in_a_branch_and_used_after_the_if_is_reported_at_its_line():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self, x: pl.Tensor[[T, T], pl.FP32], y: pl.Out[pl.Tensor[[T, T], pl.FP32]]
        ) -> pl.Tensor[[T, T], pl.FP32]:
            if pl.tile.get_block_idx() == 0:
                v = pl.move(
                    pl.matmul(pl.load(x, [0, 0], [T, T]), pl.load(x, [0, 0], [T, T])),
                    target_memory=pl.MemorySpace.Vec,
                )
            else:
                v = pl.load(x, [0, 0], [T, T])
            return pl.store(v, [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[T, T], pl.FP32], y: pl.Out[pl.Tensor[[T, T], pl.FP32]]
        ) -> pl.Tensor[[T, T], pl.FP32]:
            y = self.kernel(x, y)
            return y

    lines, first = inspect.getsourcelines(P.cls)
    matmul_line = first + next(i for i, line in enumerate(lines) if "pl.matmul" in line)
    with pytest.raises(CompileError) as info:
        blockpipe.compile(P, quiet=True)
    err = info.value
    assert "inside an if branch and is a result of the if" in str(err), str(err)
    assert (err.file, err.line) == (__file__, matmul_line), str(err)


@pl.program
class StoreThenReload:
    """A branch stores into `y`; the code after the if reads `y` back."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[ROWS, T], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        y: pl.InOut[pl.Tensor[[ROWS, T], pl.FP32]],
        z: pl.Out[pl.Tensor[[ROWS, T], pl.FP32]],
    ):
        row = pl.tile.get_block_idx() * T
        t = pl.load(x, [row, 0], [T, T])
        if n > 0:
            y = pl.store(pl.exp(t), [row, 0], y)
        u = pl.load(y, [row, 0], [T, T])
        z = pl.store(pl.add(u, t), [row, 0], z)
        return y, z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[ROWS, T], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        y: pl.InOut[pl.Tensor[[ROWS, T], pl.FP32]],
        z: pl.Out[pl.Tensor[[ROWS, T], pl.FP32]],
    ):
        with pl.spmd(BLOCKS):
            y, z = self.kernel(x, n, y, z)
        return y, z


@pytest.mark.parametrize("n", [0, 3])
def test_a_tensor_stored_in_a_branch_is_read_back_after_the_if(tmp_path_factory, n):
    program = blockpipe.compile(
        StoreThenReload, output_dir=tmp_path_factory.mktemp("reload"), quiet=True
    )
    assert re.search(r"= scf.if %\w+ -> \(!bp.tensor<64x16xf32>\)", program.ir("input")), (
        program.ir("input")
    )
    rng = np.random.default_rng(7)
    x = rng.standard_normal((ROWS, T), dtype=np.float32)
    y = rng.standard_normal((ROWS, T), dtype=np.float32)
    z = np.zeros_like(x)
    want_y = np.exp(x) if n > 0 else y.copy()
    program(x, n, y, z)
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(z, want_y + x, rtol=1e-5, atol=1e-6)
