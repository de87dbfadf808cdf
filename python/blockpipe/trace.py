"""The process's trace: every device of the process records into it when
BLOCKPIPE_TRACE=<path> is set (Chrome trace JSON, for chrome://tracing or
ui.perfetto.dev). It is written at exit and on flush().

Under mpirun each rank writes its own part, `trace.json` becoming
`trace.rank<r>.json`; merge() (`python -m blockpipe trace-merge`) joins the
parts into one timeline with a lane per rank and device, aligned by the
wall-clock time each part started (on several hosts, as good as their
clocks agree).
"""

import json as _json
from typing import Dict, List, Optional, Sequence


def flush(path: Optional[str] = None) -> None:
    """Writes the trace so far to `path` (default: BLOCKPIPE_TRACE's)."""
    from blockpipe import _runtime

    _runtime.trace_flush(path or "")


def json() -> str:
    """The trace so far as Chrome trace JSON text."""
    from blockpipe import _runtime

    return _runtime.trace_json()


# Process ids of a merged trace: rank r's pid p becomes r * _PIDS_PER_RANK + p.
_PIDS_PER_RANK = 1000


def merge(parts: Sequence[str]) -> dict:
    """The ranks' parts (Chrome trace files written under mpirun) as one
    trace: each part's processes named "rank r: ..." and its timestamps
    moved onto a common clock (microseconds since the earliest part
    began)."""
    if not parts:
        raise ValueError("no trace parts to merge")
    loaded: List[dict] = []
    for index, path in enumerate(parts):
        with open(path, encoding="utf-8") as f:
            try:
                trace = _json.load(f)
            except ValueError as err:
                raise ValueError(f"{path}: not a JSON trace ({err})") from None
        other = trace.get("otherData") or {}
        if "start_unix_us" not in other:
            raise ValueError(
                f"{path}: no otherData.start_unix_us (written by an older "
                "blockpipe?): cannot place it on the common clock"
            )
        loaded.append(
            {
                "path": path,
                "rank": int(other.get("rank", index)),
                "host": other.get("host", ""),
                "start": float(other["start_unix_us"]),
                "events": trace.get("traceEvents", []),
            }
        )
    ranks = [part["rank"] for part in loaded]
    if len(set(ranks)) != len(ranks):
        raise ValueError(
            "two parts come from the same rank: "
            + ", ".join(f"{p['path']} (rank {p['rank']})" for p in loaded)
        )
    origin = min(part["start"] for part in loaded)
    events: List[dict] = []
    for part in sorted(loaded, key=lambda p: p["rank"]):
        shift = part["start"] - origin
        base = part["rank"] * _PIDS_PER_RANK
        where = f"rank {part['rank']}" + (f" ({part['host']})" if part["host"] else "")
        for event in part["events"]:
            event = dict(event)
            if "pid" in event:
                event["pid"] = base + int(event["pid"])
            if event.get("ph") == "M":
                if event.get("name") == "process_name":
                    args = dict(event.get("args", {}))
                    args["name"] = f"{where}: {args.get('name', '')}"
                    event["args"] = args
            elif "ts" in event:
                event["ts"] = float(event["ts"]) + shift
            events.append(event)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"start_unix_us": origin, "ranks": sorted(ranks)},
    }


def rank_parts(path: str) -> List[str]:
    """The parts a run with BLOCKPIPE_TRACE=`path` wrote under mpirun
    (`trace.json` -> `trace.rank0.json`, ...), in rank order."""
    import pathlib
    import re

    base = pathlib.Path(path)
    pattern = re.compile(re.escape(base.stem) + r"\.rank(\d+)" + re.escape(base.suffix) + "$")
    found: Dict[int, str] = {}
    for candidate in base.parent.glob(f"{base.stem}.rank*{base.suffix}"):
        m = pattern.match(candidate.name)
        if m:
            found[int(m.group(1))] = str(candidate)
    return [found[r] for r in sorted(found)]
