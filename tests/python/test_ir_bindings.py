"""blockpipe._core: parsing and verifying bp IR from Python."""

import pathlib
import subprocess
import sys
import textwrap

import pytest

import blockpipe
from blockpipe import CompileError

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = REPO_ROOT / "examples" / "ir" / "two_stage_pipeline.mlir"


def test_good_ir_verifies_and_round_trips():
    text = blockpipe.verify_ir(EXAMPLE.read_text(), str(EXAMPLE))
    assert "bp.launch @down_proj" in text
    assert "source_target_pairs = dense<[[0, 1]]>" in text
    # The canonical form is a fixed point.
    assert blockpipe.verify_ir(text) == text


def test_verifier_error_names_file_line_and_column():
    ir = textwrap.dedent(
        """\
        func.func @k() attributes {bp.kind = #bp<kind aic>} {
          bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)

          bp.initialize_pipe id(1) dir_mask(c2v|x2y) slot_size(1024)
          return
        }
        """
    )
    with pytest.raises(CompileError) as info:
        blockpipe.verify_ir(ir, "kernel.mlir")
    err = info.value
    assert (err.file, err.line, err.column) == ("kernel.mlir", 4, 41)
    assert "expected a pipe direction: c2v, v2c or c2v|v2c" in err.message
    assert str(err).startswith("kernel.mlir:4:41: error: ")


def test_syntax_error_is_a_compile_error():
    with pytest.raises(CompileError) as info:
        blockpipe.verify_ir("func.func @f( {\n", "broken.mlir")
    assert info.value.file == "broken.mlir"
    assert info.value.line == 1


def test_p2p_error_line():
    ir = textwrap.dedent(
        """\
        module attributes {bp.num_devices = 2 : i64} {
          func.func @o(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
            bp.send %t {channel_handle = #bp.channel<handle = 1, type = 1>,
                        source_target_pairs = dense<[[0, 1], [1, 1]]> : tensor<2x2xi64>} : !bp.tensor<16xf32>
            return
          }
        }
        """
    )
    with pytest.raises(CompileError) as info:
        blockpipe.verify_ir(ir, "p2p.mlir")
    assert info.value.line == 3
    assert "target 1 appears twice in source_target_pairs" in info.value.message


def test_every_diagnostic_is_kept():
    # An unknown callee and a wrong argument count: the first error leads.
    ir = textwrap.dedent(
        """\
        func.func @o(%t: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
          bp.launch @missing(%t) core_num(2) : (!bp.tensor<16xf32>) -> ()
          return
        }
        """
    )
    with pytest.raises(CompileError) as info:
        blockpipe.verify_ir(ir, "o.mlir")
    assert info.value.diagnostics
    assert all(d.file == "o.mlir" for d in info.value.diagnostics)
    assert info.value.diagnostics[0].severity == "error"
    assert "which is not a function in this module" in info.value.diagnostics[0].message


def test_package_imports_from_any_directory(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", "import blockpipe, blockpipe._core; print(blockpipe.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip().endswith("__init__.py")
