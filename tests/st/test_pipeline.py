"""Pipeline programs against numpy: the MLP examples over 1..16 microbatches
and both schedules, a stage failing on one microbatch (and how its message
tells it), and the compile-time errors of a pipeline (a stage boundary that
does not match, the interleaved schedule with one stage per device)."""

import importlib.util
import pathlib
import re

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


def four_stage_dividing(placement, schedule):
    """Four stages on `placement`'s devices; the third ('third', stage 2)
    divides, the others double."""

    @pl.program
    class FourStageDividing:
        @pl.function(type=pl.FunctionType.InCore)
        def divide(self, x: Int, d: Int, out: pl.Out[Int]) -> Int:
            q = pl.div(pl.load(x, [0, 0], [N, N]), pl.load(d, [0, 0], [N, N]))
            return pl.store(q, [0, 0], out)

        @pl.function(type=pl.FunctionType.InCore)
        def double(self, x: Int, out: pl.Out[Int]) -> Int:
            t = pl.load(x, [0, 0], [N, N])
            return pl.store(pl.add(t, t), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration, device=placement[0])
        def first(self, x: Int, h: pl.Out[Int]) -> Int:
            h = self.double(x, h)
            return h

        @pl.function(type=pl.FunctionType.Orchestration, device=placement[1])
        def second(self, x: Int, h: pl.Out[Int]) -> Int:
            h = self.double(x, h)
            return h

        @pl.function(type=pl.FunctionType.Orchestration, device=placement[2])
        def third(self, x: Int, d: Int, h: pl.Out[Int]) -> Int:
            h = self.divide(x, d, h)
            return h

        @pl.function(type=pl.FunctionType.Orchestration, device=placement[3])
        def fourth(self, x: Int, y: pl.Out[Int]) -> Int:
            y = self.double(x, y)
            return y

        @pl.function(type=pl.FunctionType.Pipeline, microbatches=MB, schedule=schedule)
        def forward(self, x: IntBatch, d: IntBatch, y: pl.Out[IntBatch]) -> IntBatch:
            h0 = pl.create_tensor([N, N], dtype=pl.INT32)
            h0 = self.first(x, h0)
            h1 = pl.create_tensor([N, N], dtype=pl.INT32)
            h1 = self.second(h0, h1)
            h2 = pl.create_tensor([N, N], dtype=pl.INT32)
            h2 = self.third(h1, d, h2)
            y = self.fourth(h2, y)
            return y

    return FourStageDividing


def _failure_told_once(program, microbatch, devices):
    """Runs `program` with a zero divisor in `microbatch`; checks that its
    message tells the root cause first and once, then one line per failing
    device, each fact once. Returns the device lines."""
    compiled = blockpipe.compile(program)
    x = np.ones((MB * N, N), dtype=np.int32)
    d = np.ones_like(x)
    d[microbatch * N + 3, 5] = 0
    with pytest.raises(RuntimeError) as info:
        compiled(x, d, np.zeros_like(x))
    message = str(info.value)
    header, *lines = message.splitlines()
    assert header == f"mesh program failed on {len(lines)} of {devices} devices:", message
    # One line per failing device, each device once.
    named = [line.split(":")[0] for line in lines]
    assert all(line.startswith("  device ") for line in lines), message
    assert len(set(named)) == len(named), message
    # The root cause once, on the first line; the others point up to it.
    assert message.count("a divisor is zero") == 1 and "a divisor is zero" in lines[0], message
    assert message.count("kernel 'divide'") == 1, message
    root = named[0].strip()
    for line in lines[1:]:
        assert f"{root} failed (above)" in line, message
    for line, device in zip(lines, named):
        # Its device, stage and microbatch once, then what failed, named once.
        assert line.count(device.strip()) == 1, line
        assert line.count("stage '") == 1 and line.count("microbatch") == 1, line
        what = re.match(
            r"  device \d+: stage '\w+' \(\d\), microbatch \d: ((kernel|recv into|send of) '[\w.]+')",
            line,
        )
        assert what and line.count(what[1]) == 1, line
        # Counts in plain English, after the cause.
        assert "failed tasks" not in line and "(and " not in line, line
        for noun in ("more tasks", "transfers", "dependent tasks"):
            assert f" 1 {noun} " not in line, line
    return lines


def test_a_failing_stage_is_told_once_then_one_line_per_device():
    lines = _failure_told_once(DividingPipeline, microbatch=2, devices=2)
    assert lines[0].startswith(
        "  device 0: stage 'quotients' (0), microbatch 2: kernel 'divide' block 0: "
        "integer division at test_pipeline.py:"
    ), lines
    assert lines[1].startswith(
        "  device 1: stage 'doubled' (1), microbatch 2: recv into 'doubled.in.2' on channel 0 "
        "from device 0: device 0 failed (above)"
    ), lines


@pytest.mark.parametrize(
    "placement, schedule, failing", [((0, 1, 2, 3), "gpipe", 2), ((0, 1, 0, 1), "interleaved", 0)]
)
def test_a_failing_middle_stage_of_four_is_told_once(placement, schedule, failing):
    program = four_stage_dividing(placement, schedule)
    lines = _failure_told_once(program, microbatch=1, devices=max(placement) + 1)
    assert lines[0].startswith(
        f"  device {failing}: stage 'third' (2), microbatch 1: kernel 'divide' block 0: "
    ), lines


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
