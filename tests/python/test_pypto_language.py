"""The language pypto programs are written in, beyond annotated programs:
shape-less @pl.jit parameters, statement-form stores, loops with
init_values= and pl.yield_, pl.parallel, bare-dtype scalars. Each runs on
cpu-sim against NumPy; each misuse is a CompileError at the user's line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl


def rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def expect_jit_error(factory, *args):
    located.expect_error(factory, lambda fn: fn.compile(*args))


# ------------------------------------------------------ shape-less parameters


@pl.jit
def first_rows_sum(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32])
        out = pl.store(pl.add(ta, tb), [0, 0], out)
    return out


def test_shapeless_entry_takes_each_calls_shapes_and_dtypes():
    first_rows_sum._cache.clear()
    for rows, dtype in ((16, np.float32), (48, np.float32), (16, np.float16)):
        a, b = rand(rows, 32, dtype=dtype), rand(rows, 32, dtype=dtype, seed=1)
        out = np.zeros_like(a)
        first_rows_sum(a, b, out)
        np.testing.assert_allclose(out[:16], a[:16] + b[:16], rtol=1e-3)
        np.testing.assert_array_equal(out[16:], 0)
    assert len(first_rows_sum._cache) == 3  # one program per signature


@pl.jit.incore
def doubled(x: pl.Tensor, y: pl.InOut[pl.Tensor]):
    t = pl.load(x, [0, 0], [16, 16])
    y = pl.store(pl.add(t, t), [0, 0], y)
    return y


@pl.jit
def doubled_twice(a: pl.Tensor, b: pl.Tensor, ya: pl.Out[pl.Tensor], yb: pl.InOut[pl.Tensor]):
    ya = doubled(a, ya)
    yb = doubled(b, yb)
    return ya, yb


def test_shapeless_kernel_is_specialized_per_call_site():
    a, b = rand(16, 16), rand(32, 16, seed=1)
    ya, yb = np.zeros_like(a), np.zeros_like(b)
    doubled_twice(a, b, ya, yb)
    np.testing.assert_array_equal(ya, 2 * a)
    np.testing.assert_array_equal(yb[:16], 2 * b[:16])
    np.testing.assert_array_equal(yb[16:], 0)
    ir = doubled_twice.compile(a, b, ya, yb).ir()
    assert "@doubled(" in ir and "@doubled_1(" in ir  # two signatures, two kernels


@pl.jit.incore
def forgets_to_return(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)


def test_shapeless_kernel_must_return_its_outputs():
    def make():
        @pl.jit
        def entry(a: pl.Tensor, y: pl.Out[pl.Tensor]):
            y = forgets_to_return(a, y)  # error: its call expects it to return its Out/InOut
            return y

        return entry

    expect_jit_error(make, rand(16, 16), rand(16, 16))


def test_shapeless_parameter_outside_jit_is_an_error():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor],  # error: is a pl.Tensor without shape and dtype
            ):
                return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

        return P

    from blockpipe.language.lowering import program_ir

    located.expect_error(make, program_ir)


def test_shapeless_parameter_given_a_scalar():
    with pytest.raises(TypeError, match="is a pl.Tensor, got float"):
        first_rows_sum(rand(16, 32), 1.5, rand(16, 32))


# --------------------------------------------------------- bare-dtype scalars


@pl.jit
def scaled(x: pl.Tensor, scale: pl.FP32, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), scale), [0, 0], out)
    return out


def test_bare_dtype_annotation_is_a_scalar_parameter():
    x = rand(16, 16)
    out = np.zeros_like(x)
    for scale in (2.0, -0.5):
        scaled(x, scale, out)
        np.testing.assert_allclose(out, x * np.float32(scale), rtol=1e-6)


# ------------------------------------------------------ statement-form stores


@pl.jit
def strips_doubled(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t = pl.load(x, [i * 8, 0], [8, 16])
            if i < 2:
                pl.store(pl.mul(t, 2.0), [i * 8, 0], out)
            else:
                pl.store(pl.mul(t, 3.0), [i * 8, 0], output=out)
    return out


def test_statement_store_updates_its_output():
    x = rand(32, 16)
    out = np.zeros_like(x)
    strips_doubled(x, out)
    np.testing.assert_allclose(out[:16], 2 * x[:16], rtol=1e-6)
    np.testing.assert_allclose(out[16:], 3 * x[16:], rtol=1e-6)


# ----------------------------------------------- init_values and pl.yield_


@pl.jit
def alternating(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        first = pl.load(x, [0, 0], [8, 16])
        for i, (acc, prev) in pl.range(1, 4, init_values=(first, first)):
            t = pl.load(x, [i * 8, 0], [8, 16])
            if i == 2:
                step = pl.yield_(pl.add(acc, t))
            else:
                step = pl.yield_(pl.sub(acc, t))
            total, last = pl.yield_(step, pl.add(prev, t))
        pl.store(total, [0, 0], out)
        pl.store(last, [8, 0], out)
    return out


def test_init_values_carry_and_yield_names_the_results():
    x = rand(32, 16)
    out = np.zeros((16, 16), np.float32)
    alternating(x, out)
    rows = [x[8 * k : 8 * k + 8] for k in range(4)]
    np.testing.assert_allclose(out[:8], rows[0] - rows[1] + rows[2] - rows[3], rtol=1e-5)
    np.testing.assert_allclose(out[8:], rows[0] + rows[1] + rows[2] + rows[3], rtol=1e-5)


M32 = pl.Tensor[[32, 16], pl.FP32]


@pl.program
class AnnotatedYields:
    """pypto's annotated yields (examples/models/07_paged_attention_multi_config.py):
    a branch's `v: pl.Scalar[...] = pl.yield_(e)` and a loop's last
    `r: pl.Tensor[...] = pl.yield_(t)`."""

    @pl.function(type=pl.FunctionType.InCore)
    def masked(self, x: M32, last: pl.Scalar[pl.INDEX], out: pl.Out[M32]) -> M32:
        for i, (o,) in pl.range(4, init_values=(out,)):
            if i == 3:
                cols: pl.Scalar[pl.INDEX] = pl.yield_(last)
            else:
                cols: pl.Scalar[pl.INDEX] = pl.yield_(16)
            t = pl.load(x, [i * 8, 0], [8, 16], valid_shape=[8, cols])
            t = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)
            o2 = pl.store(t, [i * 8, 0], o)
            r: pl.Tensor[[32, 16], pl.FP32] = pl.yield_(o2)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: M32, last: pl.Scalar[pl.INDEX], out: pl.Out[M32]) -> M32:
        out = self.masked(x, last, out)
        return out


def test_annotated_yields_in_branches_and_at_the_loops_end():
    x = rand(32, 16)
    compiled = blockpipe.compile(AnnotatedYields)
    for last in (5, 16):
        out = np.full_like(x, 7.0)
        compiled(x, last, out)
        expected = x.copy()
        expected[24:, last:] = 0
        np.testing.assert_array_equal(out, expected)


@pl.program
class WidenedScalars:
    """pypto's test_paged_attention.py passes `pl.tensor.read` of an INT64
    config tensor for a pl.Scalar[pl.INDEX] parameter."""

    @pl.function(type=pl.FunctionType.InCore)
    def rows_from(
        self,
        x: M32,
        start: pl.Scalar[pl.INDEX],
        scale: pl.Scalar[pl.INT64],
        out: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
    ) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.mul(pl.load(x, [start, 0], [8, 16]), pl.cast(scale, pl.FP32))
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: M32,
        cfg: pl.Tensor[[1], pl.INT64],
        factors: pl.Tensor[[1], pl.INT32],
        out: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
    ) -> pl.Tensor[[8, 16], pl.FP32]:
        start: pl.Scalar[pl.INT64] = pl.tensor.read(cfg, [0])
        scale: pl.Scalar[pl.INT32] = pl.tensor.read(factors, [0])
        out = self.rows_from(x, start, scale, out)
        return out


def test_an_integer_scalar_widens_to_its_parameters_type():
    x = rand(32, 16)
    compiled = blockpipe.compile(WidenedScalars)
    for start, scale in ((8, 3), (24, -2)):
        out = np.zeros((8, 16), np.float32)
        compiled(x, np.array([start], np.int64), np.array([scale], np.int32), out)
        np.testing.assert_array_equal(out, x[start : start + 8] * np.float32(scale))


def test_a_narrowing_scalar_argument_is_an_error():
    def make():
        @pl.program
        class Narrow:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self, n: pl.Scalar[pl.INT32], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]
            ) -> pl.Tensor[[8, 16], pl.FP32]:
                return pl.store(pl.full([8, 16], pl.FP32, 1.0), [0, 0], out)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self, cfg: pl.Tensor[[1], pl.INT64], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]
            ) -> pl.Tensor[[8, 16], pl.FP32]:
                n = pl.tensor.read(cfg, [0])
                out = self.k(n, out)  # error: argument of 'k' must be Scalar[INT32]
                return out

        return Narrow

    from blockpipe.language.lowering import program_ir

    located.expect_error(make, program_ir)


def test_yield_must_give_one_value_per_carried_name():
    def make():
        @pl.jit
        def entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP):
                first = pl.load(x, [0, 0], [8, 16])
                for i, (a, b) in pl.range(3, init_values=(first, first)):
                    c = pl.yield_(pl.add(a, b))  # error: pl.yield_ is the last statement
                pl.store(c, [0, 0], out)
            return out

        return entry

    expect_jit_error(make, rand(8, 16), rand(8, 16))


# ---------------------------------------------------------------- pl.parallel


@pl.jit
def negated_strips(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.parallel(0, 32, 8):
            pl.store(pl.neg(pl.load(x, [i, 0], [8, 16])), [i, 0], out)
    return out


def test_parallel_loop_runs_every_iteration():
    x = rand(32, 16)
    out = np.zeros_like(x)
    negated_strips(x, out)
    np.testing.assert_array_equal(out, -x)


# ------------------------------------------------------------------ shapes


@pl.jit
def halves_swapped(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    half = rows // 2
    with pl.at(level=pl.Level.CORE_GROUP):
        top = pl.load(x, [0, 0], [half, cols])
        bottom = pl.load(x, [half, 0], [rows - half, cols])
        pl.store(bottom, [0, 0], out)
        pl.store(top, [rows - half, 0], out)
    return out


def test_shape_unpacked_before_a_scope_is_read_inside_it():
    for shape in ((16, 16), (32, 8)):
        x = rand(*shape)
        out = np.zeros_like(x)
        halves_swapped(x, out)
        half = shape[0] // 2
        np.testing.assert_array_equal(out, np.concatenate([x[half:], x[:half]]))


@pl.jit
def side_by_side(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rows = x.shape[0]
        _, cols = x.shape
        pl.store(pl.load(x, [0, 0], [rows, cols]), [0, 0], out)
        pl.store(pl.load(y, [0, 0], [rows, cols * 2]), [0, cols], out)
    return out


def test_shape_in_a_scope_and_composite_dims():
    x, y = rand(8, 16), rand(8, 32, seed=1)
    out = np.zeros((8, 48), np.float32)
    side_by_side(x, y, out)
    np.testing.assert_array_equal(out, np.concatenate([x, y], axis=1))


@pl.jit
def staged_exp(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    scratch = pl.create_tensor([32, 16], dtype=pl.FP32)
    for i in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.exp(pl.load(x, [i * 16, 0], [16, 16])), [i * 16, 0], scratch)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(scratch, [0, 0], [32, 16]), 1.0), [0, 0], out)
    return out


def test_a_scope_reads_a_tensor_and_a_loop_variable_of_its_function():
    x = rand(32, 16)
    out = np.zeros_like(x)
    staged_exp(x, out)
    np.testing.assert_allclose(out, np.exp(x) + 1, rtol=1e-5)


def test_a_scope_cannot_write_a_scalar_of_its_function():
    def make():
        @pl.jit
        def entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            for i in pl.range(2):
                # error: is written: a tensor, got Scalar[INDEX]
                with pl.at(level=pl.Level.CORE_GROUP):
                    i = i + 1
                    out[:] = pl.add(x, x)
            return out

        return entry

    expect_jit_error(make, rand(16, 16), rand(16, 16))


def helper_scope(a, c, bias=1.0):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 16])
        pl.store(pl.add(t, bias), [0, 0], c)
    return c


@pl.jit.inline
def helper_twice(a, c):
    tmp = pl.create_tensor([16, 16], dtype=pl.FP32)
    tmp = helper_scope(a, tmp, 2.0)
    c = helper_scope(tmp, c)
    return c


@pl.jit
def helpers_with_scopes(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    tmp = helper_twice(a, c)  # the helper's own 'tmp' is renamed
    return tmp


def test_scopes_in_inlined_helpers_are_outlined():
    a = rand(16, 16)
    c = np.zeros_like(a)
    helpers_with_scopes(a, c)
    np.testing.assert_allclose(c, a + 3.0, rtol=1e-6)


# ------------------------------------------------------ scalars: cast, min, max


@pl.jit
def clipped_scale(x: pl.Tensor, n: pl.Scalar[pl.INT32], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        k = pl.min(pl.max(n, 1), 4)
        factor = pl.max(pl.cast(k, pl.FP32), 2.5)
        bias = pl.cast(3.75, pl.INT32)  # a number stays one: 3
        t = pl.load(x, [0, 0], [16, 16])
        pl.store(pl.add(pl.mul(t, factor), bias), [0, 0], out)
    return out


def test_scalar_cast_min_and_max():
    x = rand(16, 16)
    out = np.zeros_like(x)
    for n, factor in ((-3, 2.5), (3, 3.0), (10, 4.0)):
        clipped_scale(x, n, out)
        np.testing.assert_allclose(out, x * np.float32(factor) + 3, rtol=1e-6, atol=1e-6)


def test_min_of_a_tile_is_an_error():
    def make():
        @pl.jit
        def entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(x, [0, 0], [16, 16])
                m = pl.min(t, 0.0)  # error: pl.min takes two scalars
                pl.store(m, [0, 0], out)
            return out

        return entry

    expect_jit_error(make, rand(16, 16), rand(16, 16))


# ------------------------------------------------------- with pl.at(...) as


@pl.jit
def two_stages(x: pl.Tensor, tmp: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage_one") as first:
        tmp[:] = pl.add(x, x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage_two"):
        out[:] = pl.mul(tmp, tmp)
    return tmp, out


def test_with_at_as_names_the_task():
    x = rand(16, 16)
    tmp, out = np.zeros_like(x), np.zeros_like(x)
    two_stages(x, tmp, out)
    np.testing.assert_array_equal(tmp, x + x)
    np.testing.assert_array_equal(out, (x + x) * (x + x))


def test_a_task_name_has_no_value():
    def make():
        @pl.jit
        def entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP) as task:
                out[:] = pl.add(x, x)
            with pl.at(level=pl.Level.CORE_GROUP):
                out[:] = pl.mul(out, task)  # error: 'task' is the task of the pl.at scope
            return out

        return entry

    expect_jit_error(make, rand(16, 16), rand(16, 16))


# ------------------------------------------------- dtypes blockpipe lacks


def test_integer_dtype_of_a_jit_parameter_is_named():
    def make():
        @pl.jit
        def entry(
            x: pl.Tensor[[16, 16], pl.UINT64],  # error: pl.UINT64 is not supported
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ):
            with pl.at(level=pl.Level.CORE_GROUP):
                out[:] = pl.cast(x, pl.FP32)
            return out

        return entry

    expect_jit_error(make)


def test_integer_dtype_of_a_written_parameter_is_named_not_called_scalar():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Opaque)
            def f(
                self,
                x: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.INT4]],  # error: pl.INT4 is not supported
            ):
                with pl.at(level=pl.Level.CORE_GROUP):
                    out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
                return out

        return P

    from blockpipe.language.lowering import program_ir

    located.expect_error(make, program_ir)


# ------------------------------------------------- values used after a loop


@pl.jit
def last_strip(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t = pl.load(x, [i * 8, 0], [8, 16])
            doubled = pl.add(t, t)
            row = i * 8
        pl.store(doubled, [0, 0], out)  # the last iteration's tile
        pl.store(pl.load(x, [row, 0], [8, 16]), [8, 0], out)  # and index value
    return out


def test_values_set_in_a_loop_are_read_after_it():
    x = rand(32, 16)
    out = np.zeros((16, 16), np.float32)
    last_strip(x, out)
    np.testing.assert_array_equal(out[:8], 2 * x[24:])
    np.testing.assert_array_equal(out[8:], x[24:])


def test_a_tensor_made_in_a_loop_is_not_read_after_it():
    def make():
        @pl.jit
        def entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            for i in pl.range(2):
                made = pl.create_tensor([16, 16], dtype=pl.FP32)
            with pl.at(level=pl.Level.CORE_GROUP):
                out[:] = pl.add(x, x)
            other = made  # error: 'made' is only defined inside the block
            return out

        return entry

    expect_jit_error(make, rand(16, 16), rand(16, 16))


# ------------------------------------------------------- break and continue


@pl.jit
def sum_until(x: pl.Tensor, n: pl.INDEX, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.load(x, [0, 0], [8, 16])
        for i in pl.range(1, 4):
            if i == 2:
                continue
            if i > n:
                break
            acc = pl.add(acc, pl.load(x, [i * 8, 0], [8, 16]))
        for k in range(4):  # unrolled: decided at compile time
            if k == 1:
                break
            acc = pl.mul(acc, 2.0)
        pl.store(acc, [0, 0], out)
    return out


def test_break_and_continue():
    x = rand(32, 16)
    rows = [x[8 * k : 8 * k + 8] for k in range(4)]
    for n in (0, 1, 3):
        out = np.zeros((8, 16), np.float32)
        sum_until(x, n, out)
        expected = rows[0].copy()
        for i in range(1, 4):
            if i == 2:
                continue
            if i > n:
                break
            expected = expected + rows[i]
        np.testing.assert_allclose(out, 2 * expected, rtol=1e-6)


def test_a_while_condition_python_cannot_compare_is_an_error_naming_it():
    def make():
        @pl.jit
        def entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(x, [0, 0], [16, 16])
                while t is not None:  # error: 'is not' is not supported in a condition
                    t = pl.add(t, t)
                pl.store(t, [0, 0], out)
            return out

        return entry

    expect_jit_error(make, rand(16, 16), rand(16, 16))


# -------------------------------------------------------------- scratch tiles


@pl.jit
def rows_summed_minus_max(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.create_tile([8, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        for i in pl.range(4):
            acc = pl.add(acc, pl.load(x, [i * 8, 0], [8, 16]))
        scratch = pl.tile.create([8, 16], dtype=pl.FP32)
        top = pl.row_max(acc, scratch)
        pl.store(pl.row_expand_sub(acc, top), [0, 0], out)
    return out


def test_create_tile_starts_at_zero_and_serves_as_scratch():
    x = rand(32, 16)
    out = np.zeros((8, 16), np.float32)
    rows_summed_minus_max(x, out)
    total = x[0:8] + x[8:16] + x[16:24] + x[24:32]
    np.testing.assert_allclose(out, total - total.max(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@pl.jit
def offset_by_full(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        bias = pl.tile.full([8, 16], dtype=pl.FP32, value=2.5)
        pl.store(pl.add(pl.load(x, [0, 0], [8, 16]), bias), [0, 0], out)
    return out


def test_tile_full_is_pypto_spelling_of_full():
    x = rand(8, 16)
    out = np.zeros((8, 16), np.float32)
    offset_by_full(x, out)
    np.testing.assert_allclose(out, x + 2.5, rtol=1e-6)


@pl.jit
def tile_spellings(x: pl.Tensor, v: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.tile.load(x, [0, 0], [8, 16])
        r = pl.tile.load(v, [0, 0], [8, 1])
        pl.tile.store(pl.tile.row_expand_add(t, r), [0, 0], output_tensor=out)
    return out


def test_pypto_tile_spellings_and_output_tensor():
    x, v = rand(8, 16), rand(8, 1)
    out = np.zeros((8, 16), np.float32)
    tile_spellings(x, v, out)
    np.testing.assert_allclose(out, x + v, rtol=1e-6)


def test_store_takes_its_output_once():
    @pl.jit
    def twice(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.load(x, [0, 0], [8, 16]), [0, 0], out, output_tensor=out)
        return out

    with pytest.raises(blockpipe.CompileError, match="pl.store takes its output tensor once"):
        twice(rand(8, 16), np.zeros((8, 16), np.float32))


@pl.jit
def stored_with_shapes(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.range(0, 16, 8):
            # pypto's fourth argument: the window's shape (09_paged_attention_spmd.py)
            out = pl.store(pl.mul(pl.load(x, [r, 0], [8, 16]), 2.0), [r, 0], out, [8, 16])
    return out


def test_store_takes_pyptos_window_shape():
    x = rand(16, 16)
    out = np.zeros_like(x)
    stored_with_shapes(x, out)
    np.testing.assert_allclose(out, 2 * x, rtol=1e-6)


def test_store_shapes_other_than_the_tiles_are_an_error():
    def make():
        @pl.jit
        def partial(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(x, [0, 0], [8, 16])
                pl.store(t, [0, 0], out, [8, 8])  # error: must be the tile's shape [8, 16]
            return out

        return partial

    expect_jit_error(make, rand(8, 16), rand(8, 16))


@pl.program
class StoresInALoop:
    @pl.function(type=pl.FunctionType.InCore)
    def first_strips(
        self,
        x: pl.Tensor[[32, 16], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        for i in pl.range(4):
            if i >= n:
                break
            # `written` is set only in the loop, and only in the if's branch
            # that runs: after both, it is `y`, stored into in place.
            written = pl.store(pl.exp(pl.load(x, [i * 8, 0], [8, 16])), [i * 8, 0], y)
        return written

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[32, 16], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        y = self.first_strips(x, n, y)
        return y


def test_a_tensor_stored_into_in_a_loop_is_that_tensor_after_it():
    import blockpipe

    compiled = blockpipe.compile(StoresInALoop)
    x = rand(32, 16)
    for n in (1, 3):
        y = np.zeros_like(x)
        compiled(x, n, y)
        np.testing.assert_allclose(y[: 8 * n], np.exp(x[: 8 * n]), rtol=1e-6)
        np.testing.assert_array_equal(y[8 * n :], 0)


# ------------------------------------------------ composite dims in annotations

HALF = pl.dynamic("HALF")


@pl.jit
def doubled_rows(
    x: pl.Tensor[[HALF * 2, 16], pl.FP32], out: pl.Out[pl.Tensor[[HALF * 2, 16], pl.FP32]]
):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(x, x)
    return out


def test_composite_dim_is_dynamic():
    doubled_rows._cache.clear()
    for rows in (32, 48):
        x = rand(rows, 16)
        out = np.zeros_like(x)
        doubled_rows(x, out)
        np.testing.assert_array_equal(out, 2 * x)
    assert len(doubled_rows._cache) == 1


def test_lower_lists_the_compiled_functions():
    lowered = doubled_twice.lower(rand(16, 16), rand(32, 16), rand(16, 16), rand(32, 16))
    kinds = {name: f.func_type for name, f in lowered.functions.items()}
    assert kinds == {
        "doubled": pl.FunctionType.InCore,
        "doubled_1": pl.FunctionType.InCore,
        "doubled_twice": pl.FunctionType.Orchestration,
    }
    assert "bp.launch" in lowered.ir


# ------------------------------------------- manual_scope, pl.submit, deps=


@pl.program
class SubmittedStages:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(
        self,
        x: pl.Tensor[[32, 16], pl.FP32],
        row: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        out = pl.store(pl.mul(pl.load(x, [row, 0], [8, 16]), 3.0), [row, 0], y)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def shift(
        self,
        y: pl.Tensor[[32, 16], pl.FP32],
        row: pl.Scalar[pl.INDEX],
        z: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        out = pl.store(pl.add(pl.load(y, [row, 0], [8, 16]), 1.0), [row, 0], z)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[32, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
        z: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
    ) -> tuple[pl.Tensor[[32, 16], pl.FP32], pl.Tensor[[32, 16], pl.FP32]]:
        with pl.manual_scope():
            for i in pl.range(4):
                y, first = pl.submit(self.scale, x, i * 8, y)
                z, _ = pl.submit(self.shift, y, i * 8, z, deps=[first])
        return y, z


def test_manual_scope_and_submit_run_their_kernels_in_order():
    import blockpipe

    x = rand(32, 16)
    y, z = np.zeros_like(x), np.zeros_like(x)
    blockpipe.compile(SubmittedStages)(x, y, z)
    np.testing.assert_allclose(y, 3 * x, rtol=1e-6)
    np.testing.assert_allclose(z, 3 * x + 1, rtol=1e-6)


@pl.jit
def ordered_by_deps(x: pl.Tensor, tmp: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce") as produced:
        tmp[:] = pl.exp(x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume", deps=[produced]):
        out[:] = pl.add(tmp, 1.0)
    return tmp, out


def test_at_deps_are_accepted():
    x = rand(16, 16)
    tmp, out = np.zeros_like(x), np.zeros_like(x)
    ordered_by_deps(x, tmp, out)
    np.testing.assert_allclose(out, np.exp(x) + 1, rtol=1e-5)


@pl.program
class DumpTagged:
    """pypto's selective-dump requests: pl.dump_tag and pl.submit(dumps=),
    which blockpipe ignores."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), 2.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.create_tensor([16, 16], dtype=pl.FP32)
        pl.dump_tag(x)
        pl.tensor.dump_tag(t)
        t, tid = pl.submit(self.k, x, t, dumps=[x])
        y = self.k(t, y)
        return y


def test_dump_tags_and_submit_dumps_change_nothing():
    import blockpipe

    x = rand(16, 16)
    y = np.zeros_like(x)
    blockpipe.compile(DumpTagged)(x, y)
    np.testing.assert_allclose(y, 4 * x, rtol=1e-6)


@pl.jit.inline
def tagged_add(a: pl.Tensor, c: pl.Tensor):
    pl.dump_tag(a)  # in a helper the entry inlines, as in pypto's test_dump_tag.py
    with pl.at(level=pl.Level.CORE_GROUP, dumps=[a]):
        pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
    return c


@pl.jit
def tagged_entry(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    mid = pl.create_tensor([16, 16], dtype=pl.FP32)
    pl.dump_tag(mid)
    mid = tagged_add(a, mid)
    c = tagged_add(mid, c)
    return c


def test_dump_tags_in_jit_helpers_and_scopes_change_nothing():
    a = rand(16, 16)
    c = np.zeros_like(a)
    tagged_entry(a, c)
    np.testing.assert_allclose(c, a + 2, rtol=1e-6)


def test_dump_tag_in_a_kernel_is_an_error():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
            ) -> pl.Tensor[[16, 16], pl.FP32]:
                pl.dump_tag(x)  # error: pl.dump_tag is only valid in Orchestration
                return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self,
                x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
            ) -> pl.Tensor[[16, 16], pl.FP32]:
                y = self.k(x, y)
                return y

        return P

    from blockpipe.language.lowering import program_ir

    located.expect_error(make, program_ir)


def test_an_unknown_submit_keyword_is_an_error_naming_it():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
            ) -> pl.Tensor[[16, 16], pl.FP32]:
                return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self,
                x: pl.Tensor[[16, 16], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
            ) -> pl.Tensor[[16, 16], pl.FP32]:
                # error: pl.submit(role=...) is not supported
                y, tid = pl.submit(self.k, x, y, role=1)
                return y

        return P

    from blockpipe.language.lowering import program_ir

    located.expect_error(make, program_ir)


# ------------------------------------------- helpers with scopes, other files


def test_a_helper_in_another_file_keeps_its_names_and_lines():
    import inspect

    import scope_helpers

    @pl.jit
    def entry(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        y = scope_helpers.shifted(x, y)
        return y

    x = rand(16, 16)
    y = np.zeros_like(x)
    entry(x, y)
    np.testing.assert_allclose(y, x + 0.5, rtol=1e-6)

    @pl.jit
    def failing(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        y = scope_helpers.broken(x, y)
        return y

    line, text = located.marked_line(scope_helpers.broken)
    with pytest.raises(located.CompileError) as info:
        failing.compile(x, y)
    assert text in info.value.message
    assert (info.value.file, info.value.line) == (inspect.getsourcefile(scope_helpers), line)


@pl.jit
def chained_by_task_ids(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    tids = pl.array.create(2, pl.TASK_ID)
    with pl.manual_scope():
        for half in pl.parallel(2):
            prev = None
            for step in pl.range(2):
                row = half * 16 + step * 8
                with pl.at(level=pl.Level.CORE_GROUP, deps=[prev]) as prev:
                    t = pl.load(x, [row, 0], [8, 16])
                    out = pl.store(pl.mul(t, 2.0), [row, 0], out)
            tids[half] = prev
        barrier = pl.system.task_dummy(deps=[tids])
        with pl.at(level=pl.Level.CORE_GROUP, deps=[barrier]):
            out[:] = pl.add(out, 1.0)
    return out


def test_task_ids_moved_only_for_deps_are_dropped():
    x = rand(32, 16)
    out = np.zeros_like(x)
    chained_by_task_ids(x, out)
    np.testing.assert_allclose(out, 2 * x + 1, rtol=1e-6)


@pl.jit
def stored_under_another_name(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y_done = pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
    with pl.at(level=pl.Level.CORE_GROUP):
        z[:] = pl.add(y_done, 1.0)  # y_done is y, written by the scope before
    return y, z


def test_a_scope_storing_into_a_tensor_under_another_name_writes_it():
    x = rand(16, 16)
    y, z = np.zeros_like(x), np.zeros_like(x)
    stored_under_another_name(x, y, z)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(z, np.exp(x) + 1, rtol=1e-5)


@pl.jit
def rows_set_in_a_loop(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    row = 0  # reassigned in the loop: the scope reads each iteration's
    for i in pl.range(2):
        row = i * 8 + 8
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [row, 0], [8, 16])
            out = pl.store(pl.add(t, t), [row, 0], out)
    return out


def test_a_name_set_in_a_loop_is_read_by_its_scope_each_iteration():
    x = rand(24, 16)
    out = np.zeros_like(x)
    rows_set_in_a_loop(x, out)
    np.testing.assert_array_equal(out[:8], 0)
    np.testing.assert_array_equal(out[8:], 2 * x[8:])
