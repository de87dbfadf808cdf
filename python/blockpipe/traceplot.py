"""Pictures of a pipeline schedule, from a Chrome trace (blockpipe.trace).

Every task a pipeline runs is named after its stage and microbatch ("task 7
k of stage 'mlp1' (1), microbatch 3"), under the pid of the device it ran
on. `stage_spans()` reads them back; `bubbles()` measures, per device, the
share of the whole run it spent idle; `plot()` draws one row per device
with a bar per stage and microbatch (the Gantt chart of the schedule).

    python -m blockpipe trace-plot TRACE.json -o schedule.png
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Union

_SCOPE = re.compile(r" of stage '(?P<name>[^']*)' \((?P<stage>\d+)\), microbatch (?P<mb>\d+)$")
# The transfers between stages are tasks too; a stage's work is the rest.
_TRANSFER = re.compile(r"^task \d+ (send of|recv into) ")


@dataclass(frozen=True)
class Span:
    """One task of a stage on a microbatch: microseconds since the trace
    began."""

    device: str
    start: float
    end: float
    stage: int
    stage_name: str
    microbatch: int


def _load(trace: Union[str, dict]) -> dict:
    if isinstance(trace, dict):
        return trace
    with open(trace, encoding="utf-8") as f:
        return json.load(f)


def stage_spans(trace: Union[str, dict]) -> Dict[str, List[Span]]:
    """The compute tasks of pipeline stages in `trace` (a path or the parsed
    JSON), by device name, in start order."""
    root = _load(trace)
    events = root["traceEvents"] if isinstance(root, dict) else root
    names = {
        e["pid"]: e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    begins = {}
    spans: Dict[str, List[Span]] = {}
    for event in events:
        if event.get("cat") != "task" or event.get("ph") not in ("b", "e"):
            continue
        name = event.get("name", "")
        scope = _SCOPE.search(name)
        if not scope or _TRANSFER.match(name):
            continue
        key = (event["pid"], event["id"])
        if event["ph"] == "b":
            begins[key] = event["ts"]
            continue
        if key not in begins:
            continue
        device = names.get(event["pid"], f"pid {event['pid']}")
        spans.setdefault(device, []).append(
            Span(
                device,
                begins.pop(key),
                event["ts"],
                int(scope["stage"]),
                scope["name"],
                int(scope["mb"]),
            )
        )
    for device_spans in spans.values():
        device_spans.sort(key=lambda s: (s.start, s.end))
    return spans


def _busy(spans: List[Span]) -> float:
    """The time covered by `spans` (overlaps counted once)."""
    busy, end = 0.0, float("-inf")
    for span in sorted(spans, key=lambda s: s.start):
        if span.end <= end:
            continue
        busy += span.end - max(span.start, end)
        end = span.end
    return busy


def bubbles(spans: Dict[str, List[Span]]) -> Dict[str, float]:
    """For each device, the share of the run (first start to last end over
    all devices) in which it computed nothing."""
    everything = [s for device_spans in spans.values() for s in device_spans]
    if not everything:
        return {}
    total = max(s.end for s in everything) - min(s.start for s in everything)
    if total <= 0:
        return {device: 0.0 for device in spans}
    return {device: 1.0 - _busy(device_spans) / total for device, device_spans in spans.items()}


def plot(trace: Union[str, dict], output: str, title: Optional[str] = None) -> Dict[str, float]:
    """Draws the schedule in `trace` to `output` (PNG, SVG, PDF: by its
    suffix) and returns the bubbles. Raises ValueError when the trace has
    no pipeline stages."""
    spans = stage_spans(trace)
    if not spans:
        raise ValueError(
            "the trace has no pipeline stages (tasks of \"stage '<name>' (s), "
            'microbatch k"); record one with BLOCKPIPE_TRACE=<path>'
        )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = bubbles(spans)
    devices = sorted(spans)
    origin = min(s.start for device_spans in spans.values() for s in device_spans)
    microbatches = max(s.microbatch for device_spans in spans.values() for s in device_spans) + 1
    colors = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(10, 1 + 0.6 * len(devices)))
    for row, device in enumerate(devices):
        for span in spans[device]:
            start = (span.start - origin) / 1000.0
            width = max((span.end - span.start) / 1000.0, 1e-6)
            ax.broken_barh(
                [(start, width)],
                (row - 0.4, 0.8),
                facecolors=colors(span.microbatch % 20),
                edgecolor="black",
                linewidth=0.3,
            )
            ax.text(
                start + width / 2,
                row,
                f"s{span.stage} m{span.microbatch}",
                ha="center",
                va="center",
                fontsize=7,
                clip_on=True,
            )
    ax.set_yticks(range(len(devices)))
    ax.set_yticklabels([f"{d}\nbubble {measured[d]:.0%}" for d in devices], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ms")
    ax.set_title(title or f"pipeline schedule: {len(devices)} devices, {microbatches} microbatches")
    fig.tight_layout()
    fig.savefig(output)
    plt.close(fig)
    return measured


__all__ = ["Span", "stage_spans", "bubbles", "plot"]
