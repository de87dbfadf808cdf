import os
import pathlib

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("BP_BUILD_DIR", REPO_ROOT / "build"))


@pytest.fixture(scope="session")
def bp_opt(build_dir) -> pathlib.Path:
    path = build_dir / "bin" / "bp-opt"
    assert path.exists(), f"{path} is not built"
    return path
