"""@pl.jit: pypto's function-style entry, compiled on its first call,
specialized on the argument shapes and dtypes (pl.dynamic dims stay
dynamic) and cached per specialization; with @pl.jit.incore kernels and
@pl.jit.inline helpers, numpy arrays and (when installed) torch tensors."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

M = pl.dynamic("M")


@pl.jit
def add(
    a: pl.Tensor[[128, 64], pl.FP32],
    b: pl.Tensor[[128, 64], pl.FP32],
    out: pl.Out[pl.Tensor[[128, 64], pl.FP32]],
):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


def test_entry_with_a_scope_runs_and_caches():
    add._cache.clear()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((128, 64), np.float32), rng.standard_normal((128, 64), np.float32)
    out = np.zeros_like(a)
    result = add(a, b, out)
    assert result is out
    np.testing.assert_array_equal(out, a + b)
    add(b, b, out)
    np.testing.assert_array_equal(out, b + b)
    assert len(add._cache) == 1
    compiled = add.compile()
    assert isinstance(compiled, blockpipe.CompiledProgram) and len(add._cache) == 1


@pl.jit.inline
def bias_relu(t, bias):
    return pl.relu(t + bias)


@pl.jit.incore
def row_block(x: pl.Tensor[[M, 32], pl.FP32], out: pl.Out[pl.Tensor[[M, 32], pl.FP32]]):
    r = pl.tile.get_block_idx() * 16
    t = x[r : r + 16, :]
    out[r : r + 16, :] = bias_relu(t, 0.5)
    return out


@pl.jit
def rows(x: pl.Tensor[[M, 32], pl.FP32], out: pl.Out[pl.Tensor[[M, 32], pl.FP32]]):
    m = pl.tensor.dim(x, 0)
    with pl.spmd(m // 16):
        out = row_block(x, out)
    return out


def test_dynamic_dims_stay_dynamic_and_helpers_are_found():
    rows._cache.clear()
    for n in (32, 64, 96):
        x = np.random.default_rng(n).standard_normal((n, 32)).astype(np.float32)
        out = np.zeros_like(x)
        rows(x, out)
        np.testing.assert_array_equal(out, np.maximum(x + 0.5, 0))
    assert len(rows._cache) == 1  # M is dynamic: one program for every M


B = pl.dynamic("B")


@pl.jit
def batch_cast(x: pl.Tensor[[B, 16, 32], pl.FP16], out: pl.Out[pl.Tensor[[B, 16, 32], pl.FP32]]):
    x.bind_dynamic(0, B)
    out.bind_dynamic(0, B)
    b = pl.tensor.dim(x, 0)
    for i in pl.spmd(b // 2, name_hint="cast_pairs"):
        r = i * 2
        out[r : r + 1, :, :] = pl.cast(x[r : r + 1, :, :], target_type=pl.FP32)
        out[r + 1 : r + 2, :, :] = pl.cast(x[r + 1 : r + 2, :, :], target_type=pl.FP32)
    return out


def test_spmd_scope_over_a_dynamic_batch_with_subscripts():
    batch_cast._cache.clear()
    x = np.random.default_rng(1).standard_normal((6, 16, 32)).astype(np.float16)
    out = np.zeros((6, 16, 32), np.float32)
    batch_cast(x, out)
    np.testing.assert_array_equal(out, x.astype(np.float32))


@pl.jit
def scale_rows(x, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_rows"):  # the function's own name
        out[:] = pl.mul(x, 3.0)
    return out


def test_unannotated_parameters_take_the_arguments_types_per_specialization():
    scale_rows._cache.clear()
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    out = np.zeros_like(x)
    scale_rows(x, out)
    np.testing.assert_array_equal(out, x * 3)
    with pytest.raises(
        ValueError, match="parameter 'out' of 'scale_rows' must have dtype float32, got float16"
    ):
        scale_rows(x, out.astype(np.float16))
    with pytest.raises(
        ValueError, match="dimension 0 is 16 in its annotation but 8 in the argument"
    ):
        scale_rows(x, np.zeros((8, 16), np.float32))


def test_mismatched_named_dims_are_a_value_error_and_outputs_stay():
    rows._cache.clear()
    x = np.ones((32, 32), np.float32)
    out = np.full((48, 32), 7.0, np.float32)
    with pytest.raises(ValueError, match="dimension 'M' is 32 in parameter 'x'"):
        rows(x, out)
    assert (out == 7.0).all()


def test_helpers_are_not_entries():
    with pytest.raises(TypeError, match="@pl.jit.incore function: call it from a @pl.jit function"):
        row_block(np.zeros((16, 32), np.float32), np.zeros((16, 32), np.float32))


@pl.jit
def broken(x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.reshape(x, [3, 3])
    return out


def test_errors_name_the_users_line():
    import inspect

    lines, first = inspect.getsourcelines(broken)
    with pytest.raises(blockpipe.CompileError) as info:
        broken(np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32))
    assert (info.value.file, info.value.line) == (__file__, first + 3), str(info.value)
    assert "pl.reshape cannot make [3, 3]" in info.value.message


def test_torch_tensors_when_installed():
    torch = pytest.importorskip("torch")
    add._cache.clear()
    a, b = torch.randn(128, 64), torch.randn(128, 64)
    out = torch.zeros(128, 64)
    add(a, b, out)
    assert torch.equal(out, a + b)


@pl.jit
def double(a: pl.Tensor[[M, 64], pl.FP32], out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, a)
    return out


def test_all_of_a_dynamic_dim_is_its_run_time_extent():
    """`out[:]` of a tensor whose dim 0 is dynamic is all of its rows,
    whatever their number: computed in strips of 64 rows here, the last one
    partial, nothing past the end read or written."""
    double._cache.clear()
    for rows in (1, 48, 64, 65, 200):
        a = np.random.default_rng(rows).standard_normal((rows, 64), dtype=np.float32)
        out = np.full_like(a, 7.0)
        double(a, out)
        np.testing.assert_array_equal(out, a + a)
    assert len(double._cache) == 1


@pl.jit
def row_wise(
    a: pl.Tensor[[M, 32], pl.FP32],
    bias: pl.Tensor[[1, 32], pl.FP32],
    out: pl.Out[pl.Tensor[[M, 32], pl.FP32]],
    sums: pl.Out[pl.Tensor[[M, 1], pl.FP32]],
):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.exp(a - pl.row_max(a)) + bias
    with pl.at(level=pl.Level.CORE_GROUP):
        sums[:] = pl.row_sum(a[:, :] * 2.0)
    return out, sums


def test_row_wise_operations_over_a_dynamic_dim_match_numpy():
    """Row reductions, broadcasts of a row or column vector and whole
    subscripts (`a[:, :]`) are computed strip by strip."""
    bias = np.arange(32, dtype=np.float32).reshape(1, 32) / 32
    for rows in (3, 300):
        a = np.random.default_rng(rows).standard_normal((rows, 32), dtype=np.float32)
        out, sums = np.zeros_like(a), np.full((rows, 1), 5.0, np.float32)
        row_wise(a, bias, out, sums)
        np.testing.assert_allclose(out, np.exp(a - a.max(axis=1, keepdims=True)) + bias, rtol=1e-6)
        np.testing.assert_allclose(sums, (2 * a).sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)


def column_sums(a: pl.Tensor[[M, 16], pl.FP32], out: pl.Out[pl.Tensor[[M, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = a - pl.col_sum(a)  # error: col_sum mixes the rows of its operands
    return out


def tile_from_before(a: pl.Tensor[[M, 16], pl.FP32], out: pl.Out[pl.Tensor[[M, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.slice(a, [16, 16], [0, 0])
        out[:] = a + t  # error: not the tile 't'
    return out


@pytest.mark.parametrize("function", [column_sums, tile_from_before])
def test_what_would_mix_the_strips_is_a_compile_error(function):
    import inspect

    lines, first = inspect.getsourcelines(function)
    line = next(i for i, text in enumerate(lines) if "# error: " in text)
    expected = lines[line].split("# error: ")[1].strip()
    with pytest.raises(blockpipe.CompileError) as info:
        pl.jit(function)(np.zeros((32, 16), np.float32), np.zeros((32, 16), np.float32))
    assert info.value.line == first + line, str(info.value)
    assert expected in info.value.message, info.value.message
