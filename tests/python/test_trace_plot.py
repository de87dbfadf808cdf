"""blockpipe.traceplot: stage spans read back from a trace, bubbles, the
picture, and the trace-plot command."""

import json
import subprocess
import sys

import pytest

from blockpipe import traceplot


def gpipe_trace(stages, microbatches, step_us=100.0):
    """A trace of an ideal GPipe run: stage s computes microbatch k during
    step s + k, on device s, with the transfers as tasks of their own."""
    events = []
    for s in range(stages):
        events.append(
            {
                "name": "process_name",
                "ph": "M",
                "pid": s,
                "tid": 0,
                "args": {"name": f"mlp device {s}"},
            }
        )
    ids = 0
    for s in range(stages):
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
                name = f"task {ids} {name}"
                events.append(
                    {
                        "name": name,
                        "cat": "task",
                        "ph": "b",
                        "ts": start * step_us,
                        "pid": s,
                        "tid": 0,
                        "id": ids,
                    }
                )
                events.append(
                    {
                        "name": name,
                        "cat": "task",
                        "ph": "e",
                        "ts": (start + 1) * step_us,
                        "pid": s,
                        "tid": 0,
                        "id": ids,
                    }
                )
    return {"traceEvents": events, "displayTimeUnit": "ms"}


@pytest.mark.parametrize("stages,microbatches", [(2, 1), (2, 8), (4, 4)])
def test_bubbles_of_an_ideal_gpipe_run(stages, microbatches):
    spans = traceplot.stage_spans(gpipe_trace(stages, microbatches))
    assert sorted(spans) == [f"mlp device {s}" for s in range(stages)]
    for s in range(stages):
        got = spans[f"mlp device {s}"]
        # Only the computations: the sends are transfers.
        assert [(x.stage, x.microbatch) for x in got] == [(s, k) for k in range(microbatches)]
        assert got[0].stage_name == f"layer{s}"
    # Each device computes m of the m + p - 1 steps.
    ideal = (stages - 1) / (microbatches + stages - 1)
    for bubble in traceplot.bubbles(spans).values():
        assert bubble == pytest.approx(ideal)


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
    assert traceplot.bubbles(traceplot.stage_spans(trace)) == {"mlp device 0": 0.0}


def test_plot_and_command(tmp_path):
    trace_path = tmp_path / "trace.json"
    trace_path.write_text(json.dumps(gpipe_trace(2, 4)))
    picture = tmp_path / "schedule.png"
    measured = traceplot.plot(str(trace_path), str(picture))
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert measured["mlp device 0"] == pytest.approx(1 / 5)

    out = tmp_path / "again.svg"
    run = subprocess.run(
        [sys.executable, "-m", "blockpipe", "trace-plot", str(trace_path), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "mlp device 1: bubble 0.200" in run.stdout
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
