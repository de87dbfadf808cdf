"""The pytest plugin `pypto-test` runs pypto's test files with: the
fixtures and options of pypto's conftest (test_config, test_runner,
--platform, ...), one case per test where pypto has a variant per
platform (blockpipe runs them all on its one target), a case of its own
for each PTOTestCase of a file without test functions, and an outcome per
case that says SKIP for what blockpipe lacks (`outcome.classify`).
"""

from __future__ import annotations

import collections
import inspect
import re
from typing import Dict, List, Optional

import pytest

from blockpipe.pypto import harness, outcome, stubs
from blockpipe.pypto.outcome import FAIL, SKIP

# ----------------------------------------------------------- pypto's conftest

_OPTIONS = {
    "--platform": "a2a3",
    "--device": "0",
    "--strategy": "Default",
    "--memory-planner": "default",
    "--kernels-dir": None,
    "--pypto-log-level": "ERROR",
    "--runtime-log-level": None,
    "--chip-swimlane-level": None,
    "--dump-args": 0,
    "--enable-pmu": 0,
    "--task-max-time": 600,
}
_FLAGS = (
    "--save-kernels",
    "--dump-passes",
    "--codegen-only",
    "--enable-chip-swimlane",
    "--enable-l2-swimlane",
    "--enable-dep-gen",
    "--enable-scope-stats",
    "--analyze-auto-scopes-for-deps",
    "--execute-via-task-submit",
)


def pytest_addoption(parser):
    group = parser.getgroup("pypto", "pypto's system-test options (accepted, unused)")
    for name, default in _OPTIONS.items():
        group.addoption(name, action="store", default=default)
    for name in _FLAGS:
        group.addoption(name, action="store_true", default=False)


def pytest_configure(config):
    for marker in ("platforms(*ids): pypto's platform allowlist", "slow", "device_batch"):
        config.addinivalue_line("markers", marker)


@pytest.fixture(scope="session")
def test_config():
    return stubs.RunConfig(platform="a2a3sim")


@pytest.fixture(scope="session")
def test_runner(test_config):
    return harness.TestRunner(test_config)


@pytest.fixture(scope="session")
def device_ids():
    return [0]


@pytest.fixture
def optimization_strategy():
    return "Default"


@pytest.fixture
def platform():
    return "a2a3sim"


@pytest.fixture
def backend_type():
    return stubs.BackendType.Ascend910B


# ------------------------------------------------------------- collection


class CaseFailed(AssertionError):
    """A PTOTestCase's outputs differ from its compute_expected."""


class CaseItem(pytest.Item):
    """A PTOTestCase of a file that has no test function to run it."""

    def __init__(self, *, case: type, **kwargs):
        super().__init__(**kwargs)
        self.case = case

    def runtest(self):
        result = harness.run_case(self.case())
        self.user_properties.append(("detail", result.error or ""))
        if not result.passed:
            raise CaseFailed(result.error)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, self.name


def _has_tests(module) -> bool:
    return any(
        getattr(value, "__module__", None) == module.__name__
        and (name.startswith("test") or (name.startswith("Test") and inspect.isclass(value)))
        for name, value in vars(module).items()
    )


def pytest_pycollect_makeitem(collector, name, obj):
    if not isinstance(collector, pytest.Module) or not inspect.isclass(obj):
        return None
    module = collector.obj
    if (
        issubclass(obj, harness.PTOTestCase)
        and obj.__module__ == module.__name__
        and not inspect.isabstract(obj)
        and not _has_tests(module)
    ):
        return CaseItem.from_parent(collector, name=name, case=obj)
    return None


_PLATFORM_IN_ID = re.compile(r"\[(.*)\]$")


def label(nodeid: str) -> str:
    """`file.py::Class::test[params]`, without the file's directories and
    without pypto's platform ids among the params."""
    path, _, rest = nodeid.partition("::")
    name = path.rsplit("/", 1)[-1] + (f"::{rest}" if rest else "")
    match = _PLATFORM_IN_ID.search(name)
    if match:
        params = [p for p in match.group(1).split("-") if p not in harness.ALL_PLATFORM_IDS]
        name = name[: match.start()] + (f"[{'-'.join(params)}]" if params else "")
    return name


def _platform_of(item) -> Optional[str]:
    params = getattr(getattr(item, "callspec", None), "params", {})
    value = params.get("platform")
    return value if value in harness.ALL_PLATFORM_IDS else None


def pytest_collection_modifyitems(session, config, items):
    """Keeps one of a test's platform variants (one its `platforms` mark
    allows): blockpipe runs each on the same target."""
    kept: Dict[str, object] = {}
    for item in items:
        allowed = next(item.iter_markers(name="platforms"), None)
        platform = _platform_of(item)
        if allowed is not None and platform is not None and platform not in allowed.args:
            continue
        kept.setdefault(label(item.nodeid), item)
    items[:] = list(kept.values())


# --------------------------------------------------------------- outcomes


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    excinfo = call.excinfo
    if excinfo is None or not report.failed:
        return
    error = excinfo.value
    if isinstance(error, CaseFailed):
        status, reason = FAIL, str(error)
    elif type(error).__name__ == "FixtureLookupError":
        status, reason = FAIL, f"needs fixture {getattr(error, 'argname', '?')}"
    else:
        status, reason = outcome.classify(error)
    report.user_properties.append(("reason", reason))
    if status == SKIP:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {reason}")


class Reporter:
    """Prints one line per case (ok / FAIL / SKIP and why) and counts."""

    def __init__(self, show_tracebacks: bool = False):
        self.show_tracebacks = show_tracebacks
        self.counts = {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0}
        self.lines: List[str] = []
        # (status, reason without its file:line) -> cases
        self.reasons: collections.Counter = collections.Counter()
        self._reports: Dict[str, list] = {}
        self._collect_errors: Dict[str, BaseException] = {}

    def emit(self, status: str, name: str, detail: str = "", longrepr: str = "") -> None:
        text = f"{'ok  ' if status == 'ok' else status} {name}" + (f": {detail}" if detail else "")
        print(text, flush=True)
        if status in (SKIP, FAIL) and detail:
            self.reasons[(status, re.sub(r"(\s*\([^()]*:\d+\))+$", "", detail))] += 1
        if longrepr and self.show_tracebacks:
            print("    " + str(longrepr).replace("\n", "\n    "), flush=True)
        self.lines.append(text)

    # collection
    def pytest_exception_interact(self, node, call, report):
        if isinstance(report, pytest.CollectReport) and call.excinfo is not None:
            self._collect_errors[report.nodeid] = call.excinfo.value

    def pytest_collectreport(self, report):
        if report.passed:
            return
        name = label(report.nodeid) or report.nodeid
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            self._count(SKIP)
            self.emit(SKIP, name, reason.removeprefix("Skipped: "))
            return
        error = self._collect_errors.get(report.nodeid)
        status, reason = (
            outcome.classify(error)
            if error is not None
            else (FAIL, outcome.first_line(report.longreprtext))
        )
        self._count(status)
        self.emit(status, name, f"cannot import ({reason})", report.longreprtext)

    # running
    def pytest_runtest_logreport(self, report):
        self._reports.setdefault(report.nodeid, []).append(report)

    def pytest_runtest_logfinish(self, nodeid, location):
        reports = self._reports.pop(nodeid, [])
        status, detail, longrepr = "ok", "", ""
        for report in reports:
            props = dict(report.user_properties)
            if report.failed:
                status = FAIL
                detail = props.get("reason") or outcome.first_line(report.longreprtext)
                longrepr = report.longreprtext
                break
            if report.skipped:
                if hasattr(report, "wasxfail"):
                    status = "xfail"
                    detail = "expected to fail" + (
                        f": {report.wasxfail}" if report.wasxfail else ""
                    )
                    break
                status = SKIP
                text = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
                detail = props.get("reason") or text.removeprefix("Skipped: ")
                break
            if report.when == "call":
                detail = props.get("detail", "")
        self._count(status)
        self.emit(SKIP if status == "xfail" else status, label(nodeid), detail, longrepr)

    def _count(self, status: str) -> None:
        key = {"ok": "passed", FAIL: "failed", SKIP: "skipped", "xfail": "xfailed"}[status]
        self.counts[key] += 1

    def ranked_reasons(self, top: int = 15) -> List[str]:
        """The SKIP and FAIL reasons, most cases first."""
        return [
            f"{n:5d} {status} {reason}" for (status, reason), n in self.reasons.most_common(top)
        ]

    def summary(self, seconds: float) -> str:
        parts = [f"{n} {k}" for k, n in self.counts.items() if n]
        return f"== {', '.join(parts) or 'no tests ran'} in {seconds:.1f}s =="
