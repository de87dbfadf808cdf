"""blockpipe.traceplot: stage spans read back from a trace, bubbles, the
picture, and the trace-plot command."""

import json
import subprocess
import sys

import pytest

from blockpipe import traceplot


def gpipe_trace(stages, microbatches, step_us=100.0, calls=1, gap_steps=50, program="mlp", pid0=0):
    """A trace of an ideal GPipe run: stage s computes microbatch k during
    step s + k, on device s, with the transfers as tasks of their own. Each
    of `calls` calls starts `gap_steps` after the last ended and numbers its
    tasks from 1 on every device, as the runtime does."""
    events = []
    for s in range(stages):
        events.append(
            {
                "name": "process_name",
                "ph": "M",
                "pid": pid0 + s,
                "tid": 0,
                "args": {"name": f"{program} device {s} (cpu-sim device {s})"},
            }
        )
    for c in range(calls):
        origin = c * (microbatches + stages + gap_steps)
        for s in range(stages):
            ids = 0
            for k in range(microbatches):
                for name, start in (
                    (f"mlp_layer of stage 'layer{s}' ({s}), microbatch {k}", s + k),
                    (
                        f"send of 'h' (x.py:3) on channel 0 from device {s} to device "
                        f"{s + 1} of stage 'layer{s}' ({s}), microbatch {k}",
                        s + k + 1,
                    ),
                ):
                    ids += 1
                    for ph, ts in (("b", start), ("e", start + 1)):
                        events.append(
                            {
                                "name": f"task {ids} {name}",
                                "cat": "task",
                                "ph": ph,
                                "ts": (origin + ts) * step_us,
                                "pid": pid0 + s,
                                "tid": 0,
                                "id": ids,
                            }
                        )
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def device(s, program="mlp"):
    return f"{program} device {s} (cpu-sim device {s})"


@pytest.mark.parametrize("stages,microbatches", [(2, 1), (2, 8), (4, 4)])
def test_bubbles_of_an_ideal_gpipe_run(stages, microbatches):
    spans = traceplot.stage_spans(gpipe_trace(stages, microbatches))
    assert sorted(spans) == [device(s) for s in range(stages)]
    for s in range(stages):
        got = spans[device(s)]
        # Only the computations: the sends are transfers.
        assert [(x.stage, x.microbatch) for x in got] == [(s, k) for k in range(microbatches)]
        assert got[0].stage_name == f"layer{s}" and got[0].program == "mlp"
    # Each device computes m of the m + p - 1 steps; device s waits s steps
    # for the first microbatch (the fill), then idles p - 1 - s at the end.
    steps = microbatches + stages - 1
    measured = traceplot.shares(spans)
    for s in range(stages):
        assert measured[device(s)].fill == pytest.approx(s / steps)
        assert measured[device(s)].bubble == pytest.approx((stages - 1 - s) / steps)
        assert measured[device(s)].busy == pytest.approx(microbatches / steps)
    assert traceplot.bubbles(spans) == {d: m.bubble for d, m in measured.items()}


def test_overlapping_tasks_count_once():
    trace = gpipe_trace(1, 2)
    # A second task of the same stage and microbatch inside the first.
    trace["traceEvents"] += [
        {
            "name": "task 99 k of stage 'layer0' (0), microbatch 0",
            "cat": "task",
            "ph": ph,
            "ts": ts,
            "pid": 0,
            "tid": 0,
            "id": 99,
        }
        for ph, ts in (("b", 10.0), ("e", 50.0))
    ]
    assert traceplot.bubbles(traceplot.stage_spans(trace)) == {device(0): 0.0}


def test_plot_and_command(tmp_path):
    trace_path = tmp_path / "trace.json"
    trace_path.write_text(json.dumps(gpipe_trace(2, 4)))
    picture = tmp_path / "schedule.png"
    measured = traceplot.plot(str(trace_path), str(picture))
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert measured[device(0)].bubble == pytest.approx(1 / 5)
    assert measured[device(1)].fill == pytest.approx(1 / 5)

    out = tmp_path / "again.svg"
    run = subprocess.run(
        [sys.executable, "-m", "blockpipe", "trace-plot", str(trace_path), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert f"{device(0)}: bubble 0.200, fill 0.000" in run.stdout, run.stdout
    assert f"{device(1)}: bubble 0.000, fill 0.200" in run.stdout, run.stdout
    assert out.read_text().lstrip().startswith("<?xml")


def test_a_trace_without_stages_is_an_error(tmp_path):
    trace_path = tmp_path / "empty.json"
    trace_path.write_text(json.dumps({"traceEvents": []}))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "blockpipe",
            "trace-plot",
            str(trace_path),
            "-o",
            str(tmp_path / "x.png"),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert "the trace has no pipeline stages" in run.stderr


def test_the_time_between_calls_is_nobodys_bubble():
    # Two calls 50 steps apart; each numbers its tasks from 1 again.
    spans = traceplot.stage_spans(gpipe_trace(2, 4, calls=2))
    assert [s.call for s in spans[device(0)]] == [1] * 4 + [2] * 4
    assert list(traceplot.calls(spans)) == [("mlp", 1), ("mlp", 2)]
    measured = traceplot.shares(spans)
    assert measured[device(0)].bubble == pytest.approx(1 / 5)
    assert measured[device(1)].bubble == pytest.approx(0.0)
    assert measured[device(1)].fill == pytest.approx(1 / 5)
    second = traceplot.stage_spans(gpipe_trace(2, 4, calls=2), call=2)
    assert {s.call for d in second.values() for s in d} == {2}
    assert traceplot.calls(second) == {("mlp", 2): (5600.0, 6100.0)}
    with pytest.raises(ValueError, match="no call 3: the trace holds calls 1 to 2"):
        traceplot.stage_spans(gpipe_trace(2, 4, calls=2), call=3)


def test_one_programs_devices_and_a_window():
    trace = gpipe_trace(2, 4)
    trace["traceEvents"] += gpipe_trace(3, 2, program="other", pid0=10)["traceEvents"]
    assert sorted(traceplot.stage_spans(trace, program="other")) == [
        device(s, "other") for s in range(3)
    ]
    with pytest.raises(ValueError, match="no program 'MLP' in the trace; it has mlp, other"):
        traceplot.stage_spans(trace, program="MLP")
    # Steps 1 to 3 of mlp: device 0 computes m1, m2; device 1 m0, m1.
    window = traceplot.stage_spans(trace, program="mlp", start=100.0, end=300.0)
    assert [(s.microbatch, s.start, s.end) for s in window[device(0)]] == [
        (1, 100.0, 200.0),
        (2, 200.0, 300.0),
    ]
    assert [s.microbatch for s in window[device(1)]] == [0, 1]
    assert traceplot.bubbles(window) == {device(0): 0.0, device(1): 0.0}


def test_command_selects_a_program_a_call_and_a_window(tmp_path):
    trace_path = tmp_path / "trace.json"
    trace = gpipe_trace(2, 4, calls=2)
    trace["traceEvents"] += gpipe_trace(3, 2, program="other", pid0=10)["traceEvents"]
    trace_path.write_text(json.dumps(trace))

    def command(*options):
        picture = str(tmp_path / "s.png")
        args = ["-m", "blockpipe", "trace-plot", str(trace_path), "-o", picture, *options]
        return subprocess.run([sys.executable, *args], capture_output=True, text=True)

    run = command("--program", "mlp", "--call", "2", "--from", "5600", "--to", "5900")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "mlp call 2: 5600.0 to 5900.0 us", lines
    assert lines[1].startswith(f"{device(0)}: bubble 0.000, fill 0.000"), lines
    assert lines[2].startswith(f"{device(1)}: bubble 0.000, fill 0.333"), lines
    assert not any("other" in line for line in lines), lines
    run = command("--program", "mlp", "--call", "5")
    assert run.returncode == 1 and "no call 5: the trace holds calls 1 to 2" in run.stderr
    run = command("--from", "1e9")
    assert run.returncode == 1 and "no pipeline stages" in run.stderr


def test_a_real_pipelines_calls_and_fill(tmp_path, monkeypatch):
    """Two calls of a 2-stage pipeline on cpu-sim: two calls found, device 1
    waits for microbatch 0 (its fill), the gap between them counts nowhere."""
    import numpy as np

    import blockpipe
    import blockpipe.language as pl
    from blockpipe import trace

    Act = pl.Tensor[[16, 16], pl.FP32]
    Batch = pl.Tensor[[32, 16], pl.FP32]

    @pl.program
    class TwoStages:
        @pl.function(type=pl.FunctionType.InCore)
        def double(self, x: Act, out: pl.Out[Act]) -> Act:
            t = pl.load(x, [0, 0], [16, 16])
            return pl.store(pl.add(t, t), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration, device=0)
        def stage0(self, x: Act, h: pl.Out[Act]) -> Act:
            h = self.double(x, h)
            return h

        @pl.function(type=pl.FunctionType.Orchestration, device=1)
        def stage1(self, h: Act, y: pl.Out[Act]) -> Act:
            y = self.double(h, y)
            return y

        @pl.function(type=pl.FunctionType.Pipeline, microbatches=2)
        def forward(self, x: Batch, y: pl.Out[Batch]) -> Batch:
            h = pl.create_tensor([16, 16], dtype=pl.FP32)
            h = self.stage0(x, h)
            y = self.stage1(h, y)
            return y

    # Read when the program's devices are made.
    monkeypatch.setenv("BLOCKPIPE_TRACE", str(tmp_path / "trace.json"))
    compiled = blockpipe.compile(TwoStages, quiet=True)
    x = np.ones((32, 16), np.float32)
    y = np.zeros_like(x)
    before = json.loads(trace.json())["traceEvents"]
    compiled(x, y)
    compiled(x, y)
    np.testing.assert_array_equal(y, 4 * x)
    events = json.loads(trace.json())["traceEvents"]
    spans = traceplot.stage_spans({"traceEvents": events}, program="TwoStages")
    # This process's earlier calls of TwoStages (none unless a test ran it).
    earlier = {
        s.call
        for d in traceplot.stage_spans({"traceEvents": before}).values()
        for s in d
        if s.program == "TwoStages"
    }
    windows = traceplot.calls(spans)
    assert len(windows) == len(earlier) + 2, windows
    measured = traceplot.shares(spans)
    stage1 = next(d for d in spans if "device 1" in d.split("(")[0])
    assert measured[stage1].fill > 0
    for shares in measured.values():
        assert shares.busy + shares.fill + shares.bubble == pytest.approx(1.0)
