"""Every op of the op table (BPOpTable.td) against its NumPy reference, for
every dtype its record allows, on cpu-sim and on cuda-emu; the CUDA build
of the same kernels with nvcc, warnings as errors; and the Python surface
the records make (names, signatures, docstrings, dtype rules).

One program per dtype holds one kernel that applies every op allowed for
that dtype and stores each result in its own rows of one output, so a new
op of an existing class is tested here without a new test: adding its
record adds it to the kernel. What an op needs of its inputs (a positive
operand, a nonzero divisor) is said in OPERANDS below.
"""

import importlib.util
import pathlib

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl
from blockpipe.language import op_table

M, N = 8, 16
DTYPES = {
    "FP32": np.float32,
    "FP16": np.float16,
    "BF16": None,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
}

# The inputs an op's operands take: x any value (with inf, -inf, NaN, -0.0
# for floats, for the unary ops), p positive, z nonzero, s a shift amount
# within the width. Others take x (and y).
OPERANDS = {
    "sqrt": ("p",),
    "log": ("p",),
    "rsqrt": ("p",),
    "recip": ("z",),
    "div": ("x", "z"),
    "fmod": ("x", "z"),
    "rem": ("x", "z"),
    "shl": ("x", "s"),
    "shr": ("x", "s"),
}
# The scalar operand of the scalar class, by op (3 where not said).
SCALARS = {"lrelu": 0.25, "shls": 2, "shrs": 1, "maximums": 0, "minimums": 0}


def numpy_dtype(name):
    if name == "BF16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return DTYPES[name]


def is_float(name):
    return name.startswith(("FP", "BF"))


def ops_for(dtype_name):
    """The table's ops that take `dtype_name`, by mnemonic."""
    dtype = getattr(pl, dtype_name)
    return [op for op in sorted(op_table.RECORDS) if op_table.allows(op, dtype)]


def inputs(dtype_name, seed=0):
    rng = np.random.default_rng(seed)
    dtype = numpy_dtype(dtype_name)
    if is_float(dtype_name):
        x = rng.standard_normal((M, N)).astype(np.float32)
        x[0, :4] = [np.inf, -np.inf, np.nan, -0.0]  # row 0: edge values
        p = rng.uniform(0.25, 4.0, (M, N)).astype(np.float32)
        z = (rng.uniform(0.5, 3.0, (M, N)) * rng.choice([-1, 1], (M, N))).astype(np.float32)
        s = np.zeros((M, N), np.float32)
    else:
        info = np.iinfo(dtype)
        # Never the lowest value (its negation and its quotient by -1
        # overflow); row 0 holds the limits, where + and * wrap around.
        low, high = max(int(info.min) + 1, -1000), min(int(info.max), 1000)
        x = rng.integers(low, high, (M, N))
        if info.bits <= 32:  # NumPy's float references are exact below 2**53
            x[0, :2] = [info.min + (info.min < 0), info.max]
        p = rng.integers(1, min(high, 1000), (M, N))
        z = rng.integers(1, 50, (M, N)) * rng.choice([-1, 1], (M, N))
        s = rng.integers(0, 8 * np.dtype(dtype).itemsize, (M, N))
    y = (
        (rng.standard_normal((M, N)) * 4).astype(np.float32)
        if is_float(dtype_name)
        else (rng.integers(-1000, 1000, (M, N)))
    )
    return {k: v.astype(dtype) for k, v in dict(x=x, y=y, p=p, z=z, s=s).items()}


def operand_names(op):
    record = op_table.RECORDS[op]
    if record["class"] in ("unary", "scalar") or record["class"] in op_table.REDUCTION_CLASSES:
        return OPERANDS.get(op, ("x",))[:1]
    return OPERANDS.get(op, ("x", "y"))


def scalar_of(op, dtype_name):
    value = SCALARS.get(op, 3)
    return float(value) if is_float(dtype_name) else int(value)


def program_source(dtype_name, ops):
    """A program whose kernel stores each op's result at rows [k*M, (k+1)*M)."""
    t = f"pl.Tensor[[{M}, {N}], pl.{dtype_name}]"
    out = f"pl.Tensor[[{M * len(ops)}, {N}], pl.{dtype_name}]"
    body = []
    for k, op in enumerate(ops):
        record = op_table.RECORDS[op]
        args = [f"t{name}" for name in operand_names(op)]
        if record["class"] == "scalar":
            args.append(repr(scalar_of(op, dtype_name)))
        result = f"pl.{record['pl_name']}({', '.join(args)})"
        if record["class"] in op_table.ARG_REDUCTION_CLASSES:
            result = f"pl.cast({result}, pl.{dtype_name})"  # the INT32 indices
        body.append(f"out = pl.store({result}, [{k * M}, 0], out)")
    loads = [f"t{n} = pl.load({n}, [0, 0], [{M}, {N}])" for n in "xypzs"]
    params = ", ".join(f"{n}: {t}" for n in "xypzs")
    lines = [
        "import blockpipe.language as pl",
        "",
        "",
        "@pl.program",
        "class Ops:",
        "    @pl.function(type=pl.FunctionType.InCore)",
        f"    def kernel(self, {params}, out: pl.Out[{out}]) -> {out}:",
        *(" " * 8 + line for line in loads + body),
        "        return out",
        "",
        "    @pl.function(type=pl.FunctionType.Orchestration)",
        f"    def main(self, {params}, out: pl.Out[{out}]) -> {out}:",
        "        out = self.kernel(x, y, p, z, s, out)",
        "        return out",
    ]
    return "\n".join(lines) + "\n"


def program(dtype_name, tmp_path):
    ops = ops_for(dtype_name)
    path = tmp_path / f"ops_{dtype_name.lower()}.py"
    path.write_text(program_source(dtype_name, ops))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Ops, ops


def expected(op, dtype_name, data):
    """The record's NumPy reference, on fp32 copies of 16-bit inputs."""
    record = op_table.RECORDS[op]
    wide = {
        k: (v.astype(np.float32) if dtype_name in ("FP16", "BF16") else v) for k, v in data.items()
    }
    names = operand_names(op)
    x = wide[names[0]]
    if record["class"] == "scalar":
        y = x.dtype.type(scalar_of(op, dtype_name))
    else:
        y = wide[names[1]] if len(names) > 1 else None
    with np.errstate(all="ignore"):
        return np.asarray(op_table.numpy_reference(op)(x, y))


TOLERANCE = {"FP32": 2e-6, "FP16": 2e-3, "BF16": 1.6e-2}


def check(dtype_name, ops, data, out):
    dtype = numpy_dtype(dtype_name)
    for k, op in enumerate(ops):
        want = expected(op, dtype_name, data)
        got = out[k * M : (k + 1) * M][: want.shape[0], : want.shape[1]]
        want = want.astype(dtype).astype(np.float64)
        got = got.astype(np.float64)
        tol = TOLERANCE.get(dtype_name, 0)  # integers: exact
        np.testing.assert_allclose(
            got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=f"pl.{op} on {dtype_name}"
        )


# The output's rows below a reduction's result are left unwritten on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:launch of 'kernel' over 1 block leaves")


@pytest.mark.parametrize("device", ["cpu-sim", "cuda-emu"])
@pytest.mark.parametrize("dtype_name", sorted(DTYPES))
def test_every_op_matches_its_numpy_reference(tmp_path, dtype_name, device):
    ops, names = program(dtype_name, tmp_path)
    target = dict(target="cpu-sim") if device == "cpu-sim" else dict(target="cuda", device=device)
    compiled = blockpipe.compile(ops, quiet=True, **target)
    data = inputs(dtype_name)
    out = np.zeros((M * len(names), N), numpy_dtype(dtype_name))
    compiled(*(data[n] for n in "xypzs"), out)
    check(dtype_name, names, data, out)


def test_every_op_builds_with_nvcc_warning_free(tmp_path):
    """The same kernels, every dtype, built for the GPU with nvcc and -Werror."""
    import test_cuda_target

    if test_cuda_target.NVCC is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine")
    for dtype_name in ("FP32", "BF16", "INT32", "INT16", "UINT8"):
        ops, _ = program(dtype_name, tmp_path)
        test_cuda_target.build_cuda(ops, tmp_path / dtype_name)


def test_the_table_makes_the_python_functions():
    for op, record in op_table.RECORDS.items():
        for where in record["spellings"].split():
            namespace = pl if where == "pl" else getattr(pl, where)
            function = getattr(namespace, record["pl_name"])
            assert function.__doc__.startswith(record["summary"][0].upper()), op
            assert record["numpy"] in function.__doc__
            params = list(__import__("inspect").signature(function).parameters)
            assert ", ".join(params) in record["params"].replace("=None", "").replace(
                "=False", ""
            ), (op, params)
    assert pl.tile.exp is not pl.exp and pl.tile.exp.__doc__ == pl.exp.__doc__.replace(
        "pl.exp(", "pl.tile.exp("
    )


def test_every_record_names_a_functor_and_a_reference():
    assert len(op_table.RECORDS) >= 21
    for op, record in op_table.RECORDS.items():
        assert record["functor"] and record["numpy"], op
        assert record["class"] in op_table.ELEMENTWISE_CLASSES | op_table.REDUCTION_CLASSES
        if record["class"] in op_table.REDUCTION_CLASSES:
            assert record["identity"] in ("zero", "one", "lowest", "highest"), op
    functors = (
        pathlib.Path(blockpipe.__file__).parents[2] / "runtime/include/blockpipe/Tile/Functors.h"
    ).read_text()
    for record in op_table.RECORDS.values():
        assert f"struct {record['functor']} " in functors, record["functor"]


def test_a_float_op_on_an_integer_tile_is_an_error_at_its_line():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: pl.Tensor[[8, 16], pl.INT32], out: pl.Out[pl.Tensor[[8, 16], pl.INT32]]
        ) -> pl.Tensor[[8, 16], pl.INT32]:
            t = pl.load(x, [0, 0], [8, 16])
            return pl.store(pl.exp(t), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[8, 16], pl.INT32], out: pl.Out[pl.Tensor[[8, 16], pl.INT32]]
        ) -> pl.Tensor[[8, 16], pl.INT32]:
            out = self.k(x, out)
            return out

    with pytest.raises(
        blockpipe.CompileError, match="pl.exp needs a floating-point tile, got INT32"
    ) as info:
        blockpipe.compile(P, quiet=True)
    assert info.value.file.endswith("test_op_table.py") and info.value.line


def test_a_shift_out_of_the_width_fails_the_call_at_its_line():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[8, 16], pl.INT32],
            s: pl.Tensor[[8, 16], pl.INT32],
            out: pl.Out[pl.Tensor[[8, 16], pl.INT32]],
        ) -> pl.Tensor[[8, 16], pl.INT32]:
            t = pl.shl(pl.load(x, [0, 0], [8, 16]), pl.load(s, [0, 0], [8, 16]))
            return pl.store(t, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[8, 16], pl.INT32],
            s: pl.Tensor[[8, 16], pl.INT32],
            out: pl.Out[pl.Tensor[[8, 16], pl.INT32]],
        ) -> pl.Tensor[[8, 16], pl.INT32]:
            out = self.k(x, s, out)
            return out

    compiled = blockpipe.compile(P, quiet=True)
    x = np.arange(128, dtype=np.int32).reshape(8, 16)
    s = np.full((8, 16), 3, np.int32)
    out = np.zeros((8, 16), np.int32)
    compiled(x, s, out)
    np.testing.assert_array_equal(out, x << 3)
    s[5, 7] = 32
    out[:] = -1
    with pytest.raises(
        blockpipe.ExecutionError, match=r"integer shift at test_op_table.py:\d+: a shift amount"
    ):
        compiled(x, s, out)
    assert (out == -1).all()  # a failed call leaves its outputs untouched


def test_an_integer_op_on_a_float_tile_is_an_error_at_its_line():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]
        ) -> pl.Tensor[[8, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [8, 16])
            return pl.store(pl.and_(t, t), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]
        ) -> pl.Tensor[[8, 16], pl.FP32]:
            out = self.k(x, out)
            return out

    with pytest.raises(
        blockpipe.CompileError, match="pl.and_ needs an integer tile, got FP32"
    ) as info:
        blockpipe.compile(P, quiet=True)
    assert info.value.file.endswith("test_op_table.py") and "bp." not in str(info.value)
