"""Bad programs: each raises CompileError at the line marked `# error: ...`,
with that text in its message and the offending source line in str()."""

import inspect

import pytest

import located

import blockpipe.language as pl
from blockpipe.language.lowering import program_ir

T = pl.Tensor[[64, 64], pl.FP32]
D = pl.Tensor[[pl.dynamic, 64], pl.FP32]
GLOBAL_ROWS = 16
NOT_A_NUMBER = "rows"


def expect_error(program_factory):
    return located.expect_error(program_factory, program_ir)


def test_unknown_name():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                t = pl.load(y, [0, 0], [16, 16])  # error: unknown name 'y'
                return pl.store(t, [0, 0], out)

        return P

    expect_error(make)


def test_while_with_a_condition_known_at_compile_time():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T):
                while True:  # error: a while loop's condition must be known only at run time
                    pass

        return P

    expect_error(make)


def test_run_time_if_in_a_pipeline():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Pipeline, microbatches=2)
            def main(self, x: D):
                # error: an if whose condition is known only at run time is supported in incore, aic, aiv and orchestration functions, not in Pipeline function 'main'
                if pl.tensor.dim(x, 0) > 64:
                    pass

        return P

    expect_error(make)


def test_if_condition_is_a_tile():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                t = pl.load(x, [0, 0], [16, 16])
                # error: an if condition must be a comparison of scalars or index values such as 'k == 0', got Tile[[16, 16], FP32
                if t:
                    t = pl.relu(t)
                return pl.store(t, [0, 0], out)

        return P

    expect_error(make)


def test_if_condition_compares_a_tile():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                t = pl.load(x, [0, 0], [16, 16])
                if (
                    pl.tile.get_block_idx() == 0
                    # error: an if condition compares scalars or index values, got Tile[[16, 16], FP32
                    and t > 0
                ):
                    t = pl.relu(t)
                return pl.store(t, [0, 0], out)

        return P

    expect_error(make)


def test_if_condition_operator():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T):
                # error: 'in' is not supported in a condition; compare with ==, !=, <, <=, > or >=
                if pl.tile.get_block_idx() in [0, 1]:
                    pass

        return P

    expect_error(make)


def test_if_condition_compares_different_scalar_types():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, s: pl.Scalar[pl.FP32]):
                # error: cannot compare Scalar[FP32] with Scalar[INDEX]
                if s > pl.tile.get_block_idx():
                    pass

        return P

    expect_error(make)


def test_if_branch_local_used_after_the_if():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                if pl.tile.get_block_idx() == 0:
                    t = pl.load(x, [0, 0], [16, 16])
                else:
                    pass
                # error: 't' is assigned in only one branch of the if at line
                return pl.store(t, [0, 0], out)

        return P

    err = expect_error(make)
    source, first = inspect.getsourcelines(make)
    if_line = first + next(i for i, line in enumerate(source) if line.strip().startswith("if "))
    assert (
        f"of the if at line {if_line}; assign it before the if, or in both branches" in err.message
    )


def test_if_branches_leave_different_types():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                a = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Left)
                b = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Right)
                if pl.tile.get_block_idx() == 0:
                    acc = pl.matmul(a, b)
                else:
                    # error: a loaded tile cannot become an acc tile (a matmul's accumulator, or joined with one)
                    acc = pl.load(x, [0, 0], [16, 16])
                return pl.store(acc, [0, 0], out)

        return P

    expect_error(make)


def test_if_branch_changes_type():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                acc = pl.full([16, 16], pl.FP32, 0.0)
                if pl.tile.get_block_idx() == 0:
                    # error: 'acc' changes type inside the if, from Tile[[16, 16], FP32] to Tile[[16, 1], FP32, Vec]
                    acc = pl.row_sum(acc)
                return pl.store(acc, [0, 0], out)

        return P

    expect_error(make)


def test_if_branches_store_to_different_tensors():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T], other: pl.Out[T]):
                t = pl.load(x, [0, 0], [16, 16])
                if pl.tile.get_block_idx() == 0:
                    o = pl.store(t, [0, 0], out)
                else:
                    # error: 'o' is a different tensor in each branch of the if
                    o = pl.store(t, [0, 0], other)
                return o

        return P

    expect_error(make)


def test_return_inside_if():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                t = pl.load(x, [0, 0], [16, 16])
                if pl.tile.get_block_idx() == 0:
                    # error: return is only supported at the end of the function body
                    return pl.store(t, [0, 0], out)
                return out

        return P

    expect_error(make)


def test_missing_annotation():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x):  # error: parameter 'x' of 'main' needs a type annotation
                return x

        return P

    expect_error(make)


def test_shape_mismatch_in_add():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                a = pl.load(x, [0, 0], [16, 16])
                b = pl.load(x, [0, 0], [16, 32])
                c = pl.add(a, b)  # error: pl.add operand shapes differ: [16, 16] and [16, 32]
                return pl.store(c, [0, 0], out)

        return P

    expect_error(make)


def test_matmul_inner_dims():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                a = pl.load(x, [0, 0], [16, 32])
                b = pl.load(x, [0, 0], [16, 16])
                c = pl.matmul(a, b)  # error: inner dimensions differ: lhs is 16x32, rhs is 16x16
                return pl.store(c, [0, 0], out)

        return P

    expect_error(make)


def test_dtype_mismatch():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, h: pl.Tensor[[64, 64], pl.FP16], out: pl.Out[T]):
                a = pl.load(x, [0, 0], [16, 16])
                b = pl.load(h, [0, 0], [16, 16])
                c = pl.mul(a, b)  # error: pl.mul's operands have different dtypes: FP32 and FP16
                return pl.store(c, [0, 0], out)

        return P

    expect_error(make)


def test_load_window_outside_tensor():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                # error: window [48, 80) of dimension 0 is outside the tensor's size 64
                a = pl.load(x, [48, 0], [32, 16])
                return pl.store(a, [0, 0], out)

        return P

    expect_error(make)


def test_load_wrong_offset_count():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                # error: pl.load needs 2 offsets, one per tensor dimension, got 1
                a = pl.load(x, [0], [16, 16])
                return pl.store(a, [0, 0], out)

        return P

    expect_error(make)


def test_load_missing_argument():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T):
                a = pl.load(x, [0, 0])  # error: pl.load is missing argument 'shapes'

        return P

    expect_error(make)


def test_unknown_keyword():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T):
                # error: pl.load has no argument 'memory'
                a = pl.load(x, [0, 0], [16, 16], memory=pl.MemorySpace.Vec)

        return P

    expect_error(make)


def test_load_into_acc():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T):
                # error: cannot load into Acc memory
                a = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Acc)

        return P

    expect_error(make)


def test_illegal_move():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T):
                a = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Vec)
                # error: cannot move a tile from Vec to Acc memory
                b = pl.move(a, target_memory=pl.MemorySpace.Acc)

        return P

    expect_error(make)


def test_exp_on_integers():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 64], pl.INT32]):
                a = pl.load(x, [0, 0], [16, 16])
                b = pl.exp(a)  # error: pl.exp needs a floating-point tile, got INT32

        return P

    expect_error(make)


def test_vector_op_in_aic():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def k(self, x: T):
                a = pl.load(x, [0, 0], [16, 16])
                b = pl.relu(a)  # error: pl.relu is only valid in InCore, AIV functions

        return P

    expect_error(make)


def test_matmul_in_aiv():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV)
            def k(self, x: T):
                a = pl.load(x, [0, 0], [16, 16])
                b = pl.matmul(a, a)  # error: pl.matmul is only valid in InCore, AIC functions

        return P

    expect_error(make)


def test_spmd_outside_orchestration():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T):
                with pl.spmd(4):  # error: pl.spmd is only valid in orchestration functions
                    pass

        return P

    expect_error(make)


def test_zero_core_num():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T):
                pass

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T):
                with pl.spmd(0):  # error: core_num must be positive, got 0
                    self.k(x)

        return P

    expect_error(make)


def test_nested_spmd():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T):
                with pl.spmd(2):
                    with pl.spmd(2):  # error: pl.spmd blocks cannot be nested
                        pass

        return P

    expect_error(make)


def test_launch_wrong_argument_count():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, y: T):
                pass

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T):
                with pl.spmd(2):
                    self.k(x)  # error: 'k' takes 2 arguments, got 1

        return P

    expect_error(make)


def test_launch_wrong_argument_type():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 64], pl.FP16]):
                pass

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T):
                # error: argument of 'k' must be Tensor[[64, 64], FP16], got Tensor[[64, 64], FP32]
                self.k(x)

        return P

    expect_error(make)


def test_calling_unknown_method():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T):
                self.missing(x)  # error: 'missing' is not a @pl.function of this program

        return P

    expect_error(make)


def test_kernel_calls_kernel():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def a(self, x: T):
                pass

            @pl.function(type=pl.FunctionType.InCore)
            def b(self, x: T):
                self.a(x)  # error: InCore functions cannot call other functions

        return P

    expect_error(make)


def test_recursion():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Group)
            def g(self, x: T):  # error: recursive calls are not supported: g -> g
                self.g(x)

        return P

    expect_error(make)


def test_return_type_mismatch():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]) -> pl.Tensor[[32, 64], pl.FP32]:
                a = pl.load(x, [0, 0], [16, 16])
                # error: 'k' returns Tensor[[64, 64], FP32] but is declared to return Tensor[[32, 64], FP32]
                return pl.store(a, [0, 0], out)

        return P

    expect_error(make)


def test_loop_changes_type():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T):
                acc = pl.full([16, 16], pl.FP32, 0.0)
                for i in pl.range(4):  # error: 'acc' changes type inside the loop
                    acc = pl.row_sum(acc)

        return P

    expect_error(make)


def test_loop_local_used_after_loop():
    # A scalar or a Vec or Acc tile set in a loop holds its last value after
    # it (test_pypto_language.py); a tile in the cube's input memories has
    # no start value for the loop to carry.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, out: pl.Out[T]):
                for i in pl.range(4):
                    t = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
                # error: 't' is only defined inside the block at line
                return pl.store(t, [0, 0], out)

        return P

    expect_error(make)


def test_non_constant_shape():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T):
                n = pl.tile.get_block_idx()
                a = pl.load(x, [0, 0], [n, 16])  # error: 'n' must be known at compile time here

        return P

    expect_error(make)


def test_global_of_wrong_kind():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T):
                # error: 'NOT_A_NUMBER' is a str, not a value a kernel can use
                a = pl.load(x, [NOT_A_NUMBER, 0], [16, 16])

        return P

    expect_error(make)


def test_scalar_dtype_mismatch():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 16], pl.INT32], s: pl.Scalar[pl.FP32]):
                a = pl.load(x, [0, 0], [16, 16])
                # error: pl.ands's scalar is FP32 but the tile is INT32: pl.ands takes an integer
                b = pl.ands(a, s)

        return P

    expect_error(make)


def test_bad_dir_mask():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def k(self, x: T):
                # error: dir_mask must be 1 (C2V), 2 (V2C) or 3 (both), got 4
                pl.aic_initialize_pipe(dir_mask=4, slot_size=1024)

        return P

    expect_error(make)


def test_push_from_wrong_side():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV)
            def k(self, x: T):
                pl.aiv_initialize_pipe(dir_mask=3, slot_size=1024)
                a = pl.load(x, [0, 0], [16, 16])
                pl.tpush_to_aiv(a)  # error: pl.tpush_to_aiv is only valid in AIC functions

        return P

    expect_error(make)


def test_pop_without_type():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV)
            def k(self, x: T):
                pl.aiv_initialize_pipe(dir_mask=1, slot_size=1024)
                # error: cannot infer the tile type of this pop from pipe 0 (c2v): the other half of the group pushes nothing into it
                t = pl.tpop_from_aic()
                pl.tfree_to_aic(t)

        return P

    expect_error(make)


def test_number_with_a_popped_tile_whose_type_comes_from_a_pop():
    # Both halves pop and the AIC's push follows from its pop: the AIV's pop
    # is typed only by the compiler, after the frontend needs its dtype.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def cube(self, x: T):
                pl.aic_initialize_pipe(dir_mask=3, slot_size=16 * 16 * 4)
                a = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
                pl.tpush_to_aiv(pl.matmul(a, pl.tpop_from_aiv()))
                pl.tfree_to_aiv()

            @pl.function(type=pl.FunctionType.AIV)
            def vec(self, x: T, y: pl.Out[T]):
                pl.aiv_initialize_pipe(dir_mask=3, slot_size=16 * 16 * 4)
                pl.tpush_to_aic(pl.load(x, [0, 0], [16, 16]))
                # error: pl.add with a number needs the tile's shape and dtype, but they come through a pipe
                t = pl.add(pl.tpop_from_aic(), 1.0)
                pl.tfree_to_aic()
                return pl.store(t, [0, 0], y)

            @pl.function(type=pl.FunctionType.Group)
            def grp(self, x: T, y: pl.Out[T]):
                self.cube(x)
                y = self.vec(x, y)
                return y

        return P

    err = expect_error(make)
    assert "annotate the pl.tpop_from_*() the tile comes from" in err.message


def test_pop_annotated_in_both_halves_of_a_cycle_with_another_type():
    # The annotation of the AIV's pop is checked by bp-infer-pipe-types,
    # against the AIC's push that follows from the AIC's own pop.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def cube(self, x: T):
                pl.aic_initialize_pipe(dir_mask=3, slot_size=16 * 16 * 4)
                a = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
                pl.tpush_to_aiv(pl.matmul(a, pl.tpop_from_aiv()))
                pl.tfree_to_aiv()

            @pl.function(type=pl.FunctionType.AIV)
            def vec(self, x: T, y: pl.Out[T]):
                pl.aiv_initialize_pipe(dir_mask=3, slot_size=16 * 16 * 4)
                pl.tpush_to_aic(pl.load(x, [0, 0], [16, 16]))
                # error: pops 16x8xf32 tiles, but pipe 0 (c2v) carries 16x16xf32
                t: pl.Tile[[16, 8], pl.FP32] = pl.tpop_from_aic()
                y = pl.store(t, [0, 0], y)
                pl.tfree_to_aic()
                return y

            @pl.function(type=pl.FunctionType.Group)
            def grp(self, x: T, y: pl.Out[T]):
                self.cube(x)
                y = self.vec(x, y)
                return y

        return P

    expect_error(make)


def test_verifier_error_carries_user_line():
    # Caught by the bp dialect's verifier, not by the frontend: the pipe
    # carries tiles larger than its slots.
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def k(self, x: T):
                pl.aic_initialize_pipe(dir_mask=1, slot_size=64)
                a = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
                # error: moves a tile of 1024 bytes through pipe 0 whose slot_size is 64
                pl.tpush_to_aiv(a)

        return P

    expect_error(make)


def test_intrinsic_outside_program():
    with pytest.raises(RuntimeError, match="pl.load can only be used inside a @pl.function"):
        pl.load(None, [0], [1])


def test_at_least_25_bad_programs():
    count = sum(
        1
        for name in globals()
        if name.startswith("test_")
        and name not in ("test_intrinsic_outside_program", "test_at_least_25_bad_programs")
    )
    assert count >= 25
