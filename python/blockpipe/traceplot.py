"""Pictures of a pipeline schedule, from a Chrome trace (blockpipe.trace).

Every task a pipeline runs is named after its stage and microbatch ("task 7
k of stage 'mlp1' (1), microbatch 3"), under the pid of the device it ran
on, named after its program ("MLP device 1 (cpu-sim device 1)"). Each call
of a program numbers its tasks afresh, so a task id seen again on a device
starts its next call. `stage_spans()` reads the spans back, for one
program, one call or a window of time if asked; `shares()` measures, per
device and within each call only (the time between calls is nobody's
bubble), the share it computed, the pipeline fill (the wait before the
first microbatch reaches it: warm-up, not bubble) and the bubble (the rest
of its idle time); `plot()` draws one row per device with a bar per stage
and microbatch (the Gantt chart of the schedule) and the fill hatched.

    python -m blockpipe trace-plot TRACE.json -o schedule.png \\
        [--program MLP] [--call N] [--from US] [--to US]
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Tuple, Union

_SCOPE = re.compile(r" of stage '(?P<name>[^']*)' \((?P<stage>\d+)\), microbatch (?P<mb>\d+)$")
# The transfers between stages are tasks too; a stage's work is the rest.
_TRANSFER = re.compile(r"^task \d+ (send of|recv into) ")
# "MLP device 1 (cpu-sim device 1)", "MLP (cpu-sim device 0)", after
# trace-merge "rank 1 (host): MLP device 1 (cpu-sim device 1)".
_PROGRAM = re.compile(
    r"^(?:rank \d+(?: \([^()]*\))?: )?(?P<program>.+?)(?: device \d+)? \([^()]*\)$"
)


@dataclass(frozen=True)
class Span:
    """One task of a stage on a microbatch: microseconds (the trace's
    unit), in the `call`-th call (from 1) of `program`."""

    device: str
    start: float
    end: float
    stage: int
    stage_name: str
    microbatch: int
    program: str = ""
    call: int = 1


@dataclass(frozen=True)
class Shares:
    """Of a device's time within the calls it ran (the time between calls
    left out): the share it computed, waited for the first microbatch to
    reach it (the pipeline fill), and otherwise idled (the bubble)."""

    busy: float
    fill: float
    bubble: float


def _load(trace: Union[str, dict]) -> dict:
    if isinstance(trace, dict):
        return trace
    with open(trace, encoding="utf-8") as f:
        return json.load(f)


def program_of(device: str) -> str:
    """The program a device's process name says it ran."""
    match = _PROGRAM.match(device)
    return match["program"] if match else device


def stage_spans(
    trace: Union[str, dict],
    program: Optional[str] = None,
    call: Optional[int] = None,
    start: Optional[float] = None,
    end: Optional[float] = None,
) -> Dict[str, List[Span]]:
    """The compute tasks of pipeline stages in `trace` (a path or the parsed
    JSON), by device name, in start order: of `program` only, of its
    `call`-th call only (from 1), and cut to [`start`, `end`] (microseconds)
    when given. Raises ValueError naming what there is when `program` or
    `call` is not in the trace."""
    spans = _all_spans(trace)
    if program is not None:
        programs = sorted({s.program for device in spans.values() for s in device})
        if program not in programs:
            raise ValueError(
                f"no program '{program}' in the trace; it has {', '.join(programs) or 'none'}"
            )
        spans = {d: v for d, v in spans.items() if v and v[0].program == program}
    if call is not None:
        last = max((s.call for device in spans.values() for s in device), default=0)
        if not 1 <= call <= last:
            raise ValueError(f"no call {call}: the trace holds calls 1 to {last}")
        spans = {d: [s for s in v if s.call == call] for d, v in spans.items()}
    if start is not None or end is not None:
        low = float("-inf") if start is None else start
        high = float("inf") if end is None else end
        spans = {
            d: [replace(s, start=max(s.start, low), end=min(s.end, high)) for s in v]
            for d, v in spans.items()
        }
        spans = {d: [s for s in v if s.start < s.end] for d, v in spans.items()}
    return {d: v for d, v in spans.items() if v}


def _all_spans(trace: Union[str, dict]) -> Dict[str, List[Span]]:
    root = _load(trace)
    events = root["traceEvents"] if isinstance(root, dict) else root
    names = {
        e["pid"]: e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    tasks = [e for e in events if e.get("cat") == "task" and e.get("ph") in ("b", "e")]
    tasks.sort(key=lambda e: (e["ts"], e["ph"] == "b"))
    begins: Dict[tuple, Tuple[float, int]] = {}
    calls: Dict[object, int] = {}
    seen: Dict[object, set] = {}
    spans: Dict[str, List[Span]] = {}
    for event in tasks:
        pid, key = event["pid"], (event["pid"], event["id"])
        if event["ph"] == "b":
            # Task ids start afresh with each call: one seen again on this
            # device begins the next call.
            if event["id"] in seen.setdefault(pid, set()):
                calls[pid] = calls.get(pid, 1) + 1
                seen[pid] = set()
            seen[pid].add(event["id"])
            begins[key] = (event["ts"], calls.get(pid, 1))
            continue
        name = event.get("name", "")
        scope = _SCOPE.search(name)
        if key not in begins:
            continue
        begun, call = begins.pop(key)
        if not scope or _TRANSFER.match(name):
            continue
        device = names.get(pid, f"pid {pid}")
        spans.setdefault(device, []).append(
            Span(
                device,
                begun,
                event["ts"],
                int(scope["stage"]),
                scope["name"],
                int(scope["mb"]),
                program_of(device),
                call,
            )
        )
    for device_spans in spans.values():
        device_spans.sort(key=lambda s: (s.start, s.end))
    return spans


def calls(spans: Dict[str, List[Span]]) -> Dict[Tuple[str, int], Tuple[float, float]]:
    """Each (program, call)'s time: its first start to its last end over the
    program's devices."""
    windows: Dict[Tuple[str, int], Tuple[float, float]] = {}
    for device_spans in spans.values():
        for s in device_spans:
            low, high = windows.get((s.program, s.call), (s.start, s.end))
            windows[(s.program, s.call)] = (min(low, s.start), max(high, s.end))
    return dict(sorted(windows.items()))


def _busy(spans: List[Span]) -> float:
    """The time covered by `spans` (overlaps counted once)."""
    busy, end = 0.0, float("-inf")
    for span in sorted(spans, key=lambda s: s.start):
        if span.end <= end:
            continue
        busy += span.end - max(span.start, end)
        end = span.end
    return busy


def fills(spans: Dict[str, List[Span]]) -> Dict[str, List[Tuple[float, float]]]:
    """For each device, per call, the pipeline fill: from the call's start
    to the device's first computation in it."""
    windows = calls(spans)
    found: Dict[str, List[Tuple[float, float]]] = {}
    for device, device_spans in spans.items():
        firsts: Dict[int, float] = {}
        for s in device_spans:
            firsts[s.call] = min(firsts.get(s.call, s.start), s.start)
        found[device] = [
            (windows[(device_spans[0].program, c)][0], first)
            for c, first in sorted(firsts.items())
            if first > windows[(device_spans[0].program, c)][0]
        ]
    return found


def shares(spans: Dict[str, List[Span]]) -> Dict[str, Shares]:
    """For each device, its Shares of the calls it ran."""
    windows = calls(spans)
    filled = fills(spans)
    measured = {}
    for device, device_spans in spans.items():
        ran = {s.call for s in device_spans}
        total = sum(
            high - low
            for (p, c), (low, high) in windows.items()
            if p == device_spans[0].program and c in ran
        )
        if total <= 0:
            measured[device] = Shares(1.0, 0.0, 0.0)
            continue
        busy = _busy(device_spans) / total
        fill = sum(high - low for low, high in filled[device]) / total
        measured[device] = Shares(busy, fill, max(1.0 - busy - fill, 0.0))
    return measured


def bubbles(spans: Dict[str, List[Span]]) -> Dict[str, float]:
    """For each device, the share of its calls in which it computed nothing
    after the first microbatch reached it (the fill is not bubble)."""
    return {device: s.bubble for device, s in shares(spans).items()}


def plot(
    trace: Union[str, dict],
    output: str,
    title: Optional[str] = None,
    program: Optional[str] = None,
    call: Optional[int] = None,
    start: Optional[float] = None,
    end: Optional[float] = None,
) -> Dict[str, Shares]:
    """Draws the schedule in `trace` (of `program`, its `call`-th call, the
    window [`start`, `end`] in microseconds: see stage_spans) to `output`
    (PNG, SVG, PDF: by its suffix) and returns each device's Shares.
    Raises ValueError when nothing selected has pipeline stages."""
    spans = stage_spans(trace, program, call, start, end)
    if not spans:
        raise ValueError(
            "the trace has no pipeline stages (tasks of \"stage '<name>' (s), "
            'microbatch k")'
            + (" in the selection" if (program, call, start, end) != (None,) * 4 else "")
            + "; record one with BLOCKPIPE_TRACE=<path>"
        )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = shares(spans)
    filled = fills(spans)
    devices = sorted(spans)
    microbatches = max(s.microbatch for device_spans in spans.values() for s in device_spans) + 1
    colors = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(10, 1 + 0.6 * len(devices)))
    for row, device in enumerate(devices):
        for low, high in filled[device]:
            ax.broken_barh(
                [(low / 1000.0, (high - low) / 1000.0)],
                (row - 0.3, 0.6),
                facecolors="#eeeeee",
                edgecolor="#999999",
                hatch="//",
                linewidth=0.3,
            )
            _label(ax, low, high, row, "fill")
        for span in spans[device]:
            width = max((span.end - span.start) / 1000.0, 1e-6)
            ax.broken_barh(
                [(span.start / 1000.0, width)],
                (row - 0.4, 0.8),
                facecolors=colors(span.microbatch % 20),
                edgecolor="black",
                linewidth=0.3,
            )
            _label(ax, span.start, span.end, row, f"s{span.stage} m{span.microbatch}")
    for low, _ in calls(spans).values():
        ax.axvline(low / 1000.0, color="#999999", linestyle=":", linewidth=0.6)
    ax.set_yticks(range(len(devices)))
    ax.set_yticklabels(
        [f"{d}\nbubble {measured[d].bubble:.0%}, fill {measured[d].fill:.0%}" for d in devices],
        fontsize=8,
    )
    ax.invert_yaxis()
    ax.set_xlabel("ms (trace time)")
    ax.set_title(title or f"pipeline schedule: {len(devices)} devices, {microbatches} microbatches")
    fig.tight_layout()
    fig.savefig(output)
    plt.close(fig)
    return measured


def _label(ax, start: float, end: float, row: int, text: str) -> None:
    ax.text((start + end) / 2000.0, row, text, ha="center", va="center", fontsize=7, clip_on=True)


def summary(trace: Union[str, dict], measured: Dict[str, Shares], **selection) -> List[str]:
    """The lines trace-plot prints: each call's time, then each device's
    shares."""
    lines = [
        f"{program} call {number}: {low:.1f} to {high:.1f} us"
        for (program, number), (low, high) in calls(stage_spans(trace, **selection)).items()
    ]
    lines += [
        f"{device}: bubble {s.bubble:.3f}, fill {s.fill:.3f} (pipeline warm-up), busy {s.busy:.3f}"
        for device, s in sorted(measured.items())
    ]
    return lines


__all__ = [
    "Shares",
    "Span",
    "bubbles",
    "calls",
    "fills",
    "plot",
    "shares",
    "stage_spans",
    "summary",
]
