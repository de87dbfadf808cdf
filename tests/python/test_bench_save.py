"""bench/run.py --save: a header naming the machine and commit, then the printed results.

No benchmark is timed here: main() runs a fake Python benchmark."""

import importlib.util
import json
import pathlib
import re
import shlex

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]

RESULTS = [
    {
        "bench": "fake",
        "case": "a",
        "value": 1.5,
        "unit": "GB/s",
        "anchor": "memcpy",
        "anchor_value": 2.0,
        "ratio": 0.75,
        "slots": 4,
    },
    {
        "bench": "fake",
        "case": "b",
        "value": 3,
        "unit": "us/call",
        "anchor": "numpy",
        "anchor_value": 1.0,
        "ratio": 3.0,
        "overhead_us": 2.0,
        "goal": "overhead_us < 10",
    },
]

CPUINFO = """\
processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
flags\t\t: fpu sse sse2 sse4_2 avx avx2 fma f16c bmi2

processor\t: 1
model name\t: AMD EPYC 7B13
flags\t\t: fpu sse sse2 sse4_2 avx avx2 fma f16c bmi2
"""


@pytest.fixture
def run():
    spec = importlib.util.spec_from_file_location("bench_run", REPO_ROOT / "bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_header(header, command):
    assert list(header) == [
        "kind",
        "date",
        "commit",
        "cpu_model",
        "isa",
        "cores",
        "load_avg",
        "command",
        "note",
    ]
    assert header["kind"] == "run"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", header["date"])
    if (REPO_ROOT / ".git").exists():
        assert re.fullmatch(r"[0-9a-f]{7,}(-dirty)?", header["commit"])
    assert isinstance(header["isa"], list)
    assert header["cores"] >= 1
    assert set(header["load_avg"]) == {"start", "end"}
    assert all(len(header["load_avg"][when]) == 3 for when in ("start", "end"))
    assert header["command"] == command


def test_machine_reads_the_model_and_the_isa_flags_that_matter(run, tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(CPUINFO)
    machine = run.machine(cpuinfo)
    assert machine["cpu_model"] == "AMD EPYC 7B13"
    assert machine["isa"] == ["sse4_2", "avx", "avx2", "fma", "f16c"]
    assert run.machine(tmp_path / "absent") == {
        "cpu_model": None,
        "isa": [],
        "cores": machine["cores"],
    }


def test_a_saved_file_is_the_header_then_the_results(run, tmp_path):
    header = run.run_header("bench/run.py --save", (0.51234, 0.25, 0.1), (1.0, 2.0, 3.0), "fake")
    check_header(header, "bench/run.py --save")
    assert header["load_avg"] == {"start": [0.51, 0.25, 0.1], "end": [1.0, 2.0, 3.0]}
    assert header["note"] == "fake"

    path = run.default_save_path(header, tmp_path)
    assert path == tmp_path / f"{header['date']}-{header['commit']}.jsonl"
    run.save(path, header, RESULTS)
    assert run.read_results(path) == (header, RESULTS)
    lines = path.read_text().splitlines()
    assert [json.loads(line) for line in lines] == [header, *RESULTS]
    # A second run on the same day and commit does not overwrite the first.
    assert run.default_save_path(header, tmp_path).name == path.stem + "-2.jsonl"


def test_save_writes_what_main_prints(run, tmp_path, monkeypatch, capsys):
    fake = tmp_path / "fake.py"
    fake.write_text(f"def run(quick):\n    return {RESULTS!r}\n")
    monkeypatch.setattr(run, "python_benchmarks", lambda: {"fake": fake})
    monkeypatch.setattr(run, "RESULTS_DIR", tmp_path / "results")
    build = ["--build-dir", str(tmp_path)]

    out = tmp_path / "out.jsonl"
    assert run.main([*build, "--save", str(out), "fake"]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed == RESULTS
    header, results = run.read_results(out)
    check_header(header, shlex.join(["bench/run.py", *build, "--save", str(out), "fake"]))
    assert results == RESULTS

    # `--save NAME`: the NAME is a benchmark, the file goes to the default place.
    assert run.main([*build, "--save", "fake"]) == 0
    (saved,) = (tmp_path / "results").iterdir()
    assert saved.name == f"{header['date']}-{header['commit']}.jsonl"
    assert run.read_results(saved)[1] == RESULTS
