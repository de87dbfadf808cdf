"""blockpipe.compile(): artifacts, per-pass IR, input validation, and the
C++ build cache."""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import blockpipe
import blockpipe.build as build
import blockpipe.language as pl
from blockpipe import _core

ROWS, COLS = 32, 16


@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        s: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.mul(pl.load(x, [row, 0], [16, COLS]), s), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        s: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.spmd(2):
            y = self.scale(x, s, y)
        return y


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return blockpipe.compile(
        Scale, output_dir=tmp_path_factory.mktemp("scale"), dump_passes=True, quiet=True
    )


def test_runs_and_returns_out_array(compiled):
    x = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    y = np.zeros_like(x)
    result = compiled(x, 0.5, y)
    assert result is y
    np.testing.assert_allclose(y, x * 0.5)


@pl.program
class BumpInPlace:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, x: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], x)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(
        self, s: pl.Scalar[pl.FP32], x: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]
    ) -> None:
        x = self.bump(x)


def test_pypto_metadata_of_the_entry(compiled):
    """pypto's CompiledProgram.param_names, output_indices, has_return."""
    assert compiled.param_names == ["x", "s", "y"]
    assert compiled.output_indices == [2]
    assert compiled.has_return is True
    bump = blockpipe.compile(BumpInPlace, quiet=True)
    assert bump.param_names == ["s", "x"]
    assert bump.output_indices == []  # InOut: the caller's array, never made
    assert bump.has_return is False
    x = np.zeros((16, 16), np.float32)
    bump(1.0, x)
    np.testing.assert_array_equal(x, np.ones_like(x))


def test_artifacts_and_output_dir(compiled):
    out = compiled.output_dir
    for rel in ("kernel_config.json", "orchestration/main.cpp", "CMakeLists.txt"):
        assert (out / rel).read_text() == compiled.artifacts[rel]
    assert any(rel.startswith("kernels/incore/") for rel in compiled.artifacts)
    config = _core.parse_manifest(compiled.artifacts["kernel_config.json"])
    assert config.orchestrations[0].name == "main"
    dumps = sorted(p.name for p in (out / "passes").iterdir())
    assert dumps[0] == "00_input.mlir" and dumps[1] == "01_bp-register-target.mlir"
    assert dumps[2] == "02_bp-flatten-tiles.mlir"
    assert dumps[3] == "03_bp-infer-pipe-types.mlir"
    assert dumps[4] == "04_bp-infer-memory-spaces.mlir"
    assert dumps[5] == "05_bp-split-matmul.mlir"
    assert dumps[6] == "06_bp-check-output-coverage.mlir"
    assert dumps[7] == "07_bp-expand-mixed-kernel.mlir"


def test_ir_after_each_pass(compiled):
    assert compiled.passes[:7] == [
        "bp-register-target",
        "bp-flatten-tiles",
        "bp-infer-pipe-types",
        "bp-infer-memory-spaces",
        "bp-split-matmul",
        "bp-check-output-coverage",
        "bp-expand-mixed-kernel",
    ]
    assert '#bp.target<name = "cpu-sim"' in compiled.ir("register-target")
    assert "bp.launch @scale" in compiled.ir()
    assert compiled.ir("inject-gm-pipe-buffer") == compiled.ir("bp-inject-gm-pipe-buffer")
    assert compiled.ir("final") == compiled.ir(compiled.passes[-1])
    with pytest.raises(KeyError, match="no pass 'bp-nothing'"):
        compiled.ir("bp-nothing")


@pytest.mark.parametrize(
    "args,message",
    [
        # (x, 0.5) is a return-style call now: y is made and returned.
        (lambda x, y: (x,), "takes 3 arguments"),
        (lambda x, y: (x[:16], 0.5, y), "parameter 'x' must have shape 32x16, got 16x16"),
        (
            lambda x, y: (x.astype(np.float64), 0.5, y),
            "parameter 'x' must have dtype float32, got float64",
        ),
        (lambda x, y: (np.asfortranarray(x), 0.5, y), "parameter 'x' must be C-contiguous"),
        (lambda x, y: (x.tolist(), 0.5, y), "parameter 'x' must be a numpy array, got list"),
        (lambda x, y: (x, "half", y), "parameter 's' is a scalar, got str"),
        (lambda x, y: (x, True, y), "parameter 's' is a scalar, got bool"),
        (lambda x, y: (x, 0.5, y[:, :8]), "parameter 'y' must have shape 32x16, got 32x8"),
    ],
)
def test_bad_inputs_name_the_parameter_and_touch_nothing(compiled, args, message):
    x = np.ones((ROWS, COLS), dtype=np.float32)
    y = np.full((ROWS, COLS), 7.0, dtype=np.float32)
    with pytest.raises(ValueError, match=message):
        compiled(*args(x, y))
    assert (y == 7.0).all()


def test_read_only_output_is_rejected(compiled):
    x = np.ones((ROWS, COLS), dtype=np.float32)
    y = np.zeros((ROWS, COLS), dtype=np.float32)
    y.flags.writeable = False
    with pytest.raises(ValueError, match="'y' is an output but the array is read-only"):
        compiled(x, 1.0, y)


class _ArraySubclass(np.ndarray):
    pass


def test_repeated_calls_accept_and_reject_what_the_first_does(compiled):
    # After a first call, calls skip the Python call path (the runtime's
    # Call checks and runs them in one step): they accept and reject
    # exactly what a first call would, numpy scalars and array subclasses
    # included.
    x = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    y = np.zeros_like(x)
    compiled(x, 0.5, y)
    for xs, s in ((x, 2), (x, np.float32(0.25)), (x.view(_ArraySubclass), 0.75), (x.copy(), -1.5)):
        y[:] = 0
        assert compiled(xs, s, y) is y
        np.testing.assert_allclose(y, x * np.float32(s))
    y[:] = 7
    for args, message in (
        ((x.astype(">f4"), 0.5, y), "'x' must have dtype float32"),
        ((x, True, y), "'s' is a scalar, got bool"),
        ((x, 2**70, y), None),
        ((x[:, ::-1], 0.5, y), "'x' must be C-contiguous"),
        ((x, 0.5, y.reshape(ROWS * COLS)), "'y' must have shape 32x16"),
    ):
        if message is None:  # an int beyond int64 for a float parameter: its float
            y2 = np.zeros_like(y)
            compiled(x, 2**70, y2)
            np.testing.assert_allclose(y2, x * np.float32(2.0**70))
            continue
        with pytest.raises(ValueError, match=message):
            compiled(*args)
        assert (y == 7).all()


def test_second_compile_does_no_cpp_build(compiled, monkeypatch):
    def no_build(*args):
        raise AssertionError(f"unexpected C++ build: {args}")

    monkeypatch.setattr(build, "_build_into", no_build)
    again = blockpipe.compile(Scale, quiet=True)
    assert again.library_path == compiled.library_path


def test_corrupted_cache_entry_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_CACHE_DIR", str(tmp_path / "cache"))
    first = blockpipe.compile(Scale, quiet=True)
    library = first.library_path
    library.write_bytes(library.read_bytes()[:-64] + b"\0" * 64)
    calls = []
    real_build = build._build_into
    monkeypatch.setattr(build, "_build_into", lambda *args: (calls.append(args), real_build(*args)))
    second = blockpipe.compile(Scale, quiet=True)
    assert calls, "the corrupted entry was not rebuilt"
    x = np.ones((ROWS, COLS), dtype=np.float32)
    y = np.zeros_like(x)
    second(x, 3.0, y)
    assert (y == 3.0).all()


def test_concurrent_compiles_share_one_build(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        import numpy as np, blockpipe
        from test_compile import Scale
        c = blockpipe.compile(Scale, quiet=True)
        x = np.ones((32, 16), dtype=np.float32); y = np.zeros_like(x)
        c(x, 2.0, y)
        assert (y == 2.0).all()
        print(c.library_path)
    """)
    env = dict(os.environ)
    env["BLOCKPIPE_CACHE_DIR"] = str(tmp_path / "cache")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert len({out.strip() for out, _ in outputs}) == 1
    assert len(list((tmp_path / "cache" / "builds").iterdir())) == 1


def test_compile_rejects_non_programs():
    with pytest.raises(TypeError, match="takes a @pl.program"):
        blockpipe.compile(object())


def test_device_parallelism_is_bounded_and_validated():
    from blockpipe import _runtime

    assert _runtime.Device(parallelism=1).parallelism == 1
    assert _runtime.Device(parallelism=1000).parallelism == 24  # the core groups
    assert 1 <= _runtime.Device(parallelism=0).parallelism <= 24
    with pytest.raises(ValueError, match="parallelism must be >= 0"):
        _runtime.Device(parallelism=-1)


@pytest.mark.parametrize("parallelism", ["1", "24"])
def test_results_do_not_depend_on_parallelism(compiled, monkeypatch, parallelism):
    monkeypatch.setenv("BLOCKPIPE_PARALLELISM", parallelism)
    program = blockpipe.compile(Scale, output_dir=compiled.output_dir, quiet=True)
    x = np.random.default_rng(1).standard_normal((ROWS, COLS), dtype=np.float32)
    y = np.zeros_like(x)
    program(x, 3.0, y)
    assert program._device.parallelism == int(parallelism)
    np.testing.assert_allclose(y, x * 3.0)


def test_bad_parallelism_from_the_environment_is_named(compiled, monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_PARALLELISM", "many")
    program = blockpipe.compile(Scale, output_dir=compiled.output_dir, quiet=True)
    x = np.zeros((ROWS, COLS), dtype=np.float32)
    y = np.full_like(x, 7.0)
    with pytest.raises(RuntimeError, match="BLOCKPIPE_PARALLELISM='many'"):
        program(x, 1.0, y)
    assert (y == 7.0).all()


@pl.program
class Bf16Axpy:
    @pl.function(type=pl.FunctionType.InCore)
    def axpy(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.BF16],
        y: pl.Tensor[[ROWS, COLS], pl.BF16],
        out: pl.Out[pl.Tensor[[ROWS, COLS], pl.BF16]],
    ) -> pl.Tensor[[ROWS, COLS], pl.BF16]:
        row = pl.tile.get_block_idx() * 16
        t = pl.add(pl.mul(pl.load(x, [row, 0], [16, COLS]), 2.0), pl.load(y, [row, 0], [16, COLS]))
        return pl.store(t, [row, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.BF16],
        y: pl.Tensor[[ROWS, COLS], pl.BF16],
        out: pl.Out[pl.Tensor[[ROWS, COLS], pl.BF16]],
    ) -> pl.Tensor[[ROWS, COLS], pl.BF16]:
        with pl.spmd(2):
            out = self.axpy(x, y, out)
        return out


def test_bf16_arrays_come_from_ml_dtypes(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = ml_dtypes.bfloat16
    program = blockpipe.compile(Bf16Axpy, output_dir=tmp_path / "bf16", quiet=True)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((ROWS, COLS)).astype(bf16)
    y = rng.standard_normal((ROWS, COLS)).astype(bf16)
    out = np.zeros((ROWS, COLS), dtype=bf16)
    program(x, y, out)
    # Each op rounds to bf16, as the tile library computes in bf16 tiles.
    want = (
        (x.astype(np.float32) * 2.0).astype(bf16).astype(np.float32) + y.astype(np.float32)
    ).astype(bf16)
    np.testing.assert_array_equal(out.astype(np.float32), want.astype(np.float32))
    with pytest.raises(ValueError, match="parameter 'x' must have dtype bfloat16, got float32"):
        program(x.astype(np.float32), y, out)


@pl.program
class RowBlocks:
    @pl.function(type=pl.FunctionType.InCore)
    def total(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[16, COLS], pl.FP32]]
    ) -> pl.Tensor[[16, COLS], pl.FP32]:
        acc = pl.load(x, [0, 0], [16, COLS])
        for blk in pl.range(1, ROWS // 16):
            acc = pl.add(acc, pl.load(x, [blk * 16, 0], [16, COLS]))
        return pl.store(acc, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[16, COLS], pl.FP32]]
    ) -> pl.Tensor[[16, COLS], pl.FP32]:
        with pl.spmd(1):
            y = self.total(x, y)
        return y


def test_generated_loops_keep_the_users_names(tmp_path):
    program = blockpipe.compile(RowBlocks, output_dir=tmp_path / "rows", quiet=True)
    source = program.artifacts["kernels/incore/total.cpp"]
    # The loop variable and the carried tile are the user's; the tile that
    # starts the loop is the loop's variable (no copy).
    assert "for (int64_t blk = 1; blk < 2; blk += 1) {" in source, source
    assert "tile::binary<tile::op::Add>(acc_1, acc, t);" in source and "acc = acc_1;" in source, (
        source
    )
    x = np.random.default_rng(5).standard_normal((ROWS, COLS), dtype=np.float32)
    y = np.zeros((16, COLS), dtype=np.float32)
    program(x, y)
    np.testing.assert_allclose(y, x[:16] + x[16:], rtol=1e-6)


FACTOR = 2.0


@pl.program
class ScaleByGlobal:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        return pl.store(pl.mul(pl.load(x, [0, 0], [ROWS, COLS]), FACTOR), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.spmd(1):
            y = self.scale(x, y)
        return y


def test_recompiling_sees_changed_module_constants(tmp_path, monkeypatch):
    # The parsed source is reused between compiles; the globals it reads
    # are not.
    x = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    for factor in (2.0, 5.0):
        monkeypatch.setitem(globals(), "FACTOR", factor)
        program = blockpipe.compile(ScaleByGlobal, output_dir=tmp_path / str(factor), quiet=True)
        y = np.zeros_like(x)
        program(x, y)
        np.testing.assert_allclose(y, x * factor)


def test_a_tile_larger_than_its_memory_is_a_located_compile_error(tmp_path):
    big = 512  # a 512x512 f32 vec tile is 1 MiB; cpu-sim's vec memory 192 KiB

    @pl.program
    class Big:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: pl.Tensor[[big, big], pl.FP32], y: pl.Out[pl.Tensor[[big, big], pl.FP32]]
        ) -> pl.Tensor[[big, big], pl.FP32]:
            t = pl.load(x, [0, 0], [big, big])
            return pl.store(pl.exp(t), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[big, big], pl.FP32], y: pl.Out[pl.Tensor[[big, big], pl.FP32]]
        ) -> pl.Tensor[[big, big], pl.FP32]:
            with pl.spmd(1):
                y = self.k(x, y)
            return y

    with pytest.raises(blockpipe.CompileError) as info:
        blockpipe.compile(Big, output_dir=tmp_path / "big", quiet=True)
    err = info.value
    assert (
        "tile 'Tile[[512, 512], FP32, Vec]' is 1048576 bytes, more than the 196608 bytes "
        "of vec memory on 'cpu-sim'" in err.message
    ), err.message
    source_lines = pathlib.Path(__file__).read_text().splitlines()
    load_line = 1 + next(
        i for i, line in enumerate(source_lines) if "t = pl.load(x, [0, 0], [big, big])" in line
    )
    assert (err.file, err.line) == (__file__, load_line), (err.file, err.line)
    assert str(err).splitlines()[1].strip() == "t = pl.load(x, [0, 0], [big, big])"
    assert "^" in str(err).splitlines()[2]
    assert not (tmp_path / "big" / "kernel_config.json").exists()


@pl.program
class TooManyBlocks:
    """Six blocks over a tensor of four tiles: blocks 4 and 5 would read
    and write past the end of x and y."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[64, 16], pl.FP32]]
    ) -> pl.Tensor[[64, 16], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        t = pl.load(x, [row, 0], [16, 16])
        return pl.store(pl.exp(t), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[64, 16], pl.FP32]]
    ) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.spmd(6):
            y = self.k(x, y)
        return y


def test_a_window_out_of_bounds_at_run_time_fails_naming_the_line(tmp_path):
    program = blockpipe.compile(TooManyBlocks, output_dir=tmp_path / "oob", quiet=True)
    x = np.ones((64, 16), dtype=np.float32)
    y = np.full((64, 16), 7.0, dtype=np.float32)
    source_lines = pathlib.Path(__file__).read_text().splitlines()
    load_line = 1 + next(
        i for i, line in enumerate(source_lines) if "t = pl.load(x, [row, 0], [16, 16])" in line
    )
    with pytest.raises(RuntimeError) as info:
        program(x, y)
    message = str(info.value)
    assert re.search(
        rf"kernel 'k' block [45]: load from 'x' at test_compile.py:{load_line}: "
        r"dim 0 window \[(64, 80|80, 96)\) is outside the tensor's \[0, 64\)",
        message,
    ), message
    assert (y == 7.0).all()  # outputs untouched


@pl.program
class Div:
    """Named like the C library's div(), which a C++ namespace `div` would
    collide with; divides by a scalar known only at run time."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[64, 16], pl.FP32],
        parts: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
    ) -> pl.Tensor[[64, 16], pl.FP32]:
        rows = 64 // parts
        return pl.store(pl.load(x, [rows - 16, 0], [16, 16]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[64, 16], pl.FP32],
        parts: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
    ) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.spmd(1):
            y = self.k(x, parts, y)
        return y


def test_library_names_and_a_zero_divisor(tmp_path):
    program = blockpipe.compile(Div, output_dir=tmp_path / "div", quiet=True)
    assert "namespace div_ {" in program.artifacts["orchestration/main.h"]
    x = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)
    y_full = np.zeros((64, 16), dtype=np.float32)
    program(x, 2, y_full)
    np.testing.assert_array_equal(y_full[:16], x[16:32])
    source_lines = pathlib.Path(__file__).read_text().splitlines()
    line = 1 + next(i for i, text in enumerate(source_lines) if "rows = 64 // parts" in text)
    y_full[:] = 5.0
    with pytest.raises(
        RuntimeError, match=rf"integer division at test_compile.py:{line}: the divisor is zero"
    ):
        program(x, 0, y_full)
    assert (y_full == 5.0).all()


@pl.program
class RowsPerBlock:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[pl.dynamic, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[pl.dynamic, 16], pl.FP32]],
    ) -> pl.Tensor[[pl.dynamic, 16], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.exp(pl.load(x, [row, 0], [16, 16])), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[pl.dynamic, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[pl.dynamic, 16], pl.FP32]],
    ) -> pl.Tensor[[pl.dynamic, 16], pl.FP32]:
        with pl.spmd(pl.tensor.dim(x, 0) // 16):
            y = self.k(x, y)
        return y


def test_a_dynamic_core_num_of_zero_is_an_error_naming_the_launch(tmp_path):
    program = blockpipe.compile(RowsPerBlock, output_dir=tmp_path / "rows", quiet=True)
    source_lines = pathlib.Path(__file__).read_text().splitlines()
    # The launch is the call on the line after the `with pl.spmd(...)`.
    line = 2 + next(
        i
        for i, text in enumerate(source_lines)
        if "with pl.spmd(pl.tensor.dim(x, 0) // 16):" in text
    )
    x = np.ones((8, 16), dtype=np.float32)  # fewer rows than one block takes
    y = np.full_like(x, 2.0)
    with pytest.raises(
        RuntimeError,
        match=rf"core_num of the launch of 'k' at test_compile.py:{line} is 0; "
        "it must be positive",
    ):
        program(x, y)
    assert (y == 2.0).all()
    x = np.ones((32, 16), dtype=np.float32)
    y = np.zeros_like(x)
    program(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)


def _matmul_from_zeros(explicit):
    M, K, N, KT = 32, 64, 48, 16

    @pl.program
    class FromZeros:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[M, K], pl.FP32],
            w: pl.Tensor[[K, N], pl.FP32],
            y: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ) -> pl.Tensor[[M, N], pl.FP32]:
            if explicit:
                acc = pl.full([M, N], pl.FP32, 0.0, target_memory=pl.MemorySpace.Acc)
            else:
                acc = pl.full([M, N], pl.FP32, 0.0)
            for k in pl.range(K // KT):
                acc = pl.matmul(
                    pl.load(x, [0, k * KT], [M, KT]), pl.load(w, [k * KT, 0], [KT, N]), acc=acc
                )
            return pl.store(pl.relu(acc), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[M, K], pl.FP32],
            w: pl.Tensor[[K, N], pl.FP32],
            y: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ) -> pl.Tensor[[M, N], pl.FP32]:
            with pl.spmd(1):
                y = self.k(x, w, y)
            return y

    return FromZeros, (M, K, N)


@pytest.mark.parametrize("explicit", [False, True], ids=["inferred", "explicit"])
def test_a_matmul_chain_starts_from_pl_full(tmp_path, explicit):
    program_class, (M, K, N) = _matmul_from_zeros(explicit)
    program = blockpipe.compile(program_class, output_dir=tmp_path / "zeros", quiet=True)
    # The zeros are an acc tile on the cube half, accumulated in place.
    assert re.search(
        r"bp.full 0.0+e\+00 : f32 -> !bp.tile<32x48xf32, acc>", program.ir("bp-expand-mixed-kernel")
    ), program.ir("bp-expand-mixed-kernel")
    aic = program.artifacts["kernels/aic/k_aic.cpp"]
    assert "tile::full(acc, 0.0f);" in aic and "tile::matmul_acc(acc, " in aic, aic
    rng = np.random.default_rng(11)
    x = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((K, N), dtype=np.float32)
    y = np.zeros((M, N), dtype=np.float32)
    program(x, w, y)
    np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)


def test_a_loaded_tile_cannot_start_a_matmul_chain():
    @pl.program
    class Loaded:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            acc = pl.load(x, [0, 0], [16, 16])
            for k in pl.range(2):
                acc = pl.matmul(pl.load(x, [0, 0], [16, 16]), pl.load(x, [0, 0], [16, 16]), acc=acc)
            return pl.store(acc, [0, 0], y)

    with pytest.raises(blockpipe.CompileError, match="a loaded tile cannot become an acc tile"):
        blockpipe.compile(Loaded, quiet=True)


def test_the_chosen_target_reaches_the_compiler(tmp_path):
    # The cuda spec is attached (it is what the IR records and the manifest
    # names), and codegen emits CUDA kernels for it (test_cuda_target.py
    # builds them).
    from blockpipe.compiler import compile_to_cpp

    files, _, passes = compile_to_cpp(Scale, "cuda", project="scale", capture=True)
    assert 'name = "cuda", driver = "cuda"' in passes[-1][1]
    assert _core.parse_manifest(files["kernel_config.json"]).target == "cuda"
    assert "kernels/incore/scale_1.cu" in files and "kernels/incore/scale_1.cpp" not in files
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        blockpipe.compile(Scale, output_dir=tmp_path, target="tpu", quiet=True)


def test_dtype_table_agrees_with_numpy():
    from blockpipe import _core
    from blockpipe.compiler import _numpy_dtype

    table = _core.dtypes()
    assert {d["name"] for d in table} >= {"fp32", "fp16", "bf16", "int32", "int64"}
    for entry in table:
        dtype = _numpy_dtype(entry["name"])
        assert dtype is not None and dtype.itemsize == entry["bytes"], entry
        assert (dtype.kind == "f" or dtype.name == "bfloat16") == entry["is_float"], entry
