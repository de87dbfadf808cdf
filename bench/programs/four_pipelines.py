"""Four pipeline programs in one file, as in examples/pipeline_mlp.py: the
case `compile` times cold (each program's C++ in no cache)."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))

import pipeline_mlp  # noqa: E402

PROGRAMS = [
    pipeline_mlp.two_stage_mlp(),
    pipeline_mlp.four_stage_mlp(),
    pipeline_mlp.four_stage_mlp((0, 1, 0, 1), schedule="interleaved"),
    pipeline_mlp.four_stage_mlp((3, 2, 1, 0)),
]
