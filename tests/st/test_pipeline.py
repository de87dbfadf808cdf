"""Pipeline programs against numpy: the MLP examples over 1..16 microbatches
and both schedules, a stage failing on one microbatch, and the compile-time
errors of a pipeline (a stage boundary that does not match, the interleaved
schedule with one stage per device)."""

import importlib.util
import pathlib

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load_example():
    spec = importlib.util.spec_from_file_location(
        "pipeline_mlp", ROOT / "examples" / "pipeline_mlp.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mlp = _load_example()


def _inputs(microbatches, layers, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((microbatches * mlp.ROWS, mlp.WIDTH), dtype=np.float32)
    w = [rng.standard_normal((mlp.WIDTH, mlp.WIDTH), dtype=np.float32) / 8 for _ in range(layers)]
    return x, w


@pytest.mark.parametrize("microbatches", range(1, 17))
def test_two_stage_mlp(microbatches):
    x, w = _inputs(microbatches, 2, seed=microbatches)
    y = np.full_like(x, np.nan)
    compiled = blockpipe.compile(mlp.two_stage_mlp(microbatches))
    compiled(x, w[0], w[1], y)
    np.testing.assert_allclose(y, mlp.reference(x, w), rtol=1e-5, atol=1e-4)
    # Activations went device to device, never through the host.
    counters = compiled.transfer_counters()
    assert counters["host_staged_bytes"] == 0
    assert counters["device_to_device_bytes"] == microbatches * mlp.ROWS * mlp.WIDTH * 4


@pytest.mark.parametrize("microbatches", [1, 2, 3, 4, 5, 8, 13, 16])
def test_four_stages_on_four_devices(microbatches):
    x, w = _inputs(microbatches, 4, seed=100 + microbatches)
    y = np.full_like(x, np.nan)
    blockpipe.compile(mlp.four_stage_mlp((0, 1, 2, 3), microbatches))(x, *w, y)
    np.testing.assert_allclose(y, mlp.reference(x, w), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("schedule", ["gpipe", "interleaved"])
@pytest.mark.parametrize("microbatches", range(1, 17))
def test_four_stages_on_two_devices(schedule, microbatches):
    x, w = _inputs(microbatches, 4, seed=200 + microbatches)
    y = np.full_like(x, np.nan)
    program = mlp.four_stage_mlp((0, 1, 0, 1), microbatches, schedule)
    blockpipe.compile(program)(x, *w, y)
    np.testing.assert_allclose(y, mlp.reference(x, w), rtol=1e-5, atol=1e-4)


def test_the_manifest_records_stages_schedule_and_sub_builds():
    compiled = blockpipe.compile(mlp.four_stage_mlp((0, 1, 0, 1), 4, "interleaved"))
    (pipeline,) = compiled.manifest.pipelines
    assert pipeline.schedule == "interleaved" and pipeline.microbatches == 4
    assert [s.device for s in pipeline.stages] == [0, 1, 0, 1]
    assert [p.split for p in pipeline.signature] == [True, False, False, False, False, True]
    for stage in pipeline.stages:
        assert (compiled.output_dir / stage.directory / "CMakeLists.txt").is_file()
        assert (compiled.output_dir / stage.directory / f"{stage.name}.cpp").is_file()
    # The transfers between stages, as bp-verify-p2p checked them.
    final = compiled.ir("final")
    for pair in ("[[0, 1]]", "[[1, 0]]"):
        assert f"source_target_pairs = dense<{pair}>" in final


N = 8
MB = 4
Int = pl.Tensor[[N, N], pl.INT32]
IntBatch = pl.Tensor[[MB * N, N], pl.INT32]


@pl.program
class DividingPipeline:
    @pl.function(type=pl.FunctionType.InCore)
    def divide(self, x: Int, d: Int, out: pl.Out[Int]) -> Int:
        q = pl.div(pl.load(x, [0, 0], [N, N]), pl.load(d, [0, 0], [N, N]))
        return pl.store(q, [0, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: Int, out: pl.Out[Int]) -> Int:
        t = pl.load(x, [0, 0], [N, N])
        return pl.store(pl.add(t, t), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration, device=0)
    def quotients(self, x: Int, d: Int, q: pl.Out[Int]) -> Int:
        q = self.divide(x, d, q)
        return q

    @pl.function(type=pl.FunctionType.Orchestration, device=1)
    def doubled(self, q: Int, y: pl.Out[Int]) -> Int:
        y = self.double(q, y)
        return y

    @pl.function(type=pl.FunctionType.Pipeline, microbatches=MB)
    def forward(self, x: IntBatch, d: IntBatch, y: pl.Out[IntBatch]) -> IntBatch:
        q = pl.create_tensor([N, N], dtype=pl.INT32)
        q = self.quotients(x, d, q)
        y = self.doubled(q, y)
        return y


def test_a_failing_stage_names_stage_device_and_microbatch():
    compiled = blockpipe.compile(DividingPipeline)
    rng = np.random.default_rng(7)
    x = rng.integers(-1000, 1000, (MB * N, N), dtype=np.int32)
    d = rng.integers(1, 9, (MB * N, N), dtype=np.int32)
    bad = d.copy()
    bad[2 * N + 3, 5] = 0  # microbatch 2
    y = np.full((MB * N, N), -7, dtype=np.int32)
    with pytest.raises(RuntimeError) as info:
        compiled(x, bad, y)
    message = str(info.value)
    assert "stage 'quotients' (0), microbatch 2" in message
    assert "device 0" in message
    assert "a divisor is zero" in message and "test_pipeline.py" in message
    assert (y == -7).all(), "a failed call must leave its outputs untouched"
    # The next call works, on the same mesh and channels.
    channels = compiled.transfer_counters()["channels_created"]
    compiled(x, d, y)
    np.testing.assert_array_equal(y, 2 * (np.trunc(x / d).astype(np.int32)))
    assert compiled.transfer_counters()["channels_created"] == channels


def _compile_error(program) -> blockpipe.CompileError:
    with pytest.raises(blockpipe.CompileError) as info:
        blockpipe.compile(program)
    return info.value


def test_a_stage_boundary_mismatch_is_an_error_at_the_users_line():
    @pl.program
    class Mismatched:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(
            self, x: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]
        ) -> pl.Tensor[[8, 16], pl.FP32]:
            return pl.store(pl.load(x, [0, 0], [8, 16]), [0, 0], out)

        @pl.function(type=pl.FunctionType.InCore)
        def copy8(
            self, x: pl.Tensor[[8, 8], pl.FP32], out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]
        ) -> pl.Tensor[[8, 8], pl.FP32]:
            return pl.store(pl.load(x, [0, 0], [8, 8]), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration, device=0)
        def first(
            self, x: pl.Tensor[[8, 16], pl.FP32], h: pl.Out[pl.Tensor[[8, 16], pl.FP32]]
        ) -> pl.Tensor[[8, 16], pl.FP32]:
            h = self.copy(x, h)
            return h

        @pl.function(type=pl.FunctionType.Orchestration, device=1)
        def second(
            self, h: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]
        ) -> pl.Tensor[[8, 8], pl.FP32]:
            y = self.copy8(h, y)
            return y

        @pl.function(type=pl.FunctionType.Pipeline, microbatches=2)
        def forward(
            self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]
        ) -> pl.Tensor[[16, 8], pl.FP32]:
            h = pl.create_tensor([8, 16], dtype=pl.FP32)
            h = self.first(x, h)
            y = self.second(h, y)  # the mismatch
            return y

    error = _compile_error(Mismatched)
    assert (
        "stage boundary: 'first' writes f32 8x16 but 'second' reads its parameter 0 ('h') as f32 8x8"
        in str(error)
    )
    assert error.file == __file__
    line = next(
        i
        for i, text in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1)
        if "# the mismatch" in text
    )
    assert error.line == line


def test_interleaved_needs_a_device_with_two_stages():
    error = _compile_error(mlp.four_stage_mlp((0, 1, 2, 3), 4, "interleaved"))
    assert "interleaved schedule" in str(error) and "every device holds one stage" in str(error)
    assert error.file == str(ROOT / "examples" / "pipeline_mlp.py")


def test_an_unknown_schedule_is_an_error():
    error = _compile_error(mlp.four_stage_mlp((0, 1, 0, 1), 4, "1f1b"))
    assert 'pl.function\'s schedule must be "gpipe" or "interleaved"' in str(error)


def test_out_arrays_are_written_only_after_the_whole_call():
    # A pipeline whose second stage reads a wrongly shaped array is refused
    # before anything runs, and y keeps what it held.
    compiled = blockpipe.compile(mlp.two_stage_mlp(2))
    x, w = _inputs(2, 2)
    y = np.full_like(x, 3.0)
    with pytest.raises(ValueError, match="w1"):
        compiled(x, w[0], w[1][:, :8].copy(), y)
    assert (y == 3.0).all()
    assert compiled.manifest.mesh.devices == 2
